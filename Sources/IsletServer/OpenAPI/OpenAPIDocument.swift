public import IsletCore
import IsletTransport

/// The OpenAPI 3.1 description of the REST surface, served at `GET /v1/openapi.json`.
///
/// `openapi.json` beside this file is the one source, embedded in the binary (SwiftPM
/// `embedInCode`, so the server needs no resource files at run time). Operations marked
/// `x-islet-per-simulation` are written once and served twice, as the router registers them
/// (`IsletServer.perSimulation`); `OpenAPIRouteTests` fails when a route and the document differ.
public enum OpenAPIDocument {
    /// The served document, with every per-simulation operation also under `/v1/simulations/{simulation}`.
    public static let value: JSONValue = expand(source)

    /// The served bytes, encoded once.
    static let encoded: [UInt8] = value.encoded

    private static var source: JSONValue {
        do { return try JSONParser().parse(PackageResources.openapi_json) } catch {
            preconditionFailure("openapi.json does not parse: \(error.message)")
        }
    }

    /// Every `(method, path)` the document describes, methods in upper case.
    public static var operations: [(method: String, path: String)] {
        guard case .object(let paths)? = value["paths"] else { return [] }
        return paths.members.flatMap { path in
            (path.value.objectValue?.keys ?? []).map { (method: $0.uppercased(), path: path.key) }
        }
    }

    private static func expand(_ document: JSONValue) -> JSONValue {
        guard case .object(var root) = document, case .object(let paths)? = root["paths"] else { return document }
        var expanded = paths
        for member in paths.members {
            guard case .object(let operations) = member.value else { continue }
            var copies = JSONObject()
            for operation in operations.members where operation.value["x-islet-per-simulation"] == true {
                copies[operation.key] = prefixed(operation.value, key: operation.key)
            }
            if !copies.isEmpty { expanded[IsletServer.perSimulation(member.key)] = .object(copies) }
        }
        root["paths"] = .object(expanded)
        return .object(root)
    }

    /// An operation's copy for any simulation: a new operation id and the `simulation` parameter.
    private static func prefixed(_ operation: JSONValue, key: String) -> JSONValue {
        guard case .object(var copy) = operation else { return operation }
        if case .string(let id)? = copy["operationId"] { copy["operationId"] = .string("simulation_" + id) }
        let parameter: JSONValue = [
            "name": "simulation", "in": "path", "required": true,
            "schema": ["$ref": "#/components/schemas/SimulationId"],
        ]
        copy["parameters"] = .array([parameter] + (copy["parameters"]?.arrayValue ?? []))
        return .object(copy)
    }
}

extension IsletServer {
    /// `GET /v1/openapi.json`: open like `/healthz`, since it describes the API and holds no state.
    func addOpenAPIRoute() {
        self.router.add(.GET, "/v1/openapi.json", access: .open) { (_: RouteContext) throws(APIError) -> RouteReply in
            .now(.json200(OpenAPIDocument.encoded))
        }
    }
}
