import IsletCore
import IsletServer
import IsletTestSupport
import Testing

@Suite("Slow consumers on a real socket")
struct LiveSlowConsumerTests {
    static func configuration(timeout: Duration = .seconds(30)) -> IsletConfiguration {
        var configuration = IsletConfiguration.testing()
        configuration.limits.outboundBytes = 64 * 1024
        configuration.stream.slowConsumerTimeout = timeout
        return configuration
    }

    /// An update whose 3.5 KB content state differs each time (so each patch carries it).
    static func bigUpdate(_ n: Int) -> JSONValue {
        let filler = String(repeating: String(n % 10), count: 3500)
        return [
            "type": "activity.update", "id": "a1",
            "content": ["state": ["status": .string("step \(n)"), "filler": .string(filler)]],
        ]
    }

    @Test("a client that stops reading gets resync and fresh snapshots once it drains; others stay on time")
    func resyncAfterDrain() async throws {
        let time = SettableTimeSource(now: try Instant(rfc3339: "2026-11-22T08:00:00Z"))
        try await withRunningServer(Self.configuration(), timeSource: time) { server in
            let port = server.port
            _ = try TestHTTP.commands(port: port, Fixture.world)
            let fast = try TestWebSocketClient.connect(port: port, timeout: .seconds(2))
            _ = try fast.readJSON()
            try fast.subscribe("f", path: "/activities/a1")
            _ = try fast.read(until: "snapshot")
            let slow = try TestWebSocketClient.connect(port: port, receiveBufferBytes: 4096)
            _ = try slow.readJSON()
            var slowMirror = StreamMirror()
            slowMirror.expect("all", path: "")
            slowMirror.expect("a1", path: "/activities/a1")
            try slow.subscribe("all", path: "")
            try slow.subscribe("a1", path: "/activities/a1")
            var n = 0
            var wentSlow = false
            // Changes go on; the fast reader gets each patch right after its command is acked.
            while n < 3000 {
                n += 1
                let rev = try TestHTTP.commands(port: port, [Self.bigUpdate(n)]).rev!
                let patch = try fast.read(until: "patch")
                #expect(patch["rev"] == .number(Double(rev)))
                if n % 20 == 0 {
                    let diagnostics = try await server.withServer { $0.streamDiagnostics }
                    #expect(diagnostics.queuedBytes.allSatisfy { $0 <= 64 * 1024 + 8 * 1024 })
                    if diagnostics.slowConsumers == 1 && n > 200 {
                        wentSlow = true
                        break
                    }
                }
            }
            #expect(wentSlow, "the reader that stopped never went over its cap")
            // The slow client reads again: what was queued, then resync and fresh snapshots.
            var sawResync = false
            var snapshotsAfterResync = Set<String>()
            while snapshotsAfterResync.count < 2 {
                let message = try slow.readJSON()
                try slowMirror.apply(message)
                if message["type"] == "resync" {
                    #expect(message["reason"] == "slow_consumer")
                    sawResync = true
                } else if sawResync, message["type"] == "snapshot" {
                    snapshotsAfterResync.insert(message["sub"]!.stringValue!)
                }
            }
            #expect(sawResync)
            let rev = try TestHTTP.commands(port: port, [Self.bigUpdate(n + 1)]).rev!
            try slow.send(json: ["op": "ping", "id": "sync"])
            try slow.read(until: "pong", id: "sync") { try slowMirror.apply($0) }
            let whole = try TestHTTP.state(port: port).json()
            #expect(whole["rev"] == .number(Double(rev)))
            #expect(slowMirror.value(of: "all") == whole["value"])
            #expect(slowMirror.value(of: "a1") == whole["value"]?["activities"]?["a1"])
            let diagnostics = try await server.withServer { $0.streamDiagnostics }
            #expect(diagnostics.slowConsumers == 0)
            #expect(diagnostics.resyncs == 1)
        }
    }

    @Test("a client that stays over its cap for the timeout is closed with 1013")
    func closedAfterTimeout() async throws {
        let time = SettableTimeSource(now: try Instant(rfc3339: "2026-11-22T08:00:00Z"))
        try await withRunningServer(Self.configuration(timeout: .seconds(30)), timeSource: time) { server in
            let port = server.port
            _ = try TestHTTP.commands(port: port, Fixture.world)
            let slow = try TestWebSocketClient.connect(port: port, timeout: .seconds(5), receiveBufferBytes: 4096)
            _ = try slow.readJSON()
            try slow.subscribe("all", path: "")
            var n = 0
            var slowNow = false
            while n < 3000 && !slowNow {
                n += 1
                _ = try TestHTTP.commands(port: port, [Self.bigUpdate(n)])
                if n % 20 == 0 { slowNow = try await server.withServer { $0.streamDiagnostics.slowConsumers } == 1 }
            }
            #expect(slowNow)
            time.advance(seconds: 29)
            #expect(try TestHTTP.request(port: port, "/healthz").status == 200)
            #expect(try await server.withServer { $0.streamDiagnostics.slowConsumerCloses } == 0)
            time.advance(seconds: 2)
            #expect(try TestHTTP.request(port: port, "/healthz").status == 200)
            #expect(try await server.withServer { $0.streamDiagnostics.slowConsumerCloses } == 1)
            #expect(try slow.readClose() == 1013)
        }
    }
}
