import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

/// Issue 18: `--max-connections` bounds what the server serves at once; a connection beyond it
/// is told so in a form its client understands, and its place returns when one closes.
@Suite("The connection cap on a live server", .serialized)
struct LiveConnectionCapTests {
    static func configuration(cap: Int) -> IsletConfiguration {
        var configuration = IsletConfiguration.testing()
        configuration.limits.connections = cap
        return configuration
    }

    /// Waits (at most 5 s, on events the loop reports) until the server serves `count` connections.
    static func serving(_ count: Int, _ server: RunningServer) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while try await server.withServer({ $0.transport.statistics.openConnections }) != count {
            guard ContinuousClock.now < deadline else { throw TestClientError("never served \(count) connections") }
            await Task.yield()
        }
    }

    @Test("beyond --max-connections a request is answered 503 unavailable with Retry-After and closed; a freed place serves again")
    func http() async throws {
        try await withRunningServer(Self.configuration(cap: 2)) { server in
            let first = try TestHTTPConnection(port: server.port)
            let second = try TestHTTPConnection(port: server.port)
            #expect(try first.request("GET", "/healthz").status == 200)
            #expect(try second.request("GET", "/healthz").status == 200)
            let third = try TestHTTPConnection(port: server.port)
            let refused = try third.request(
                "POST", "/v1/commands", headers: [("Content-Type", "application/json")],
                body: Array(#"{"commands":[{"type":"app.upsert","id":"coffee"}]}"#.utf8))
            #expect(refused.status == 503)
            #expect(refused.errorCode == "unavailable")
            #expect(refused.headers["retry-after"] == "1")
            #expect(refused.headers["connection"] == "close")
            #expect(try third.isClosedByServer())
            #expect(try first.request("GET", "/v1/state?path=/apps/coffee").status == 404)
            second.socket.close()
            try await Self.serving(1, server)
            let fourth = try TestHTTPConnection(port: server.port)
            #expect(try fourth.request("GET", "/healthz").status == 200)
            // An APNs sender gets APNs' own answer.
            let apns = try TestHTTP.request(port: server.port, "POST", "/3/device/abcd", body: Array("{}".utf8))
            #expect(apns.status == 503)
            #expect(try apns.json() == ["reason": "ServiceUnavailable"])
            #expect(apns.headers["retry-after"] == "1")
        }
    }

    @Test("a connection counts from its accept, before it sends anything")
    func idleConnectionsCount() async throws {
        try await withRunningServer(Self.configuration(cap: 1)) { server in
            let idle = try TestSocket.connect(port: server.port)
            try await Self.serving(1, server)
            #expect(try TestHTTP.request(port: server.port, "/healthz").status == 503)
            idle.close()
            try await Self.serving(0, server)
            #expect(try TestHTTP.request(port: server.port, "/healthz").status == 200)
        }
    }

    @Test("while 128 connections wait unserved, a new one is closed at accept, and counted")
    func flood() async throws {
        try await withRunningServer(Self.configuration(cap: 1)) { server in
            let waiting = try (0...128).map { _ in try TestSocket.connect(port: server.port) }
            let deadline = ContinuousClock.now + .seconds(5)
            while try await server.withServer({ $0.transport.statistics.connectionsAccepted }) < 129 {
                guard ContinuousClock.now < deadline else { throw TestClientError("the 129 were never accepted") }
                await Task.yield()
            }
            let closed = try TestSocket.connect(port: server.port)
            #expect(try closed.read().isEmpty)
            for socket in waiting { socket.close() }
            try await Self.serving(0, server)
            let metrics = try TestHTTP.request(port: server.port, "/metrics").text
            #expect(metrics.contains(#"islet_limit_refusals_total{limit="connections"} 1"#), "\(metrics)")
        }
    }

    @Test("a stream beyond --max-connections gets an unavailable error and close code 1013, and counts in /metrics")
    func stream() async throws {
        try await withRunningServer(Self.configuration(cap: 1)) { server in
            let served = try TestWebSocketClient.connect(port: server.port)
            #expect(try served.readJSON()["type"] == "hello")
            let refused = try TestWebSocketClient.connect(port: server.port)
            let error = try refused.readJSON()
            #expect(error["type"] == "error")
            #expect(error[pointer: "/error/code"] == "unavailable")
            #expect(try refused.readClose() == 1013)
            #expect(try TestHTTP.request(port: server.port, "/healthz").status == 503)
            served.drop()
            try await Self.serving(0, server)
            let metrics = try TestHTTP.request(port: server.port, "/metrics").text
            #expect(metrics.contains(#"islet_limit_refusals_total{limit="connections"} 2"#))
            #expect(metrics.contains(#"islet_http_requests_total{route="connection_refused",status="503"} 1"#))
        }
    }

    /// Two HTTP/2 clients (httpx + h2): the first takes the only place; the second is answered
    /// 503; once the first closes, the second's connection is served (a client that keeps its
    /// HTTP/2 connection and retries is not refused forever).
    static let http2Clients = """
        import sys, time, httpx
        url = f"https://127.0.0.1:{sys.argv[1]}/healthz"
        first = httpx.Client(http2=True, verify=False)
        second = httpx.Client(http2=True, verify=False)
        print("first", first.get(url).status_code)
        refused = second.get(url)
        print("second", refused.http_version, refused.status_code, refused.headers.get("retry-after"), refused.json()["error"]["code"])
        first.close()
        deadline = time.monotonic() + 5
        while (status := second.get(url).status_code) != 200 and time.monotonic() < deadline:
            pass
        print("second again", status)
        """

    @Test(
        "HTTP/2 connections count too; a refused one is served once a place is free",
        .enabled(if: PythonTools.available || PythonTools.required, "needs .venv with httpx and h2"))
    func http2() async throws {
        let (cert, key) = try TestCertificate.files()
        var configuration = Self.configuration(cap: 1)
        configuration.tls = IsletConfiguration.TLS(certificatePath: cert, keyPath: key, port: 0)
        try await withRunningServer(configuration) { server in
            let securePort = try #require(server.securePort)
            let (status, output) = try runProcess(PythonTools.python, ["-c", Self.http2Clients, String(securePort)])
            #expect(status == 0, "\(output)")
            #expect(output.contains("first 200"), "\(output)")
            #expect(output.contains("second HTTP/2 503 1 unavailable"), "\(output)")
            #expect(output.contains("second again 200"), "\(output)")
        }
    }

    @Test("--max-connections must be from 1 to 1,000,000")
    func validation() {
        #expect(throws: ConfigurationError.self) { try Self.configuration(cap: 0).validate() }
        #expect(throws: Never.self) { try Self.configuration(cap: 1).validate() }
    }
}
