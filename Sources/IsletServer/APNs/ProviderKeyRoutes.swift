import IsletCore
import IsletTransport

/// The provider keys of a simulation: `PUT|DELETE /v1/apns/keys/{keyId}` and `GET /v1/apns/keys`
/// (also under `/v1/simulations/{simulation}/…`). What Apple's developer account does for APNs
/// keys, with the public half only: the private key stays with the provider.
extension IsletServer {
    func addProviderKeyRoutes() {
        self.addPerSimulation(.GET, "/v1/apns/keys") {
            (server: IsletServer, simulation: Simulation, context: RouteContext) throws(APIError) -> RouteReply in
            server.whenPublished(context, in: simulation) { simulation throws(APIError) in
                let keys = simulation.live.engine.providerKeys.map(\.summary)
                let body: JSONValue = ["keys": .array(keys), "rev": .number(Double(simulation.live.publishedRev))]
                return .json200(body.encoded)
            }
        }
        self.addPerSimulation(.PUT, "/v1/apns/keys/{keyId}", body: .json, access: .mutate) {
            (server: IsletServer, simulation: Simulation, context: RouteContext) throws(APIError) -> RouteReply in
            try server.submitKeyCommand(try Self.keyPut(context), context, in: simulation)
        }
        self.addPerSimulation(.DELETE, "/v1/apns/keys/{keyId}", access: .mutate) {
            (server: IsletServer, simulation: Simulation, context: RouteContext) throws(APIError) -> RouteReply in
            let command: JSONValue = ["type": "apns.keyDelete", "keyId": .string(context.parameters["keyId"] ?? "")]
            return try server.submitKeyCommand(command, context, in: simulation)
        }
    }

    /// `apns.keyPut` from the body `{"teamId", "publicKey"}`, once OpenSSL has read the key: the
    /// command carries OpenSSL's canonical PEM, so a key in the log is one the ingress can use.
    private static func keyPut(_ context: RouteContext) throws(APIError) -> JSONValue {
        guard case .object(let body)? = context.json else {
            throw APIError(.invalidArgument, "the body must be {\"teamId\", \"publicKey\"}", field: .root)
        }
        if let unknown = body.keys.first(where: { $0 != "teamId" && $0 != "publicKey" }) {
            throw APIError(.invalidArgument, "unknown member \"\(unknown)\"", field: JSONPointer(tokens: [unknown]))
        }
        guard let pem = body["publicKey"]?.stringValue else {
            throw APIError(.invalidArgument, "\"publicKey\" is required: the key's PUBLIC KEY PEM", field: "/publicKey")
        }
        guard pem.utf8.count <= APNsKeyPut.maxPublicKeyBytes else {
            throw APIError(
                .invalidArgument, "longer than \(APNsKeyPut.maxPublicKeyBytes) bytes", field: "/publicKey")
        }
        let key: ES256PublicKey
        do {
            key = try ES256PublicKey(pem: pem)
        } catch {
            throw APIError(
                .invalidArgument,
                "\(error.message); send the public key (openssl pkey -in AuthKey.p8 -pubout), never the .p8",
                field: "/publicKey")
        }
        return [
            "type": "apns.keyPut", "keyId": .string(context.parameters["keyId"] ?? ""),
            "teamId": body["teamId"] ?? .null, "publicKey": .string(key.pemText),
        ]
    }

    /// Submits one key command; the reply is `{"result", "rev"}` and an error's field points into
    /// the body (`/teamId`), not into a batch.
    private func submitKeyCommand(_ command: JSONValue, _ context: RouteContext, in simulation: Simulation)
        throws(APIError) -> RouteReply
    {
        let prefix = JSONPointer(tokens: ["commands", "0"])
        return try self.submit([command], context, in: simulation) { revision in
            .json200(resultBody(rev: revision.rev, result: revision.results.first ?? [:]))
        } mapError: { error in
            var mapped = error
            if let field = error.field, field.isWithin(prefix) {
                mapped.field = JSONPointer(tokens: Array(field.tokens.dropFirst(2)))
            }
            return mapped
        }
    }
}
