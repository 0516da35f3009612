import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

@Suite("HTTP/2 over TLS with a real HTTP/2 client")
struct LiveHTTP2Tests {
    @Test(
        "Apple's example pushes over HTTP/2 (httpx + h2) get APNs replies; the REST API answers over HTTP/2 too",
        .enabled(
            if: PythonTools.available || PythonTools.required,
            "needs .venv with httpx and h2: run scripts/bootstrap --test (scripts/test does)"))
    func applesExamples() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python) (scripts/bootstrap --test)")
        let (cert, key) = try TestCertificate.files()
        var configuration = IsletConfiguration.testing()
        configuration.tls = IsletConfiguration.TLS(certificatePath: cert, keyPath: key, port: 0)
        try await withRunningServer(configuration) { server in
            let securePort = try #require(server.securePort)
            let results = try TestHTTP.commands(
                port: server.port,
                [
                    Fixture.pauseClock, Fixture.device, Fixture.app, Fixture.request("a1", pushToken: true),
                    ["type": "config.set", "values": ["maxActivitiesPerApp": 10]],
                ]
            ).json()["results"]!
            let activityToken = try #require(results.arrayValue?[3]["pushToken"]?.stringValue)
            let startToken = try #require(results.arrayValue?[2]["pushToStartToken"]?.stringValue)
            let (status, output) = try runProcess(
                PythonTools.python,
                [
                    PackagePaths.root + "/scripts/apns_h2_check.py", "--port", String(securePort), "--activity-token",
                    activityToken, "--start-token", startToken, "--topic", "coffee.push-type.liveactivity",
                ])
            #expect(status == 0, "\(output)")
            #expect(output.contains("0 failed"), "\(output)")
        }
    }

    @Test(
        "a real provider over HTTP/2: aioapns with its own ES256 key, channel management, a broadcast and a widget push with PyJWT tokens, and each provider-token refusal",
        .enabled(
            if: PythonTools.available || PythonTools.required,
            "needs .venv with aioapns, httpx and h2: run scripts/bootstrap --test (scripts/test does)"))
    func realProvider() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python) (scripts/bootstrap --test)")
        let (cert, key) = try TestCertificate.files()
        let admin = "admin-token-0123456789"
        var configuration = IsletConfiguration.testing()
        configuration.tls = IsletConfiguration.TLS(certificatePath: cert, keyPath: key, port: 0)
        configuration.adminToken = admin
        try await withRunningServer(configuration) { server in
            let securePort = try #require(server.securePort)
            let reply = try TestHTTP.commands(
                port: server.port,
                [
                    Fixture.pauseClock, Fixture.device, Fixture.app, Fixture.request("a1", pushToken: true),
                    ["type": "config.set", "values": ["maxActivitiesPerApp": 10]],
                    ["type": "widget.upsert", "id": "w1", "app": "coffee", "kind": "weather", "family": "systemSmall", "device": "d1"],
                ], headers: [("Authorization", "Bearer \(admin)")])
            #expect(reply.status == 200, "\(reply.text)")
            let results = try #require(try reply.json()["results"])
            let (status, output) = try runProcess(
                PythonTools.python,
                [
                    PackagePaths.root + "/scripts/apns_client_check.py", "--port", String(securePort), "--ca", cert,
                    "--admin-token", admin,
                    "--activity-token", try #require(results[pointer: "/3/pushToken"]?.stringValue),
                    "--start-token", try #require(results[pointer: "/2/pushToStartToken"]?.stringValue),
                    "--widget-token", try #require(results[pointer: "/2/widgetPushToken"]?.stringValue),
                ])
            #expect(status == 0, "\(output)")
            #expect(output.contains("0 failed"), "\(output)")
        }
    }

    @Test("a bad certificate path is a startup error")
    func badCertificate() async throws {
        var configuration = IsletConfiguration.testing()
        configuration.tls = IsletConfiguration.TLS(
            certificatePath: "/nonexistent.pem", keyPath: "/nonexistent.key", port: 0)
        await #expect(throws: (any Error).self) {
            try await withRunningServer(configuration) { _ in }
        }
    }

    @Test("the HTTP/2 timeouts reach the transport: the TLS handshake timeout and --idle-timeout")
    func timeoutsReachTheTransport() throws {
        var configuration = IsletConfiguration.testing()
        configuration.tls = IsletConfiguration.TLS(
            certificatePath: "c.pem", keyPath: "k.pem", port: 0, handshakeTimeout: .milliseconds(1500))
        configuration.stream.idleTimeoutSeconds = 45
        let tls = try #require(IsletServer.transportConfiguration(for: configuration).tls)
        #expect(tls.handshakeTimeout == .milliseconds(1500))
        #expect(tls.idleTimeout == .seconds(45))
        for refused in [Duration.zero, .seconds(3601)] {
            configuration.tls?.handshakeTimeout = refused
            #expect(throws: ConfigurationError.self) { try configuration.validate() }
        }
    }

    @Test("slowloris before TLS, end to end: a connection that sends nothing is closed at the handshake timeout")
    func handshakeTimeout() async throws {
        let (cert, key) = try TestCertificate.files()
        var configuration = IsletConfiguration.testing()
        configuration.tls = IsletConfiguration.TLS(
            certificatePath: cert, keyPath: key, port: 0, handshakeTimeout: .milliseconds(200))
        try await withRunningServer(configuration) { server in
            let silent = try TestSocket.connect(port: try #require(server.securePort))
            #expect(try silent.read(timeout: .seconds(5)) == [])
        }
    }
}
