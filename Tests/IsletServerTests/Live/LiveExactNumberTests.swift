import IsletCore
import IsletServer
import IsletStore
import IsletTestSupport
import Testing

/// AP-8 "JSON numbers keep their exact value end to end": a content-state integer beyond 2^53
/// through REST, the stream, an APNs push, the SQLite log, and a restart (snapshot and replay).
@Suite("Exact numbers end to end")
struct LiveExactNumberTests {
    static let big = "1795560793900123456"
    static let pushed = "18446744073709551617"

    @Test(
        "a content-state integer beyond 2^53 comes back byte for byte: REST, stream, APNs, log and restart (AP-8)",
        arguments: [10_000, 1])
    func roundTrip(snapshotEvery: Int) async throws {
        try await withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.store.path = dir.file("islet.sqlite")
            configuration.store.snapshotEveryRevisions = snapshotEvery
            let before = try await withRunningServer(configuration) { server in
                let port = server.port
                let world = try TestHTTP.commands(
                    port: port, [Fixture.pauseClock, Fixture.device, Fixture.app, Fixture.request("a1", pushToken: true)])
                let token = try #require(try world.json()["results"]?[pointer: "/3/pushToken"]?.stringValue)
                let watcher = try TestWebSocketClient.connect(port: port)
                _ = try watcher.readJSON()
                try watcher.subscribe("w", path: "/activities/a1/content")
                _ = try watcher.read(until: "snapshot")

                // REST, with the number as the request's own text.
                let body = #"{"commands":[{"type":"activity.update","id":"a1","content":{"state":{"orderId":\#(Self.big)}}}]}"#
                let reply = try TestHTTP.request(
                    port: port, "POST", "/v1/commands", headers: [("content-type", "application/json")],
                    body: Array(body.utf8))
                #expect(reply.status == 200, "\(reply.text)")
                #expect(try watcher.readText().contains(#""value":\#(Self.big)"#))
                let state = try TestHTTP.state(port: port, path: "/activities/a1/content/state").text
                #expect(state.contains(#""orderId":\#(Self.big)"#), "\(state)")

                // APNs.
                let push = #"{"aps":{"timestamp":1795766500,"event":"update","content-state":{"orderId":\#(Self.pushed)}}}"#
                let pushReply = try TestHTTP.request(
                    port: port, "POST", "/3/device/\(token)",
                    headers: [("apns-push-type", "liveactivity"), ("apns-topic", "coffee.push-type.liveactivity")],
                    body: Array(push.utf8))
                #expect(pushReply.status == 200, "\(pushReply.text)")
                #expect(try watcher.readText().contains(#""value":\#(Self.pushed)"#))
                // A push the device ignores (AP-8) is logged too, and replays to the same record.
                let ignored = try TestHTTP.request(
                    port: port, "POST", "/3/device/\(token)",
                    headers: [("apns-push-type", "liveactivity"), ("apns-topic", "coffee.push-type.liveactivity")],
                    body: Array(#"{"aps":{"event":"update","content-state":{"orderId":1}}}"#.utf8))
                #expect(ignored.status == 200)
                let full = try TestHTTP.state(port: port).text
                #expect(full.contains("timestamp_missing"))
                #expect(full.contains(#""orderId":\#(Self.pushed)"#) && !full.contains("e+18") && !full.contains("e+19"))
                return try TestHTTP.state(port: port).body
            }
            // The log holds the numbers as they were sent.
            let log = try readLog(dir.file("islet.sqlite")).map { String(decoding: $0.payload, as: UTF8.self) }
            #expect(log.contains { $0.contains(Self.big) } && log.contains { $0.contains(Self.pushed) })
            try await withRunningServer(configuration) { server in
                let after = try TestHTTP.state(port: server.port).body
                #expect(after == before)
            }
        }
    }
}
