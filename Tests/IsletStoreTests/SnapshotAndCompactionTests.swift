import Testing

@testable import IsletStore

@Suite("Snapshots and compaction")
struct SnapshotAndCompactionTests {
    @Test("The latest snapshot is nil until one is written, then the newest, byte for byte, after reopening")
    func latestSnapshot() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            do {
                let log = try openLog(path)
                #expect(try log.latestSnapshot() == nil)
                try log.append(records(1...20))
                try log.writeSnapshot(sequence: 10, instant: 10, payload: [1])
                try log.writeSnapshot(sequence: 20, instant: 20, payload: (0...255).map(UInt8.init))
            }
            let snapshot = try #require(try openLog(path).latestSnapshot())
            #expect(snapshot == LogSnapshot(sequence: 20, instant: 20, payload: (0...255).map(UInt8.init)))
        }
    }

    @Test("Only the latest snapshots are kept", arguments: [1, 2, 3])
    func keepsLatest(keeping: Int) throws {
        let log = try openLog(":memory:")
        try log.append(records(1...5))
        for sequence in 1...5 as ClosedRange<UInt64> {
            try log.writeSnapshot(sequence: sequence, instant: 0, payload: [UInt8(sequence)], keeping: keeping)
        }
        let kept = try log.connection.scalarInt64("SELECT count(*) FROM snapshot")
        #expect(kept == Int64(keeping))
        #expect(try log.connection.scalarInt64("SELECT min(sequence) FROM snapshot") == Int64(6 - keeping))
    }

    @Test("A snapshot beyond the log or below the latest snapshot is refused")
    func outOfOrder() throws {
        let log = try openLog(":memory:")
        try log.append(records(1...10))
        #expect(throws: StoreError.snapshotOutOfOrder) { try log.writeSnapshot(sequence: 11, instant: 0, payload: []) }
        try log.writeSnapshot(sequence: 8, instant: 0, payload: [1])
        #expect(throws: StoreError.snapshotOutOfOrder) { try log.writeSnapshot(sequence: 7, instant: 0, payload: []) }
        try log.writeSnapshot(sequence: 8, instant: 0, payload: [2])
        #expect(try log.latestSnapshot()?.payload == [2])
    }

    @Test("A snapshot of a new store's initial state may use sequence 0")
    func snapshotAtZero() throws {
        let log = try openLog(":memory:")
        try log.writeSnapshot(sequence: 0, instant: 0, payload: [7])
        #expect(try log.latestSnapshot()?.sequence == 0)
    }

    @Test("Compaction without a snapshot removes nothing")
    func compactWithoutSnapshot() throws {
        let log = try openLog(":memory:")
        try log.append(records(1...10))
        let report = try log.compact()
        #expect(report.removedRecords == 0)
        #expect(report.removedThrough == nil)
        #expect(try log.recordCount() == 10)
    }

    @Test(
        "Compaction removes the records at or before the snapshot, keeping the requested number and the tail",
        arguments: [(0, 1 as UInt64), (5, 26), (30, 1), (100, 1)])
    func compactKeepsTail(keeping: Int, firstKept: UInt64) throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let log = try openLog(path)
            try log.append(records(1...40))
            try log.writeSnapshot(sequence: 30, instant: 30, payload: [3])
            let report = try log.compact(keepingRecords: keeping, reclaimingSpace: false)

            let expectedFirst = keeping == 0 ? 31 : firstKept
            #expect(report.removedRecords == Int(expectedFirst - 1))
            #expect(report.removedThrough == (expectedFirst > 1 ? expectedFirst - 1 : nil))
            #expect(try readAll(openLog(path)) == records(expectedFirst...40))
            #expect(try log.latestSnapshot()?.sequence == 30)
        }
    }

    @Test("Compaction that reclaims space shrinks the file, and appending continues after it")
    func compactReclaims() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let log = try openLog(path)
            try log.append((1...2000).map { record($0, bytes: 300) })
            try log.writeSnapshot(sequence: 2000, instant: 0, payload: [1])
            let report = try log.compact()
            #expect(report.removedRecords == 2000)
            #expect(report.bytesAfter < report.bytesBefore / 10)
            #expect(try log.recordCount() == 0)
            #expect(log.lastSequence == 2000)

            try log.append([record(2001)])
            let reopened = try openLog(path)
            #expect(reopened.lastSequence == 2001)
            #expect(try readAll(reopened) == [record(2001)])
        }
    }

    @Test("After every record is compacted away, reopening still knows the last sequence from the snapshot")
    func lastSequenceFromSnapshot() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            do {
                let log = try openLog(path)
                try log.append(records(1...5))
                try log.writeSnapshot(sequence: 5, instant: 0, payload: [])
                try log.compact(reclaimingSpace: false)
            }
            let log = try openLog(path)
            #expect(log.lastSequence == 5)
            #expect(throws: StoreError.sequenceNotIncreasing) { try log.append([record(5)]) }
        }
    }
}
