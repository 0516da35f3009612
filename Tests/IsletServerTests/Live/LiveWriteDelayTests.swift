import IsletCore
import IsletServer
import IsletTestSupport
import Testing

/// Issue 17: `--ws-write-delay` holds patches so that a connection's patches within the delay
/// leave in one `send`; replies are never held and take held patches along, in order.
@Suite("Write coalescing on a real socket")
struct LiveWriteDelayTests {
    /// The value of an unlabelled counter in `/metrics`.
    private static func counter(_ name: String, port: Int) throws -> Int {
        let text = try TestHTTP.request(port: port, "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return Int(line?.split(separator: " ").last ?? "") ?? -1
    }

    @Test("a held patch leaves with the next reply in one write, in order, and the mirror matches the state")
    func heldPatchLeavesWithReply() async throws {
        var configuration = IsletConfiguration.testing()
        configuration.stream.writeDelayMilliseconds = 1000
        try await withRunningServer(configuration) { server in
            _ = try TestHTTP.commands(port: server.port, Fixture.world)
            let client = try TestWebSocketClient.connect(port: server.port)
            _ = try client.readJSON()
            var mirror = StreamMirror()
            mirror.expect("s1", path: "/activities/a1")
            try client.subscribe("s1", path: "/activities/a1")
            try client.read(until: "snapshot") { try mirror.apply($0) }
            let messages = try Self.counter("islet_websocket_messages_sent_total", port: server.port)
            let writes = try Self.counter("islet_websocket_writes_total", port: server.port)

            #expect(try TestHTTP.commands(port: server.port, [Fixture.update("a1", status: "brewing")]).rev == 2)
            try client.send(json: ["op": "ping", "id": "p1"])
            let patch = try client.readJSON()
            #expect(patch["type"] == "patch")
            #expect(patch["rev"] == 2)
            try mirror.apply(patch)
            #expect(try client.readJSON()["type"] == "pong")

            #expect(try Self.counter("islet_websocket_messages_sent_total", port: server.port) == messages + 2)
            #expect(try Self.counter("islet_websocket_writes_total", port: server.port) == writes + 1)
            let state = try TestHTTP.state(port: server.port, path: "/activities/a1").json()
            #expect(mirror.value(of: "s1") == state["value"])
        }
    }

    @Test("--ws-write-delay must be from 0 to 1000 milliseconds")
    func validation() {
        for (milliseconds, valid) in [(-1, false), (0, true), (1000, true), (1001, false)] {
            var configuration = IsletConfiguration.testing()
            configuration.stream.writeDelayMilliseconds = milliseconds
            if valid {
                #expect(throws: Never.self) { try configuration.validate() }
            } else {
                #expect(throws: ConfigurationError.self) { try configuration.validate() }
            }
        }
    }
}
