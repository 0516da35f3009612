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
            let padded = [("Authorization", "Bearer \(Self.admin) \t")]
            #expect(try TestHTTP.state(port: port, headers: padded).status == 200, "trailing whitespace is not the value's")
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

    @Test("without tokens: a foreign Host (DNS rebinding) is refused, and so are a foreign Origin's stream and mutations")
    func browserSafeDefaults() async throws {
        try await withRunningServer { server in
            let port = server.port
            let own = "127.0.0.1:\(port)"
            let json = [("Content-Type", "application/json")]
            let body = Array(#"{"commands":[{"type":"device.upsert","id":"d1","model":"iphone-15-pro"}]}"#.utf8)
            func post(_ headers: [(String, String)]) throws -> TestHTTPResponse {
                try TestHTTP.request(port: port, "POST", "/v1/commands", headers: json + headers, body: body)
            }
            // DNS rebinding: a page of evil.example resolved to 127.0.0.1 sends Host: evil.example.
            let rebound = try TestHTTP.request(port: port, "/v1/state", headers: [("Host", "evil.example:\(port)")])
            #expect(rebound.status == 403 && rebound.errorCode == "forbidden", "\(rebound.text)")
            #expect(try post([("Host", "evil.example")]).status == 403)
            for host in [own, "localhost:\(port)", "[::1]:\(port)", "LOCALHOST"] {
                #expect(try TestHTTP.request(port: port, "/v1/state", headers: [("Host", host)]).status == 200, "\(host)")
            }
            // CSRF: another site's page posting to the local server.
            #expect(try post([("Host", own), ("Origin", "http://evil.example")]).status == 403)
            #expect(try post([("Host", own), ("Origin", "null")]).status == 403)
            #expect(try post([("Host", own), ("Origin", "http://\(own)")]).status == 200, "the dashboard's own page")
            #expect(try post([("Host", own)]).status == 200, "no Origin: not a browser (curl, a harness)")
            let read = try TestHTTP.request(port: port, "/v1/state", headers: [("Host", own), ("Origin", "http://evil.example")])
            #expect(read.status == 200, "a cross-origin read is the browser's CORS business, not a change")
            // Cross-site WebSocket hijacking.
            let hijack = try TestWebSocketClient.connect(port: port, headers: [("Host", own), ("Origin", "http://evil.example")])
            #expect(try hijack.readJSON()[pointer: "/error/code"] == "forbidden")
            #expect(try hijack.readClose() == 1008)
            let page = try TestWebSocketClient.connect(port: port, headers: [("Host", own), ("Origin", "http://\(own)")])
            #expect(try page.readJSON()["type"] == "hello")
            #expect(try TestHTTP.state(port: port, path: "/devices").json()["value"]?["d1"] != nil, "the accepted posts applied")
        }
    }

    @Test("--allowed-host and --allowed-origin admit a proxy's name and another dashboard")
    func allowedHostsAndOrigins() async throws {
        var configuration = IsletConfiguration.testing()
        configuration.allowedHosts = ["islet.example.test"]
        configuration.allowedOrigins = ["https://dash.example.test"]
        try await withRunningServer(configuration) { server in
            let port = server.port
            #expect(try TestHTTP.request(port: port, "/v1/state", headers: [("Host", "islet.example.test")]).status == 200)
            #expect(try TestHTTP.request(port: port, "/v1/state", headers: [("Host", "other.example.test")]).status == 403)
            let dash = try TestWebSocketClient.connect(
                port: port, headers: [("Host", "islet.example.test"), ("Origin", "https://dash.example.test")])
            #expect(try dash.readJSON()["type"] == "hello")
            let own = try TestWebSocketClient.connect(
                port: port, headers: [("Host", "islet.example.test"), ("Origin", "http://islet.example.test")])
            #expect(try own.readJSON()["type"] == "hello", "the server's own pages stay allowed")
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
