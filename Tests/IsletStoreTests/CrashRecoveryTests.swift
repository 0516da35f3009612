import Foundation
import Testing

@testable import IsletStore

/// What a killed process leaves behind is the database file and its WAL, with the connection never
/// closed (so never checkpointed). Copying both while the log is still open gives exactly that
/// image; opening the copy must run SQLite's WAL recovery and find every committed record.
/// The kill -9 test of the real binary belongs to the server integration.
@Suite("Recovery after an abrupt stop")
struct CrashRecoveryTests {
    @Test("Committed groups survive an abrupt stop; a failed group does not appear", arguments: Durability.allCases)
    func walImageRecovers(durability: Durability) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let crashed = dir.file("crashed.sqlite")
            let log = try openLog(path, durability: durability)
            try log.append(records(1...50))
            try log.writeSnapshot(sequence: 50, instant: 50, payload: [5, 0])
            try log.append(records(51...60))
            #expect(throws: StoreError.sequenceNotIncreasing) { try log.append([record(61), record(61)]) }

            let wal = try fileBytes(path + "-wal")
            #expect(!wal.isEmpty, "the committed pages must still be in the WAL, not checkpointed")
            try fileBytes(path).write(to: URL(fileURLWithPath: crashed))
            try wal.write(to: URL(fileURLWithPath: crashed + "-wal"))

            let recovered = try openLog(crashed, durability: durability)
            #expect(recovered.epoch == log.epoch)
            #expect(recovered.lastSequence == 60)
            #expect(try recovered.latestSnapshot()?.payload == [5, 0])
            #expect(try readAll(recovered, after: 50) == records(51...60))
            withExtendedLifetime(log) {}
        }
    }

    @Test("A second connection sees every committed record while the first is still open")
    func secondConnectionSeesCommits() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let writer = try openLog(path)
            try writer.append(records(1...3))
            let reader = try openLog(path)
            #expect(try readAll(reader) == records(1...3))
            try writer.append([record(4)])
            #expect(try readAll(reader) == records(1...4))
            #expect(reader.epoch == writer.epoch)
        }
    }
}
