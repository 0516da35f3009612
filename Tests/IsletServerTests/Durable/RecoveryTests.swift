import IsletCore
import IsletRender
import IsletStore
import IsletTestSupport
import Testing

@testable import IsletServer

@Suite("Recovery refuses a log that does not replay")
struct RecoveryTests {
    /// A store with the genesis snapshot of a fresh engine and then `records`.
    func store(_ path: String, records: [LogRecord]) throws {
        let log = try CommandLog(path: path, logger: makeTestLogger())
        let engine = Engine(renderer: MustacheRenderer(), at: TestServer.start)
        try log.writeSnapshot(
            sequence: 0, instant: 0, payload: SnapshotPayload(engine: engine.snapshotBytes, history: []).encoded())
        try log.append(records)
    }

    func batch(_ sequence: UInt64, _ commands: [JSONValue]) -> LogRecord {
        LogRecord(
            sequence: sequence, instant: TestServer.start.millisecondsSinceEpoch, kind: .batch,
            payload: JSONValue.array(commands).encoded)
    }

    @Test(
        "a record the engine refuses, numbers differently, or a tick that changes nothing: RecoveryError naming the file",
        arguments: ["refused", "numbered", "tick", "payload"])
    func mismatches(kind: String) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let records: [LogRecord]
            switch kind {
            case "refused": records = [self.batch(1, [["type": "no.such.command"]])]
            case "numbered": records = [self.batch(2, [Fixture.device])]
            case "tick":
                records = [
                    LogRecord(sequence: 1, instant: TestServer.start.millisecondsSinceEpoch, kind: .tick, payload: [])
                ]
            default: records = [LogRecord(sequence: 1, instant: 0, kind: .batch, payload: Array("{".utf8))]
            }
            try self.store(path, records: records)
            var configuration = IsletConfiguration.testing()
            configuration.store.path = path
            let error = try #require(throws: RecoveryError.self) {
                _ = try StorePersistence.open(
                    configuration, loop: nil, wall: TestServer.start, logger: makeTestLogger())
            }
            #expect(error.description.hasPrefix("\(path): record "))
            #expect(error.sequence != nil)
            #expect(error.description.contains("islet store repair --db \(path)"))
        }
    }

    @Test("records without any snapshot, or a malformed snapshot, are refused too")
    func missingOrMalformedSnapshot() throws {
        try withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.store.path = dir.file("no-snapshot.sqlite")
            try CommandLog(path: configuration.store.path, logger: makeTestLogger()).append([
                self.batch(1, [Fixture.device])
            ])
            #expect(throws: RecoveryError.self) {
                _ = try StorePersistence.open(
                    configuration, loop: nil, wall: TestServer.start, logger: makeTestLogger())
            }
            configuration.store.path = dir.file("bad-snapshot.sqlite")
            try CommandLog(path: configuration.store.path, logger: makeTestLogger())
                .writeSnapshot(sequence: 0, instant: 0, payload: Array("not a snapshot".utf8))
            let error = try #require(throws: RecoveryError.self) {
                _ = try StorePersistence.open(
                    configuration, loop: nil, wall: TestServer.start, logger: makeTestLogger())
            }
            #expect(error.description.contains("snapshot at 0 is malformed"))
        }
    }

    @Test("a database another server holds is refused with inUse, and nothing is written to it")
    func lockedStore() throws {
        try withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.store.path = dir.file("islet.sqlite")
            let first = try StorePersistence.open(
                configuration, loop: nil, wall: TestServer.start, logger: makeTestLogger())
            let error = try #require(throws: StoreError.self) {
                _ = try StorePersistence.open(
                    configuration, loop: nil, wall: TestServer.start, logger: makeTestLogger())
            }
            #expect(error == .inUse)
            withExtendedLifetime(first) {}
        }
    }
}

@Suite("Snapshot payloads")
struct SnapshotPayloadTests {
    @Test("the engine bytes and the history round-trip exactly")
    func roundTrip() throws {
        let history = [
            RevisionHistory.Entry(rev: 7, encodedOps: Array(#"[{"op":"add","path":"/x","value":1}]"#.utf8)),
            RevisionHistory.Entry(rev: 8, encodedOps: []),
        ]
        let payload = SnapshotPayload(engine: Array("{\"format\":1}".utf8), history: history)
        let decoded = try SnapshotPayload(decoding: payload.encoded())
        #expect(decoded.engine == payload.engine)
        #expect(decoded.history.map(\.rev) == [7, 8])
        #expect(decoded.history.map(\.encodedOps) == history.map(\.encodedOps))
    }

    @Test("truncated, extended or foreign bytes are refused")
    func malformed() throws {
        let bytes = SnapshotPayload(engine: [1, 2, 3], history: [.init(rev: 1, encodedOps: [4])]).encoded()
        #expect(throws: SnapshotPayload.Malformed.self) { try SnapshotPayload(decoding: Array(bytes.dropLast())) }
        #expect(throws: SnapshotPayload.Malformed.self) { try SnapshotPayload(decoding: bytes + [0]) }
        #expect(throws: SnapshotPayload.Malformed.self) { try SnapshotPayload(decoding: Array("{}".utf8)) }
    }
}
