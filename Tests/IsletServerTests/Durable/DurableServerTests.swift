import IsletCore
import IsletStore
import IsletTestSupport
import Testing

@testable import IsletServer

@Suite("The server on a durable command log (in-memory transport)")
struct DurableServerTests {
    static let start = Instant(millisecondsSinceEpoch: 1_795_766_400_000)

    /// A device, an app and an activity that goes stale after 60 s: a clock step then changes state.
    static let world: [JSONValue] = [
        Fixture.device, Fixture.app,
        [
            "type": "activity.request", "id": "a1", "app": "coffee", "attributesType": "CoffeeDeliveryAttributes",
            "attributes": ["orderNumber": "A-1"],
            "content": ["state": ["status": "received"], "staleDate": "2026-11-27T08:01:00Z"],
        ],
    ]

    @Test("each batch is logged with its wall instant as its canonical command array, each clock step as a tick")
    func recordFormat() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let time = SettableTimeSource(now: Self.start)
            let node = try DurableServer(path: path, time: time)
            #expect(node.recovered.created)
            let rev = try node.commit(Self.world)
            time.advance(seconds: 90)
            node.server.flush()  // the stale date passes: a tick revision
            #expect(node.server.position.revision == rev + 1)
            let records = try readLog(path)
            #expect(records.map(\.sequence) == [1, 2])
            #expect(records[0].kind == .batch)
            #expect(records[0].instant == Self.start.millisecondsSinceEpoch)
            #expect(records[0].payload == JSONValue.array(Self.world).encoded)
            #expect(records[1].kind == .tick)
            #expect(records[1].instant == Self.start.adding(seconds: 90).millisecondsSinceEpoch)
            #expect(records[1].payload.isEmpty)
        }
    }

    @Test("a restarted server has the same document, revision and epoch, and continues the same history")
    func restartEquality() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let time = SettableTimeSource(now: Self.start)
            let before: (document: [UInt8], rev: UInt64, epoch: String)
            do {
                let node = try DurableServer(path: path, time: time)
                _ = try node.commit(Self.world)
                time.advance(seconds: 90)
                node.server.flush()
                _ = try node.commit([Fixture.update("a1", status: "brewing")])
                before = node.image
                node.shutdown()
            }
            let node = try DurableServer(path: path, time: time)
            #expect(!node.recovered.created)
            #expect(node.image == before)
            #expect(try node.commit([Fixture.update("a1", status: "onItsWay")]) == before.rev + 1)
        }
    }

    /// Snapshots every five revisions, on the paused test clock.
    static var snapshotEveryFive: IsletConfiguration {
        var configuration = IsletConfiguration.testing(virtualClockStart: TestServer.start)
        configuration.store.snapshotEveryRevisions = 5
        return configuration
    }

    /// Twelve revisions (the world, then eleven updates) on a server at `path`, which `end`
    /// then shuts down or not; returns its image.
    static func twelveRevisions(
        _ path: String, _ configuration: IsletConfiguration, end: (DurableServer) -> Void
    ) throws -> (document: [UInt8], rev: UInt64, epoch: String) {
        let node = try DurableServer(path: path, configuration: configuration)
        _ = try node.commit(Self.world)
        for n in 0..<11 { _ = try node.commit([Fixture.update("a1", status: "s\(n)")]) }
        let image = node.image
        end(node)
        return image
    }

    @Test(
        "startup restores the latest snapshot and replays only the records after it",
        arguments: [false, true])
    func snapshotAndTail(graceful: Bool) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let configuration = Self.snapshotEveryFive
            // Graceful: a last snapshot at 12. Abrupt: the server is dropped without one.
            let before = try Self.twelveRevisions(path, configuration) { node in if graceful { node.shutdown() } }
            let log = try CommandLog(path: path, access: .readOnly, logger: makeTestLogger())
            #expect(try log.snapshotSequences() == (graceful ? [0, 10, 12] : [0, 5, 10]))
            let node = try DurableServer(path: path, configuration: configuration)
            #expect(node.recovered.snapshotSequence == (graceful ? 12 : 10))
            #expect(node.recovered.replayedRecords == (graceful ? 0 : 2))
            #expect(node.image == before)
        }
    }

    @Test("a newest snapshot that cannot be restored gives way to the one before it; the state is the same")
    func olderSnapshotFallback() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let configuration = Self.snapshotEveryFive
            let before = try Self.twelveRevisions(path, configuration) { _ in }
            do {
                let log = try CommandLog(path: path, logger: makeTestLogger())
                #expect(try log.snapshotSequences() == [0, 5, 10])
                try log.writeSnapshot(sequence: 10, instant: 0, payload: Array("damaged".utf8))
            }
            let node = try DurableServer(path: path, configuration: configuration)
            #expect(node.recovered.snapshotSequence == 5)
            #expect(node.recovered.replayedRecords == 7)
            #expect(node.image == before)
        }
    }

    @Test(
        "a subscriber resumes across a restart with exactly the patches it missed, as live clients received them",
        arguments: [(snapshotEvery: 10_000, graceful: false), (3, false), (3, true)])
    func resumeAcrossRestart(snapshotEvery: Int, graceful: Bool) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            var configuration = IsletConfiguration.testing(virtualClockStart: TestServer.start)
            configuration.store.snapshotEveryRevisions = snapshotEvery
            var live: [JSONValue] = []
            let since: UInt64
            let epoch: String
            do {
                let node = try DurableServer(path: path, configuration: configuration)
                since = try node.commit(Self.world)
                epoch = node.server.position.epoch
                let watcher = try #require(node.transport.openWebSocket())
                node.transport.receive(text: #"{"op":"subscribe","id":"w","path":"/activities/a1"}"#, from: watcher)
                for n in 0..<7 {
                    _ = try node.commit([Fixture.update("a1", status: "s\(n)")])
                    _ = try node.commit([["type": "device.upsert", "id": "d1", "locked": .bool(n % 2 == 0)]])
                }
                live = try node.transport.sentJSON(to: watcher).filter { $0["type"] == "patch" }
                if graceful { node.shutdown() }
            }
            #expect(live.count == 7, "one patch per update of a1")
            let node = try DurableServer(path: path, configuration: configuration)
            let client = try #require(node.transport.openWebSocket())
            node.transport.receive(
                text:
                    #"{"op":"subscribe","id":"r","path":"/activities/a1","since":{"epoch":"\#(epoch)","rev":\#(since)}}"#,
                from: client)
            let messages = try node.transport.sentJSON(to: client)
            #expect(messages.first?["type"] == "hello")
            #expect(
                messages.dropFirst().first == [
                    "type": "subscribed", "sub": "r", "resumed": true, "rev": .number(Double(since)),
                ])
            let resumed = Array(messages.dropFirst(2))
            #expect(resumed.map { $0["rev"] } == live.map { $0["rev"] })
            #expect(resumed.map { $0["ops"]?.encoded } == live.map { $0["ops"]?.encoded })
            #expect(resumed.allSatisfy { $0["sub"] == "r" })
        }
    }

    @Test("the demo loads only into an empty store")
    func demoOnlyIntoEmptyStore() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            var configuration = IsletConfiguration.testing(virtualClockStart: TestServer.start)
            configuration.demo = .ifEmpty
            let loaded: UInt64
            do {
                let node = try DurableServer(path: path, configuration: configuration)
                node.server.loadDemoIfWanted()
                node.server.flush()
                loaded = node.server.position.revision
                #expect(loaded > 0)
                node.shutdown()
            }
            let node = try DurableServer(path: path, configuration: configuration)
            node.server.loadDemoIfWanted()
            node.server.flush()
            #expect(node.server.position.revision == loaded)
        }
    }
}
