import Foundation
import Synchronization
import Testing

@testable import IsletStore

@Suite("Exclusive, shared and read-only access")
struct AccessTests {
    @Test("An exclusive log refuses a second writer with inUse naming the file, until the first is closed")
    func exclusiveLock() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            do {
                let first = try openLog(path, access: .exclusive)
                try first.append(records(1...3))
                let error = try #require(throws: StoreError.self) { try openLog(path, access: .exclusive) }
                #expect(error == .inUse)
                #expect(error.description.contains(path))
                #expect(error.description.contains("stop it first"))
                #expect(try readAll(openLog(path, access: .readOnly)) == records(1...3))
            }
            let again = try openLog(path, access: .exclusive)
            #expect(again.lastSequence == 3)
        }
    }

    @Test("A log closed while another thread spawns processes opens again at once: a child's copy of the lock is waited out")
    func reopenWhileSpawning() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let spawner = Spawner()
            spawner.start()
            defer { spawner.stop() }
            for round: UInt64 in 1...300 {
                let log = try openLog(path, access: .exclusive)
                try log.append(records(round...round))
            }
            #expect(spawner.stop() > 0)
            #expect(try openLog(path, access: .readOnly).lastSequence == 300)
        }
    }

    @Test("A :memory: store takes no lock")
    func memoryNeedsNoLock() throws {
        let a = try openLog(":memory:", access: .exclusive)
        let b = try openLog(":memory:", access: .exclusive)
        #expect(a.epoch != b.epoch)
    }

    @Test("A read-only log sees what the writer committed, and cannot append")
    func readOnlyFollowsWriter() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let writer = try openLog(path, access: .exclusive)
            try writer.append(records(1...2))
            try writer.writeSnapshot(sequence: 2, instant: 2, payload: [9])
            let reader = try openLog(path, access: .readOnly)
            #expect(reader.epoch == writer.epoch)
            #expect(reader.lastSequence == 2)
            try writer.append([record(3)])
            #expect(try readAll(reader) == records(1...3))
            #expect(try reader.latestSnapshot()?.payload == [9])
            #expect(throws: StoreError.self) { try reader.append([record(4)]) }
        }
    }

    @Test("A read-only open of a missing or empty file fails and creates nothing")
    func readOnlyRefusesNonStores() throws {
        try withTemporaryDirectory { dir in
            let missing = dir.file("missing.sqlite")
            #expect(throws: StoreError.cannotOpen) { try openLog(missing, access: .readOnly) }
            #expect(!FileManager.default.fileExists(atPath: missing))
            let empty = dir.file("empty.sqlite")
            #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
            let error = try #require(throws: StoreError.self) { try openLog(empty, access: .readOnly) }
            #expect(error == .notAStore)
            #expect(error.description.contains(empty))
            #expect(try fileBytes(empty).isEmpty)
        }
    }
}

@Suite("The genesis snapshot")
struct GenesisSnapshotTests {
    @Test("Pruning keeps the genesis snapshot (sequence 0) besides the latest ones")
    func pruningKeepsGenesis() throws {
        let log = try openLog(":memory:")
        try log.writeSnapshot(sequence: 0, instant: 0, payload: [0])
        try log.append(records(1...5))
        for sequence in 1...5 as ClosedRange<UInt64> {
            try log.writeSnapshot(sequence: sequence, instant: 0, payload: [UInt8(sequence)], keeping: 2)
        }
        #expect(try log.snapshotSequences() == [0, 4, 5])
        #expect(try log.snapshot(at: 0)?.payload == [0])
        #expect(try log.snapshot(at: 3) == nil)
    }

    @Test("Compaction removes the snapshots before the records it deletes, the genesis snapshot among them")
    func compactionDropsStaleSnapshots() throws {
        let log = try openLog(":memory:")
        try log.writeSnapshot(sequence: 0, instant: 0, payload: [0])
        try log.append(records(1...30))
        try log.writeSnapshot(sequence: 10, instant: 0, payload: [1], keeping: 3)
        try log.writeSnapshot(sequence: 20, instant: 0, payload: [2], keeping: 3)
        try log.compact(keepingRecords: 5, reclaimingSpace: false)
        #expect(try log.snapshotSequences() == [20])
        #expect(try log.firstRecordSequence() == 16)

        let kept = try openLog(":memory:")
        try kept.writeSnapshot(sequence: 0, instant: 0, payload: [0])
        try kept.append(records(1...30))
        try kept.writeSnapshot(sequence: 20, instant: 0, payload: [2])
        try kept.compact(keepingRecords: 25, reclaimingSpace: false)
        #expect(try kept.snapshotSequences() == [0, 20], "every record is kept, so the genesis snapshot is too")
    }
}

/// Runs `/bin/true` over and over on a thread of its own until stopped, the way tests that drive
/// CLI processes do beside store tests in one test process.
private final class Spawner: Sendable {
    private let stopping = Atomic<Bool>(false)
    private let spawned = Atomic<Int>(0)
    private let finished = DispatchSemaphore(value: 0)
    private let running = DispatchSemaphore(value: 0)

    /// Starts the loop and returns once its first child has run (or it could not start one).
    func start() {
        Thread.detachNewThread { [self] in
            var first = true
            while !self.stopping.load(ordering: .relaxed) {
                let child = Process()
                child.executableURL = URL(fileURLWithPath: "/bin/true")
                guard (try? child.run()) != nil else { break }
                child.waitUntilExit()
                self.spawned.add(1, ordering: .relaxed)
                if first { self.running.signal() }
                first = false
            }
            if first { self.running.signal() }
            self.finished.signal()
        }
        self.running.wait()
    }

    /// Stops the loop, waits for its last child, and returns how many ran.
    @discardableResult
    func stop() -> Int {
        if !self.stopping.exchange(true, ordering: .relaxed) { self.finished.wait() }
        return self.spawned.load(ordering: .relaxed)
    }
}
