import IsletCore
import IsletServer
import IsletTestSupport
import Testing

@Suite("Resuming subscriptions with since")
struct LiveResumeTests {
    @Test("since within the history: subscribed, then the missed patches exactly once and in order, then live ones")
    func resume() async throws {
        try await withRunningServer { server in
            let port = server.port
            let first = try TestHTTP.commands(port: port, Fixture.world)
            let client = try TestWebSocketClient.connect(port: port)
            let epoch = try client.readJSON()["epoch"]!.stringValue!
            var mirror = StreamMirror()
            mirror.expect("a", path: "/activities/a1")
            try client.subscribe("a", path: "/activities/a1")
            try client.read(until: "snapshot") { try mirror.apply($0) }
            let since = first.rev!
            client.drop()
            var revs: [UInt64] = []
            for n in 0..<5 {
                revs.append(try TestHTTP.commands(port: port, [Fixture.update("a1", status: "s\(n)")]).rev!)
                _ = try TestHTTP.commands(port: port, [["type": "device.upsert", "id": "d9"]])  // not under the path
            }
            let again = try TestWebSocketClient.connect(port: port)
            _ = try again.readJSON()
            mirror.resume("a", path: "/activities/a1", value: mirror.value(of: "a"))
            try again.subscribe("a", path: "/activities/a1", since: (epoch, since))
            let subscribed = try again.read(until: "subscribed") { try mirror.apply($0) }
            #expect(subscribed == ["type": "subscribed", "sub": "a", "resumed": true, "rev": .number(Double(since))])
            var missed: [UInt64] = []
            for _ in revs {
                let patch = try again.readJSON()
                #expect(patch["type"] == "patch")
                #expect(patch["sub"] == "a")
                missed.append(UInt64(patch["rev"]!.numberValue!))
                try mirror.apply(patch)
            }
            #expect(missed == revs)
            let live = try TestHTTP.commands(port: port, [Fixture.update("a1", status: "live")]).rev!
            let patch = try again.read(until: "patch") { try mirror.apply($0) }
            #expect(patch["rev"] == .number(Double(live)))
            #expect(patch["sub"] == nil)
            let state = try TestHTTP.state(port: port, path: "/activities/a1").json()
            #expect(mirror.value(of: "a") == state["value"])
        }
    }

    @Test("since older than the history, from another epoch, or from the future: a fresh snapshot saying why")
    func fallbacks() async throws {
        var configuration = IsletConfiguration.testing()
        configuration.stream.historyRevisions = 3
        try await withRunningServer(configuration) { server in
            let port = server.port
            _ = try TestHTTP.commands(port: port, Fixture.world)
            for n in 0..<6 { _ = try TestHTTP.commands(port: port, [Fixture.update("a1", status: "s\(n)")]) }
            let client = try TestWebSocketClient.connect(port: port)
            let hello = try client.readJSON()
            let epoch = hello["epoch"]!.stringValue!
            let rev = UInt64(hello["rev"]!.numberValue!)
            #expect(rev == 7)
            let diagnostics = try await server.withServer { $0.streamDiagnostics }
            #expect(diagnostics.historyRevisions == 3)
            try client.subscribe("trimmed", path: "/activities/a1", since: (epoch, 1))
            let trimmed = try client.read(until: "snapshot")
            #expect(trimmed["reason"] == "history_trimmed")
            #expect(trimmed["rev"] == 7)
            #expect(trimmed["value"] == (try TestHTTP.state(port: port, path: "/activities/a1").json()["value"]))
            try client.subscribe("kept", path: "/activities/a1", since: (epoch, 4))
            #expect(try client.readJSON()["type"] == "subscribed")
            #expect(try client.readJSON()["rev"] == 5)
            try client.subscribe("other", path: "/clock", since: ("another-epoch", 3))
            #expect(try client.read(until: "snapshot")["reason"] == "epoch_changed")
            try client.subscribe("future", path: "/clock", since: (epoch, 99))
            #expect(try client.read(until: "snapshot")["reason"] == "unknown_revision")
            // A revision is unsigned 64-bit: one beyond what a Double holds is still a revision.
            try client.send(text: #"{"op":"subscribe","id":"far","path":"/clock","since":{"epoch":"\#(epoch)","rev":18446744073709551615}}"#)
            #expect(try client.read(until: "snapshot")["reason"] == "unknown_revision")
            try client.subscribe("now", path: "/clock", since: (epoch, 7))
            let current = try client.read(until: "subscribed")
            #expect(current["rev"] == 7)
        }
    }
}
