import IsletCore
import IsletStore
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletServer

/// Regressions of the two confirmed crashes: a request that killed the process, and an
/// acknowledged command that kept the server from ever starting again.
@Suite("What is acknowledged always replays; no clock input traps")
struct AcknowledgedReplaysTests {
    /// The virtual clock paused where the durable test server's wall clock stands.
    static let pause: JSONValue = ["type": "clock.set", "mode": "virtual", "rate": 0]

    /// `{"n": {"n": … {}}}`: an object `levels` deep.
    static func nested(_ levels: Int) -> JSONValue {
        (1..<levels).reduce(JSONValue.object([:])) { inner, _ in .object(["n": inner]) }
    }

    /// An `activity.request` body whose own nesting is exactly `depth` levels.
    static func deepRequest(depth: Int) -> JSONValue {
        guard case .object(var command) = Fixture.request("deep") else { fatalError("the fixture is an object") }
        command["type"] = nil
        command["attributes"] = Self.nested(depth - 1)
        return .object(command)
    }

    @Test("a body at the input depth limit is acknowledged and replays after an unclean exit; one level more is refused")
    func deepAttributesReplay() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let before: (document: [UInt8], rev: UInt64, epoch: String)
            do {
                let node = try DurableServer(path: path)
                _ = try node.commit([Self.pause, Fixture.device, Fixture.app])
                let rev = node.server.position.revision
                let tooDeep = node.transport.request(
                    .POST, "/v1/activities", headers: DurableServer.json,
                    body: Self.deepRequest(depth: JSONParser.inputDepth + 1).encoded)
                #expect(tooDeep?.status == 400)
                #expect(try tooDeep.map { try JSONParser().parse($0.body)["error"]?["code"] } == "invalid_json")
                #expect(node.server.position.revision == rev, "a refused body changes nothing")

                let deep = Self.deepRequest(depth: JSONParser.inputDepth)
                _ = node.transport.request(.POST, "/v1/activities", headers: DurableServer.json, body: deep.encoded)
                node.server.flush()
                #expect(node.server.position.revision == rev + 1, "acknowledged")
                before = node.image
                // Dropped without a shutdown: the next start replays the record.
            }
            let node = try DurableServer(path: path)
            #expect(node.recovered.replayedRecords >= 1)
            #expect(node.image == before)
        }
    }

    @Test("a resume over a revision holding the deepest accepted content gets its patches")
    func deepResume() throws {
        try withTemporaryDirectory { dir in
            let node = try DurableServer(path: dir.file("islet.sqlite"))
            _ = try node.commit([Self.pause, Fixture.device, Fixture.app])
            let since = node.server.position
            _ = node.transport.request(
                .POST, "/v1/activities", headers: DurableServer.json,
                body: Self.deepRequest(depth: JSONParser.inputDepth).encoded)
            node.server.flush()
            let client = try #require(node.transport.openWebSocket())
            node.transport.receive(
                text: #"{"op":"subscribe","id":"all","path":"","since":{"epoch":"\#(since.epoch)","rev":\#(since.revision)}}"#,
                from: client)
            node.server.flush()
            let messages = try node.transport.sentJSON(to: client)
            #expect(messages.map { $0["type"] } == ["hello", "subscribed", "patch"])
        }
    }

    @Test(
        "PUT /v1/clock with a vanishing rate while deadlines are pending answers and the server keeps serving",
        arguments: [1e-300, 5e-324, 1e-9])
    func vanishingRate(rate: Double) throws {
        try withTemporaryDirectory { dir in
            let node = try DurableServer(path: dir.file("islet.sqlite"))
            _ = try node.commit([Self.pause, Fixture.device, Fixture.app, Fixture.request("a1")])
            #expect(node.server.engine.nextDeadline != nil, "the activity's 8-hour end is pending")
            let body = JSONValue.object(["mode": "virtual", "rate": .number(rate)]).encoded
            let reply = node.transport.request(.PUT, "/v1/clock", headers: DurableServer.json, body: body)
            node.server.flush()
            #expect(reply == nil || reply?.status == 200)
            #expect(node.server.engine.value(at: "/clock/rate") == .number(rate))
            #expect(try node.commit([Fixture.update("a1", status: "brewing")]) > 0)
        }
    }
}
