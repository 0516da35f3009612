import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

@Suite("Auth, origins and limits on a real socket")
struct LiveAuthTests {
    static let admin = "admin-token-0123456789"
    static let viewer = "viewer-token-0123456789"

    static var configuration: IsletConfiguration {
        var configuration = IsletConfiguration.testing()
        configuration.adminToken = Self.admin
        configuration.viewerToken = Self.viewer
        configuration.allowedOrigins = ["http://localhost:8080"]
        return configuration
    }

    @Test("with tokens: mutations need the admin token, reads either; health and files stay open")
    func http() async throws {
        try await withRunningServer(Self.configuration) { (server: RunningServer) async throws in
            let port = server.port
            let bearer = { (token: String) in [("Authorization", "Bearer \(token)")] }
            #expect(try TestHTTP.state(port: port).status == 401)
            #expect(try TestHTTP.state(port: port).headers["www-authenticate"] == "Bearer")
            #expect(try TestHTTP.state(port: port, headers: bearer("wrong-token-0123456789")).status == 401)
            #expect(try TestHTTP.state(port: port, headers: bearer(Self.viewer)).status == 200)
            #expect(try TestHTTP.state(port: port, headers: bearer(Self.admin)).status == 200)
            #expect(try TestHTTP.commands(port: port, [Fixture.device]).status == 401)
            #expect(try TestHTTP.commands(port: port, [Fixture.device], headers: bearer(Self.viewer)).status == 403)
            #expect(try TestHTTP.commands(port: port, [Fixture.device], headers: bearer(Self.admin)).status == 200)
            #expect(try TestHTTP.request(port: port, "/healthz").status == 200)
            #expect(try TestHTTP.request(port: port, "/").status == 200)
            #expect(try TestHTTP.request(port: port, "/metrics").status == 401)
        }
    }

    @Test("the stream takes Authorization or ?token=; a refused one gets an error and 1008, no hello")
    func stream() async throws {
        try await withRunningServer(Self.configuration) { (server: RunningServer) async throws in
            let port = server.port
            let none = try TestWebSocketClient.connect(port: port)
            let refusal = try none.readJSON()
            #expect(refusal["type"] == "error")
            #expect(refusal["error"]?["code"] == "unauthorized")
            #expect(try none.readClose() == 1008)
            let bad = try TestWebSocketClient.connect(port: port, path: "/v1/stream?token=nope")
            #expect(try bad.readJSON()["error"]?["code"] == "unauthorized")
            #expect(try bad.readClose() == 1008)
            let byQuery = try TestWebSocketClient.connect(port: port, path: "/v1/stream?token=\(Self.viewer)")
            #expect(try byQuery.readJSON()["type"] == "hello")
            try byQuery.subscribe("s", path: "/clock")
            #expect(try byQuery.read(until: "snapshot")["sub"] == "s")
            try byQuery.command("c1", [Fixture.device])
            let forbidden = try byQuery.read(until: "error")
            #expect(forbidden["id"] == "c1")
            #expect(forbidden["error"]?["code"] == "forbidden")
            let byHeader = try TestWebSocketClient.connect(
                port: port, headers: [("Authorization", "Bearer \(Self.admin)")])
            #expect(try byHeader.readJSON()["type"] == "hello")
            let ack = try byHeader.commit("c2", [Fixture.device])
            #expect(ack["rev"] == 1)
        }
    }

    @Test("Origin is checked against the allow-list; a handshake without Origin is accepted")
    func origins() async throws {
        try await withRunningServer(Self.configuration) { (server: RunningServer) async throws in
            let port = server.port
            let auth = [("Authorization", "Bearer \(Self.viewer)")]
            let evil = try TestWebSocketClient.connect(port: port, headers: auth + [("Origin", "http://evil.example")])
            let refusal = try evil.readJSON()
            #expect(refusal["error"]?["code"] == "forbidden")
            #expect(try evil.readClose() == 1008)
            let good = try TestWebSocketClient.connect(
                port: port, headers: auth + [("Origin", "http://localhost:8080")])
            #expect(try good.readJSON()["type"] == "hello")
            let tool = try TestWebSocketClient.connect(port: port, headers: auth)
            #expect(try tool.readJSON()["type"] == "hello")
        }
    }

    @Test("stream messages: subscription limits and errors, command acks and errors, rate limit")
    func streamMessages() async throws {
        var configuration = IsletConfiguration.testing()
        configuration.limits.subscriptionsPerConnection = 3
        configuration.rateLimit = .init(commandsPerSecond: 0.001, burst: 4)
        try await withRunningServer(configuration) { server in
            let client = try TestWebSocketClient.connect(port: server.port)
            _ = try client.readJSON()
            func expectError(_ text: String, code: String, field: String?, id: JSONValue) throws {
                try client.send(text: text)
                let error = try client.read(until: "error")
                #expect(error["error"]?["code"] == .string(code), "\(text) → \(error)")
                #expect(error["error"]?["field"] == field.map { .string($0) }, "\(text) → \(error)")
                #expect(error["id"] == id)
            }
            for n in 0..<3 { try client.subscribe("s\(n)", path: "/devices/d\(n)") }
            try expectError(#"{"op":"subscribe","id":"s0","path":"/x"}"#, code: "conflict", field: "/id", id: "s0")
            try expectError(
                #"{"op":"subscribe","id":"s9","path":"/x"}"#, code: "limit_exceeded", field: "/id", id: "s9")
            try expectError(
                #"{"op":"subscribe","id":"p","path":"x"}"#, code: "invalid_argument", field: "/path", id: "p")
            try expectError(#"{"op":"subscribe","id":7,"path":""}"#, code: "invalid_argument", field: "/id", id: 7)
            try expectError(
                #"{"op":"subscribe","id":"q","path":"","since":{"rev":-1,"epoch":"e"}}"#, code: "invalid_argument",
                field: "/since/rev", id: "q")
            try expectError(
                #"{"op":"subscribe","id":"q","path":"","extra":1}"#, code: "invalid_argument", field: "/extra", id: "q")
            try expectError(#"{"op":"unsubscribe","id":"nope"}"#, code: "not_found", field: "/id", id: "nope")
            try expectError(
                #"{"op":"command","id":"c","commands":{}}"#, code: "invalid_argument", field: "/commands", id: "c")
            try expectError(
                #"{"op":"command","id":"c","commands":[{"type":"nope"}]}"#, code: "invalid_argument",
                field: "/commands/0/type", id: "c")
            try expectError(
                #"{"op":"command","id":"c","commands":[]}"#, code: "invalid_argument", field: "/commands", id: "c")
            try client.send(json: ["op": "unsubscribe", "id": "s1"])
            #expect(try client.read(until: "unsubscribed")["sub"] == "s1")
            let ack = try client.commit("ok", [Fixture.pauseClock])
            #expect(ack["results"]?.arrayValue?.count == 1)
            try expectError(
                #"{"op":"command","id":"r","commands":[{"type":"device.upsert","id":"a"},{"type":"device.upsert","id":"b"}]}"#,
                code: "rate_limited", field: nil, id: "r")
        }
    }
}
