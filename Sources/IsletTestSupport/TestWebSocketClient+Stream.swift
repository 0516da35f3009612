public import IsletCore

extension TestWebSocketClient {
    /// Sends a JSON message.
    public func send(json: JSONValue) throws { try self.send(text: json.encodedString) }

    /// Sends `subscribe` (in `simulation`, when given).
    public func subscribe(
        _ id: String, path: String, since: (epoch: String, rev: UInt64)? = nil, simulation: String? = nil
    ) throws {
        var message: JSONObject = ["op": "subscribe", "id": .string(id), "path": .string(path)]
        if let simulation { message["simulation"] = .string(simulation) }
        if let since { message["since"] = ["epoch": .string(since.epoch), "rev": .number(Double(since.rev))] }
        try self.send(json: .object(message))
    }

    /// Sends a `command` with one batch (to `simulation`, when given).
    public func command(_ id: String, _ commands: [JSONValue], simulation: String? = nil) throws {
        var message: JSONObject = ["op": "command", "id": .string(id), "commands": .array(commands)]
        if let simulation { message["simulation"] = .string(simulation) }
        try self.send(json: .object(message))
    }

    /// Reads messages until one of `type` arrives (and for `ack`/`error`/`pong`, with `id`),
    /// handing every message read, that one included, to `each`.
    @discardableResult
    public func read(
        until type: String, id: JSONValue? = nil, _ each: (JSONValue) throws -> Void = { _ in }
    ) throws -> JSONValue {
        while true {
            let message = try self.readJSON()
            try each(message)
            if message["type"]?.stringValue == type, id == nil || message["id"] == id || message["sub"] == id {
                return message
            }
        }
    }

    /// Sends a command batch and waits for its `ack` (throws on an `error` for it).
    @discardableResult
    public func commit(
        _ id: String, _ commands: [JSONValue], simulation: String? = nil, _ each: (JSONValue) throws -> Void = { _ in }
    ) throws
        -> JSONValue
    {
        try self.command(id, commands, simulation: simulation)
        while true {
            let message = try self.readJSON()
            try each(message)
            guard message["id"] == .string(id) else { continue }
            if message["type"] == "ack" { return message }
            if message["type"] == "error" { throw TestClientError("command \(id) refused: \(message)") }
        }
    }
}

extension TestHTTP {
    /// `GET /v1/state?path=…` as JSON (the whole reply: epoch, rev, path, value), of `simulation`
    /// when given.
    public static func state(
        port: Int, path: String = "", simulation: String? = nil, headers: [(String, String)] = []
    ) throws -> TestHTTPResponse {
        try self.request(
            port: port, self.route("/v1/state?path=\(percentEncoded(path))", in: simulation), headers: headers)
    }

    /// `POST /v1/commands` with `commands` (to `simulation` when given).
    public static func commands(
        port: Int, _ commands: [JSONValue], simulation: String? = nil, headers: [(String, String)] = []
    ) throws
        -> TestHTTPResponse
    {
        let body = JSONValue.object(["commands": .array(commands)]).encoded
        return try self.request(
            port: port, "POST", self.route("/v1/commands", in: simulation),
            headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    /// `POST /v1/simulations` with `body`.
    public static func createSimulation(port: Int, _ body: JSONValue = [:]) throws -> TestHTTPResponse {
        try self.request(
            port: port, "POST", "/v1/simulations", headers: [("Content-Type", "application/json")], body: body.encoded)
    }

    /// `route` (which starts with `/v1/`) under `/v1/simulations/{simulation}` when one is given.
    public static func route(_ route: String, in simulation: String?) -> String {
        guard let simulation else { return route }
        return "/v1/simulations/\(simulation)/" + route.dropFirst("/v1/".count)
    }
}

/// Percent-encodes everything but unreserved characters and `/`.
public func percentEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"), UInt8(ascii: "/"):
            out.append(Character(UnicodeScalar(byte)))
        default:
            out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
    }
    return out
}
