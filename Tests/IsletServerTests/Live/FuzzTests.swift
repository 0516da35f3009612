import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

/// Thousands of mutated JSON bodies, stream messages and frames: the server never crashes,
/// every reply is a structured error (or a success for what is still valid), and a refused
/// request changes nothing.
@Suite("Fuzzing the API with mutated input")
struct FuzzTests {
    /// Mutations of a valid JSON text: wrong types, deep nesting, huge numbers, invalid UTF-8,
    /// truncation, stray bytes.
    struct Mutator {
        var random: SplitMix64

        mutating func mutate(_ text: [UInt8]) -> [UInt8] {
            var bytes = text
            switch Int.random(in: 0..<10, using: &self.random) {
            case 0: bytes = Array(bytes.prefix(Int.random(in: 0..<max(1, bytes.count), using: &self.random)))
            case 1: bytes.insert(UInt8.random(in: 0...255, using: &self.random), at: self.position(bytes))
            case 2: bytes.insert(contentsOf: [0xC3, 0x28, 0xFF], at: self.position(bytes))  // invalid UTF-8
            case 3:
                let depth = Int.random(in: 50...3000, using: &self.random)
                bytes =
                    Array("{\"commands\":".utf8) + Array(repeating: UInt8(ascii: "["), count: depth)
                    + Array(repeating: UInt8(ascii: "]"), count: depth) + [UInt8(ascii: "}")]
            case 4:
                bytes = self.replaceValue(
                    bytes,
                    with: [
                        "1e400", "-1e999", "123456789012345678901234567890", "1.5e308", "-0", "0.0000000000000000001",
                    ])
            case 5:
                bytes = self.replaceValue(bytes, with: ["[]", "{}", "null", "true", "\"\"", "[[[]]]", "{\"a\":{}}"])
            case 6:
                bytes = self.replaceValue(
                    bytes,
                    with: [
                        "\"\\ud800\"", "\"\\u0000\"", "\"\u{202E}\"", "\"" + String(repeating: "x", count: 5000) + "\"",
                    ])
            case 7: if !bytes.isEmpty { bytes.remove(at: self.position(bytes) % bytes.count) }
            case 8: bytes = Array(bytes.reversed())
            default:
                let key = Array("\"dup\":1,\"dup\":2,".utf8)
                if let brace = bytes.firstIndex(of: UInt8(ascii: "{")) { bytes.insert(contentsOf: key, at: brace + 1) }
            }
            return bytes
        }

        private mutating func position(_ bytes: [UInt8]) -> Int { Int.random(in: 0...bytes.count, using: &self.random) }

        /// Replaces the value after a random `:` with one of `values`.
        private mutating func replaceValue(_ bytes: [UInt8], with values: [String]) -> [UInt8] {
            let colons = bytes.indices.filter { bytes[$0] == UInt8(ascii: ":") }
            guard let colon = colons.randomElement(using: &self.random) else { return bytes }
            var end = colon + 1
            var depth = 0
            var inString = false
            while end < bytes.count {
                let byte = bytes[end]
                if inString {
                    if byte == UInt8(ascii: "\\") { end += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
                } else if byte == UInt8(ascii: "\"") {
                    inString = true
                } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    depth += 1
                } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                    if depth == 0 { break }
                    depth -= 1
                } else if byte == UInt8(ascii: ","), depth == 0 {
                    break
                }
                end += 1
            }
            return Array(bytes[...colon]) + Array(values.randomElement(using: &self.random)!.utf8)
                + Array(bytes[min(end, bytes.count)...])
        }
    }

    static let seeds: [UInt64] = [11, 12, 13]

    @Test("mutated POST /v1/commands bodies and resource bodies", arguments: Self.seeds)
    func httpBodies(seed: UInt64) async throws {
        try await withRunningServer { server in
            let port = server.port
            _ = try TestHTTP.commands(port: port, Fixture.world)
            var mutator = Mutator(random: SplitMix64(seed: seed))
            var commands = RandomCommands(seed: seed)
            let routes = [
                ("POST", "/v1/commands"), ("PATCH", "/v1/activities/a1"), ("PUT", "/v1/devices/d1"),
                ("POST", "/v1/activities"),
            ]
            var connection = try TestHTTPConnection(port: port)
            for index in 0..<700 {
                let valid = JSONValue.object(["commands": .array(commands.batch(now: Simulation.start))]).encoded
                let (method, path) = routes[index % routes.count]
                let body = mutator.mutate(
                    path == "/v1/commands"
                        ? valid
                        : Array(
                            #"{"content":{"state":{"status":"x"}},"model":"iphone-15-pro","app":"coffee","attributesType":"T"}"#
                                .utf8))
                let before = try await server.withServer { $0.position.revision }
                let reply: TestHTTPResponse
                do {
                    reply = try connection.request(
                        method, path, headers: [("Content-Type", "application/json")], body: body)
                } catch {
                    connection = try TestHTTPConnection(port: port)
                    continue
                }
                if reply.headers["connection"] == "close" { connection = try TestHTTPConnection(port: port) }
                if reply.status == 200 { continue }
                #expect(reply.errorCode != nil, "\(reply.status) \(reply.text)")
                #expect(reply.status >= 400 && reply.status < 500, "\(reply.text)")
                let after = try await server.withServer { $0.position.revision }
                #expect(after == before, "a refused request changed the state")
            }
            #expect(try TestHTTP.request(port: port, "/healthz").status == 200)
        }
    }

    @Test("mutated stream messages and malformed frames", arguments: Self.seeds)
    func streamFrames(seed: UInt64) async throws {
        try await withRunningServer { server in
            let port = server.port
            _ = try TestHTTP.commands(port: port, Fixture.world)
            var mutator = Mutator(random: SplitMix64(seed: seed))
            var random = SplitMix64(seed: seed ^ 0xFF)
            var commands = RandomCommands(seed: seed)
            var client = try TestWebSocketClient.connect(port: port)
            _ = try client.readJSON()
            let templates: [JSONValue] = [
                ["op": "subscribe", "id": "s", "path": "/activities/a1", "since": ["epoch": "e", "rev": 3]],
                ["op": "unsubscribe", "id": "s"], ["op": "ping", "id": ["n": 1]],
            ]
            for index in 0..<700 {
                let message: JSONValue =
                    index % 2 == 0
                    ? [
                        "op": "command", "id": .number(Double(index)),
                        "commands": .array(commands.batch(now: Simulation.start)),
                    ]
                    : templates[index % templates.count]
                let before = try await server.withServer { $0.position.revision }
                let bytes = mutator.mutate(message.encoded)
                do {
                    try client.send(opcode: TestWebSocketClient.Frame.text, payload: bytes)
                    try client.send(text: #"{"op":"ping","id":"fence"}"#)
                    var refused = false
                    while true {
                        let reply = try client.readJSON()
                        #expect(reply["type"]?.stringValue != nil)
                        if reply["type"] == "error" {
                            #expect(reply["error"]?["code"]?.stringValue != nil)
                            refused = true
                        }
                        if reply["type"] == "pong", reply["id"] == "fence" { break }
                    }
                    if refused {
                        let after = try await server.withServer { $0.position.revision }
                        #expect(after == before || message["op"] != "command")
                    }
                } catch {
                    // Invalid UTF-8 closes with 1007; reconnect and go on.
                    client = try TestWebSocketClient.connect(port: port)
                    _ = try client.readJSON()
                }
                if index % 50 == 0 {
                    // A malformed frame: truncated, unmasked, reserved bits, a bad opcode, or an
                    // oversize control frame. The server closes that connection, and lives.
                    let abuser = try TestWebSocketClient.connect(port: port)
                    _ = try abuser.readJSON()
                    switch Int.random(in: 0..<5, using: &random) {
                    case 0:
                        let frame = TestWebSocketClient.encodeFrame(
                            opcode: 1, payload: Array(#"{"op":"ping"}"#.utf8), fin: true, masked: true, rsv: 0)
                        try abuser.connection.socket.write(Array(frame.prefix(frame.count / 2)))
                    case 1: try abuser.send(opcode: 1, payload: Array(#"{"op":"ping"}"#.utf8), masked: false)
                    case 2: try abuser.send(opcode: 1, payload: Array(#"{"op":"ping"}"#.utf8), rsv: 3)
                    case 3: try abuser.send(opcode: 0xB, payload: [1, 2, 3])
                    default: try abuser.send(opcode: 0x9, payload: Array(repeating: 7, count: 200))
                    }
                    abuser.drop()
                    #expect(try TestHTTP.request(port: port, "/healthz").status == 200)
                }
            }
            let state = try TestHTTP.state(port: port)
            #expect(state.status == 200)
        }
    }
}
