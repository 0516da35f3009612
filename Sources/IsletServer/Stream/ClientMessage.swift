import IsletCore
import IsletTransport

/// A client's stream message, parsed and checked (API.md "Client → server").
enum ClientMessage: Equatable {
    /// Where a resuming subscription left off.
    struct Since: Equatable {
        var epoch: String
        var rev: UInt64
    }

    case ping(id: JSONValue)
    case subscribe(id: String, simulation: String, path: JSONPointer, since: Since?)
    case unsubscribe(id: String)
    case command(id: JSONValue, simulation: String, commands: [JSONValue])

    /// The simulation a subscribe or command names.
    var simulation: String? {
        switch self {
        case .subscribe(_, let simulation, _, _), .command(_, let simulation, _): simulation
        case .ping, .unsubscribe: nil
        }
    }

    /// A message that could not be read: the error to answer with and the `id` to echo.
    struct Refusal: Error, Equatable {
        var error: APIError
        var id: JSONValue
    }

    private static let parser = JSONParser.input

    /// Reads one message.
    static func parse(_ message: WebSocketMessage) -> Result<ClientMessage, Refusal> {
        guard message.isText else {
            return .failure(
                Refusal(
                    error: APIError(.invalidArgument, "binary messages are not accepted: send JSON text"), id: .null))
        }
        let value: JSONValue
        do throws(APIError) { value = try Self.parser.parse(message.bytes) } catch {
            return .failure(Refusal(error: error, id: .null))
        }
        guard case .object(let object) = value else {
            return .failure(
                Refusal(error: APIError(.invalidArgument, "a message must be a JSON object", field: .root), id: .null))
        }
        let id = object["id"] ?? .null
        do throws(APIError) {
            return .success(try self.read(object, id: id))
        } catch {
            return .failure(Refusal(error: error, id: id))
        }
    }

    private static func read(_ object: JSONObject, id: JSONValue) throws(APIError) -> ClientMessage {
        guard let op = object["op"]?.stringValue else {
            throw APIError(.invalidArgument, "\"op\" must be a string", field: "/op")
        }
        switch op {
        case "ping":
            try self.rejectUnknown(object, ["op", "id"])
            return .ping(id: id)
        case "subscribe":
            try self.rejectUnknown(object, ["op", "id", "simulation", "path", "since"])
            return .subscribe(
                id: try self.subscriptionID(id), simulation: try self.simulation(object), path: try self.path(object),
                since: try self.since(object))
        case "unsubscribe":
            try self.rejectUnknown(object, ["op", "id"])
            return .unsubscribe(id: try self.subscriptionID(id))
        case "command":
            try self.rejectUnknown(object, ["op", "id", "simulation", "commands"])
            guard case .array(let commands)? = object["commands"] else {
                throw APIError(.invalidArgument, "\"commands\" must be an array of command objects", field: "/commands")
            }
            return .command(id: id, simulation: try self.simulation(object), commands: commands)
        default:
            throw APIError(.invalidArgument, "unknown op \"\(op)\"", field: "/op")
        }
    }

    private static func rejectUnknown(
        _ object: JSONObject, _ known: Set<String>, under prefix: JSONPointer = .root
    )
        throws(APIError)
    {
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw APIError(.invalidArgument, "unknown member \"\(unknown)\"", field: prefix.appending(unknown))
        }
    }

    private static func subscriptionID(_ id: JSONValue) throws(APIError) -> String {
        guard let text = id.stringValue, !text.isEmpty, text.utf8.count <= 128 else {
            throw APIError(.invalidArgument, "a subscription \"id\" is a string of 1 to 128 bytes", field: "/id")
        }
        return text
    }

    /// The optional `simulation` member: `default` when absent.
    private static func simulation(_ object: JSONObject) throws(APIError) -> String {
        guard let value = object["simulation"] else { return SimulationName.default }
        guard let name = value.stringValue else {
            throw APIError(.invalidArgument, "\"simulation\" must be a simulation id", field: "/simulation")
        }
        try SimulationName.validate(name, field: "/simulation")
        return name
    }

    private static func path(_ object: JSONObject) throws(APIError) -> JSONPointer {
        guard let text = object["path"]?.stringValue else {
            throw APIError(
                .invalidArgument, "\"path\" must be a JSON Pointer string (\"\" for everything)", field: "/path")
        }
        do throws(APIError) { return try JSONPointer(parsing: text) } catch {
            throw APIError(.invalidArgument, error.message, field: "/path")
        }
    }

    private static func since(_ object: JSONObject) throws(APIError) -> Since? {
        guard let value = object["since"] else { return nil }
        guard case .object(let since) = value else {
            throw APIError(.invalidArgument, "\"since\" must be {\"epoch\": string, \"rev\": integer}", field: "/since")
        }
        try self.rejectUnknown(since, ["epoch", "rev"], under: "/since")
        guard let epoch = since["epoch"]?.stringValue else {
            throw APIError(.invalidArgument, "\"since.epoch\" must be a string", field: "/since/epoch")
        }
        guard case .number(let number)? = since["rev"], let rev = number.uint64Value else {
            throw APIError(.invalidArgument, "\"since.rev\" must be a revision number", field: "/since/rev")
        }
        return Since(epoch: epoch, rev: rev)
    }
}
