import IsletCore
import IsletServer
import IsletTestSupport
import Testing

/// A running server on real sockets, stopped and started again on the same database file.
@Suite("Restarting a live server on the same database")
struct LiveRestartTests {
    /// What a live watcher received for one revision: its number and its operations' bytes.
    struct Patch: Equatable {
        var rev: JSONValue?
        var ops: [UInt8]?
        init(_ message: JSONValue) {
            self.rev = message["rev"]
            self.ops = message["ops"]?.encoded
        }
    }

    @Test(
        "GET /v1/state, rev and the hello epoch are unchanged; a subscriber resumes with exactly the patches it missed",
        arguments: [10_000, 4])
    func restart(snapshotEvery: Int) async throws {
        try await withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.store.path = dir.file("islet.sqlite")
            configuration.store.snapshotEveryRevisions = snapshotEvery
            let (before, since, live) = try await withRunningServer(configuration) { server in
                let port = server.port
                let since = try TestHTTP.commands(port: port, Fixture.world).rev!
                let watcher = try TestWebSocketClient.connect(port: port)
                _ = try watcher.readJSON()
                try watcher.subscribe("w", path: "/activities/a1")
                _ = try watcher.read(until: "snapshot")
                var live: [Patch] = []
                for n in 0..<6 {
                    _ = try TestHTTP.commands(port: port, [Fixture.update("a1", status: "s\(n)")])
                    _ = try TestHTTP.commands(
                        port: port, [["type": "device.upsert", "id": "d1", "locked": .bool(n % 2 == 0)]])
                    live.append(Patch(try watcher.read(until: "patch")))
                }
                return (try TestHTTP.state(port: port).body, since, live)
            }
            try await withRunningServer(configuration) { server in
                let port = server.port
                #expect(try TestHTTP.state(port: port).body == before)
                let state = try JSONParser().parse(before)
                let client = try TestWebSocketClient.connect(port: port)
                let hello = try client.readJSON()
                #expect(hello["epoch"] == state["epoch"])
                #expect(hello["rev"] == state["rev"])
                try client.subscribe("r", path: "/activities/a1", since: (state["epoch"]!.stringValue!, since))
                let subscribed = try client.readJSON()
                #expect(
                    subscribed == ["type": "subscribed", "sub": "r", "resumed": true, "rev": .number(Double(since))])
                let resumed = try live.map { _ in try client.readJSON() }
                #expect(resumed.map(Patch.init) == live)
                #expect(resumed.allSatisfy { $0["sub"] == "r" })
                let next = try TestHTTP.commands(port: port, [Fixture.update("a1", status: "after")]).rev!
                #expect(next == UInt64(state["rev"]!.numberValue!) + 1)
                #expect(try client.readJSON()["rev"] == .number(Double(next)))
            }
        }
    }
}
