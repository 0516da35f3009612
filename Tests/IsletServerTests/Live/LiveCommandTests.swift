import IsletCore
import IsletServer
import IsletTestSupport
import Testing

@Suite("Commands and reads on a real socket")
struct LiveCommandTests {
    @Test("POST /v1/commands applies a batch as one revision; GET /v1/state reads it at that revision")
    func commandsAndState() async throws {
        try await withRunningServer { server in
            let reply = try TestHTTP.commands(port: server.port, Fixture.world)
            #expect(reply.status == 200, "\(reply.text)")
            let body = try reply.json()
            #expect(body["rev"] == 1)
            #expect(body["results"]?.arrayValue?.count == 4)
            #expect(body["results"]?[pointer: "/3/id"] == "a1")
            let state = try TestHTTP.state(port: server.port, path: "/activities/a1/content/state")
            #expect(state.status == 200)
            let json = try state.json()
            #expect(json["rev"] == 1)
            #expect(json["path"] == "/activities/a1/content/state")
            #expect(json["value"] == ["status": "received", "eta": 5])
            #expect(json["epoch"]?.stringValue?.isEmpty == false)
            let whole = try TestHTTP.state(port: server.port)
            #expect(try whole.json()["value"]?["activities"]?["a1"]?["id"] == "a1")
            #expect(try TestHTTP.state(port: server.port, path: "/activities/nope").status == 404)
        }
    }

    @Test("a subscriber gets a snapshot, then one patch per revision that touches its path")
    func subscribeAndPatch() async throws {
        try await withRunningServer { server in
            _ = try TestHTTP.commands(port: server.port, Fixture.world)
            let client = try TestWebSocketClient.connect(port: server.port)
            _ = try client.readJSON()
            var mirror = StreamMirror()
            mirror.expect("s1", path: "/activities/a1")
            try client.subscribe("s1", path: "/activities/a1")
            let snapshot = try client.read(until: "snapshot") { try mirror.apply($0) }
            #expect(snapshot["rev"] == 1)
            let reply = try TestHTTP.commands(port: server.port, [Fixture.update("a1", status: "brewing")])
            #expect(reply.rev == 2)
            let patch = try client.read(until: "patch") { try mirror.apply($0) }
            #expect(patch["rev"] == 2)
            let state = try TestHTTP.state(port: server.port, path: "/activities/a1").json()
            #expect(mirror.value(of: "s1") == state["value"])
        }
    }
}

extension JSONValue {
    subscript(pointer text: String) -> JSONValue? { self[try! JSONPointer(parsing: text)] }
}
