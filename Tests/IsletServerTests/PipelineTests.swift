import IsletCore
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletServer

/// A commit stage the test completes by hand, to see what waits for it.
final class ManualCommitStage: CommitStage {
    var calls: [[RevisionRecord]] = []
    var completions: [((any Error)?) -> Void] = []

    func commit(_ records: [RevisionRecord], completion: @escaping ((any Error)?) -> Void) {
        self.calls.append(records)
        self.completions.append(completion)
    }

    func complete(_ error: (any Error)? = nil) {
        let completion = self.completions.removeFirst()
        completion(error)
    }
}

struct DiskFull: Error {}

@Suite("The command pipeline and its commit stage (in-memory transport)")
struct PipelineTests {
    static let json: HTTPHeaders = ["content-type": "application/json"]

    static func body(_ commands: [JSONValue]) -> [UInt8] { JSONValue.object(["commands": .array(commands)]).encoded }

    @Test("a turn's revisions go to the commit stage together; replies, patches and reads wait for it")
    func repliesWaitForCommit() throws {
        let stage = ManualCommitStage()
        let (server, transport) = try makeServer(commitStage: stage)
        let stream = try #require(transport.openWebSocket())
        transport.receive(text: #"{"op":"subscribe","id":"s","path":"/devices"}"#, from: stream)
        #expect(try transport.sentJSON(to: stream).last?["type"] == "snapshot")
        let first = transport.request(.POST, "/v1/commands", headers: Self.json, body: Self.body([Fixture.device]))
        let second = transport.request(
            .POST, "/v1/commands", headers: Self.json, body: Self.body([["type": "device.upsert", "id": "d2"]]))
        let bad = transport.request(.POST, "/v1/commands", headers: Self.json, body: Self.body([["type": "nope"]]))
        transport.receive(
            text: #"{"op":"command","id":"c","commands":[{"type":"device.upsert","id":"d3"}]}"#, from: stream)
        let read = transport.request(.GET, "/v1/state", query: [QueryItem(name: "path", value: "/devices")])
        #expect(first == nil && second == nil && bad == nil && read == nil, "nothing answered before the commit")
        #expect(transport.responses.isEmpty)
        server.flush()
        #expect(stage.calls.count == 1)
        #expect(stage.calls[0].map(\.revision.rev) == [1, 2, 3])
        #expect(stage.calls[0].allSatisfy { if case .commands = $0.cause { true } else { false } })
        #expect(transport.responses.isEmpty, "still nothing before completion")
        let before = try transport.sentJSON(to: stream).count
        stage.complete()
        let replies = transport.responses.values.map(\.status).sorted()
        #expect(replies == [200, 200, 200, 400])
        let after = try transport.sentJSON(to: stream).dropFirst(before).map { $0["type"]?.stringValue ?? "" }
        #expect(after == ["ack", "patch", "patch", "patch"])
        #expect(server.position.revision == 3)
    }

    @Test("a failed commit answers internal, closes every stream with 1011 and refuses further commands; with a log that cannot rebuild the published state, reads are refused too")
    func commitFailure() throws {
        let stage = ManualCommitStage()
        let (server, transport) = try makeServer(commitStage: stage)
        let stream = try #require(transport.openWebSocket())
        _ = transport.request(.POST, "/v1/commands", headers: Self.json, body: Self.body([Fixture.device]))
        server.flush()
        let read = transport.request(.GET, "/v1/state", query: [QueryItem(name: "path", value: "/clock")])
        #expect(read == nil, "a read waits for the commit in flight")
        stage.complete(DiskFull())
        #expect(transport.responses.values.map(\.status).sorted() == [500, 500], "the read that waited is refused")
        #expect(transport.closes[stream]?.code == .internalError)
        let later = transport.request(.POST, "/v1/commands", headers: Self.json, body: Self.body([Fixture.device]))
        #expect(later?.status == 500)
        let readLater = transport.request(.GET, "/v1/state", query: [QueryItem(name: "path", value: "/devices")])
        #expect(readLater?.status == 500, "this stage cannot rebuild the published revision (a real log can)")
        let health = try #require(transport.request(.GET, "/healthz"))
        #expect(health.status == 503, "a balancer or supervisor sees the failed store")
        #expect(try JSONParser().parse(health.body) == ["status": "store_failed", "simulations": ["default"]])
    }

    /// A device, an app and activity a1 going stale at 08:00:10: one deadline to wake up for.
    static let staleAtTenSeconds: [JSONValue] = [
        Fixture.device, Fixture.app,
        [
            "type": "activity.request", "id": "a1", "app": "coffee", "attributesType": "Coffee", "attributes": [:],
            "content": ["state": ["status": "brewing"], "staleDate": "2026-11-22T08:00:10Z"],
        ],
    ]

    @Test("a wake-up timer that fired early (nothing due yet) is armed again for the same instant, so the transition still happens")
    func earlyWakeUpIsArmedAgain() throws {
        let time = SettableTimeSource(now: try Instant(rfc3339: "2026-11-22T08:00:00Z"))
        let (server, transport) = try makeServer(time: time)
        var armed: [Instant?] = []
        server.wakeUpChanged = { armed.append($0) }
        _ = transport.request(.POST, "/v1/commands", headers: Self.json, body: Self.body(Self.staleAtTenSeconds))
        server.flush()
        let stale = try Instant(rfc3339: "2026-11-22T08:00:10Z")
        #expect(armed.last == stale)
        let count = armed.count
        // The timer fires 1 ms early: the turn finds nothing due.
        time.advance(seconds: 9.999)
        server.wakeUpFired()
        server.flush()
        #expect(armed.count == count + 1 && armed.last == stale, "armed again: \(armed)")
        time.advance(seconds: 0.001)
        server.wakeUpFired()
        server.flush()
        #expect(server.engine.value(at: "/activities/a1/activityState") == "stale")
    }

    @Test("a simulation whose store failed is not armed for: its deadline would fire nothing, again and again")
    func failedSimulationIsNotArmed() throws {
        let time = SettableTimeSource(now: try Instant(rfc3339: "2026-11-22T08:00:00Z"))
        let stage = ManualCommitStage()
        let (server, transport) = try makeServer(commitStage: stage, time: time)
        var armed: [Instant?] = []
        server.wakeUpChanged = { armed.append($0) }
        _ = transport.request(.POST, "/v1/commands", headers: Self.json, body: Self.body(Self.staleAtTenSeconds))
        server.flush()
        stage.complete(DiskFull())
        server.flush()
        #expect(armed.last == .some(nil), "nothing to wake up for: \(armed)")
        let count = armed.count
        time.advance(seconds: 20)
        for _ in 0..<3 {
            server.wakeUpFired()
            server.flush()
        }
        #expect(armed.count == count, "no timer armed again for the failed simulation: \(armed)")
    }

    @Test("due deadlines fire at the turn's flush as a tick revision, also after a rejected batch")
    func ticks() throws {
        let time = SettableTimeSource(now: try Instant(rfc3339: "2026-11-22T08:00:00Z"))
        let stage = ManualCommitStage()
        let (server, transport) = try makeServer(commitStage: stage, time: time)
        _ = transport.request(
            .POST, "/v1/commands", headers: Self.json,
            body: Self.body([
                Fixture.device, Fixture.app, Fixture.request("a1"),
                [
                    "type": "activity.update", "id": "a1", "content": ["state": ["status": "x"]],
                    "alert": ["title": "t"],
                ],
            ]))
        server.flush()
        stage.complete()
        #expect(server.engine.nextWakeUp != nil)
        time.advance(seconds: 10)
        _ = transport.request(.POST, "/v1/commands", headers: Self.json, body: Self.body([["type": "nope"]]))
        server.flush()
        #expect(stage.calls.count == 2)
        #expect(stage.calls[1].first?.cause == .tick)
        stage.complete()
        #expect(try transport.sentJSON(to: try #require(transport.openWebSocket())).first?["rev"] == 2)
    }
}

@Suite("Slow consumers on the in-memory transport")
struct InMemorySlowConsumerTests {
    @Test("over the cap: patches dropped, acks kept, resync and snapshots after the drain")
    func resync() throws {
        var configuration = IsletConfiguration.testing()
        configuration.limits.outboundBytes = 2000
        let (server, transport) = try makeServer(configuration)
        let stream = try #require(transport.openWebSocket())
        transport.receive(text: #"{"op":"subscribe","id":"all","path":""}"#, from: stream)
        transport.drain(stream)
        let json: HTTPHeaders = ["content-type": "application/json"]
        for n in 0..<20 {
            _ = transport.request(
                .POST, "/v1/commands", headers: json,
                body: PipelineTests.body([["type": "device.upsert", "id": .string("d\(n)")]]))
            server.flush()
        }
        #expect(server.streamDiagnostics.slowConsumers == 1)
        #expect(transport.queuedBytes(of: stream) <= 2000)
        transport.receive(text: #"{"op":"ping","id":"kept"}"#, from: stream)
        transport.drain(stream)  // the drain notice: resync goes out
        server.flush()
        transport.drain(stream)  // the snapshot, larger than what fits behind the resync, follows
        server.flush()
        let types = try transport.sentJSON(to: stream).map { $0["type"]?.stringValue ?? "" }
        #expect(types.contains("pong"))
        let resync = try #require(types.firstIndex(of: "resync"))
        #expect(types[(resync + 1)...].first == "snapshot")
        #expect(server.streamDiagnostics.slowConsumers == 0)
        let snapshot = try transport.sentJSON(to: stream).last { $0["type"] == "snapshot" }
        #expect(snapshot?["rev"] == 20)
        #expect(snapshot?["value"]?["devices"]?.objectValue?.count == 20)
    }

    /// A server with a 2,000-byte outbound cap, a stream whose hello is written, and `count`
    /// pings whose 300-byte ids make each pong about 330 bytes: six fill the cap.
    static func pinged(
        _ count: Int
    ) throws -> (server: IsletServer, transport: InMemoryTransport, stream: ConnectionID) {
        var configuration = IsletConfiguration.testing()
        configuration.limits.outboundBytes = 2000
        let (server, transport) = try makeServer(configuration)
        let stream = try #require(transport.openWebSocket())
        transport.drain(stream)
        for n in 0..<count {
            let id = String(n) + String(repeating: "x", count: 300)
            transport.receive(text: #"{"op":"ping","id":"\#(id)"}"#, from: stream)
        }
        return (server, transport, stream)
    }

    @Test("a reply over the cap is never dropped: it waits, in order with the later ones, until the queue drains")
    func repliesWait() throws {
        let (server, transport, stream) = try Self.pinged(10)
        #expect(transport.queuedBytes(of: stream) <= 2000)
        #expect(server.streamDiagnostics.slowConsumers == 1)
        transport.drain(stream)  // the drain notice: the held pongs go out first
        server.flush()
        transport.drain(stream)
        let pongs = try transport.sentJSON(to: stream).filter { $0["type"] == "pong" }
        #expect(pongs.map { String($0["id"]?.stringValue?.prefix(1) ?? "") } == (0..<10).map(String.init))
        #expect(transport.closes[stream] == nil)
    }

    @Test("a reader that lets more than a cap of replies wait is closed with 1013")
    func tooManyRepliesWaiting() throws {
        let (server, transport, stream) = try Self.pinged(20)
        #expect(transport.closes[stream]?.code == .tryAgainLater)
        #expect(server.streamDiagnostics.slowConsumers == 0)
    }
}
