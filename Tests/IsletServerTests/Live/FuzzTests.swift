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
    static let seeds: [UInt64] = [11, 12, 13]

    @Test("mutated POST /v1/commands bodies and resource bodies", arguments: Self.seeds)
    func httpBodies(seed: UInt64) async throws {
        try await withRunningServer { server in
            let port = server.port
            _ = try TestHTTP.commands(port: port, Fixture.world)
            var mutator = JSONMutator(random: SplitMix64(seed: seed))
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
            var mutator = JSONMutator(random: SplitMix64(seed: seed))
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
                    // The fence is an (empty, refused) command: its reply follows every earlier
                    // command's result, which a ping's pong, answered at once, would not.
                    try client.send(text: #"{"op":"command","id":"fence","commands":[]}"#)
                    var refused = false
                    while true {
                        let reply = try client.readJSON()
                        #expect(reply["type"]?.stringValue != nil)
                        if reply["type"] == "error", reply["id"] == "fence" { break }
                        if reply["type"] == "error" {
                            #expect(reply["error"]?["code"]?.stringValue != nil)
                            refused = true
                        }
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
