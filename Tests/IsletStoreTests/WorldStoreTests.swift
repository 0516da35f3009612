import Foundation
import Testing

@testable import IsletStore

/// Many worlds' logs in one file: each world an ordered log of its own, created and deleted in
/// one transaction.
@Suite("World store: many logs in one SQLite file")
struct WorldStoreTests {
    static func record(_ sequence: UInt64, _ text: String) -> LogRecord {
        LogRecord(sequence: sequence, instant: Int64(sequence) * 1000, kind: .batch, payload: Array(text.utf8))
    }

    @Test("worlds keep their own records, snapshots, values and epochs, across a reopen")
    func isolatedWorlds() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.simulations.sqlite")
            var epochs: [String: String] = [:]
            do {
                let store = try WorldStore(path: path, logger: quietLogger)
                let a = try store.create("a", instant: 5, genesis: [1], values: ["admin-token": "t"])
                let b = try store.create("b", instant: 6, genesis: [2])
                try a.append([Self.record(1, "a1"), Self.record(2, "a2")])
                try b.append([Self.record(1, "b1")])
                try a.writeSnapshot(sequence: 2, instant: 2000, payload: [9])
                #expect(a.epoch != b.epoch)
                epochs = ["a": a.epoch, "b": b.epoch]
                #expect(throws: StoreError.self) { try b.append([Self.record(1, "again")]) }
                #expect(throws: StoreError.self) { _ = try store.create("a", instant: 7, genesis: [3]) }
            }
            let store = try WorldStore(path: path, logger: quietLogger)
            #expect(try store.worlds().map(\.name) == ["a", "b"])
            #expect(try store.worlds().map(\.created) == [5, 6])
            let a = try store.open("a")
            let b = try store.open("b")
            #expect(a.epoch == epochs["a"] && b.epoch == epochs["b"])
            #expect(a.lastSequence == 2 && b.lastSequence == 1)
            #expect(try a.records(after: 0, limit: 10).map { String(decoding: $0.payload, as: UTF8.self) } == ["a1", "a2"])
            var seen: [String] = []
            try b.forEachRecord(after: 0) { seen.append(String(decoding: $0.payload, as: UTF8.self)) }
            #expect(seen == ["b1"])
            #expect(try a.snapshotSequences() == [0, 2])
            #expect(try a.latestSnapshot()?.payload == [9])
            #expect(try b.snapshot(at: 0)?.payload == [2])
            #expect(try store.values(of: "a") == ["admin-token": "t"])
            #expect(try store.bytes(of: "a") == 1 + 1 + 2 + 2)

            try store.delete("a")
            #expect(try store.worlds().map(\.name) == ["b"])
            #expect(throws: StoreError.self) { _ = try store.open("a") }
            #expect(try store.values(of: "a").isEmpty)
            #expect(try b.records(after: 0, limit: 10).count == 1, "the other world is untouched")
        }
    }

    @Test("worlds are listed in creation order, not by name or creation instant (a clock that went back, the same millisecond)")
    func creationOrder() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.simulations.sqlite")
            // More than nine, so that "10" sorting before "2" as text would show.
            let names = ["zz", "aa", "mm", "bb"] + (0..<9).map { "w\($0)" }
            do {
                let store = try WorldStore(path: path, logger: quietLogger)
                for (index, name) in names.enumerated() {
                    _ = try store.create(name, instant: Int64([10, 10, 5, 20][index % 4]), genesis: [1])
                }
                try store.delete("bb")
                _ = try store.create("cc", instant: 1, genesis: [1])
                #expect(try store.values(of: "cc").isEmpty, "the order is the store's own")
                // A world from before the order was kept has none: it comes first.
                try store.connection.execute("DELETE FROM value WHERE world = 'w3' AND key = 'created.order'")
            }
            let store = try WorldStore(path: path, logger: quietLogger)
            let expected = ["w3", "zz", "aa", "mm"] + names.dropFirst(4).filter { $0 != "w3" } + ["cc"]
            #expect(try store.worlds().map(\.name) == expected)
        }
    }

    @Test("a world's size, counted once and then kept, agrees with the file after appends, snapshots, trims, deletes and re-creation")
    func sizes() throws {
        let store = try WorldStore(path: ":memory:", logger: quietLogger)
        let a = try store.create("a", instant: 0, genesis: [0, 0])
        let b = try store.create("b", instant: 0, genesis: nil)
        func agrees(_ step: String) throws {
            for name in ["a", "b", "c"] {
                #expect(try store.bytes(of: name) == store.countBytes(of: name), "\(name) after \(step)")
            }
        }
        try agrees("creation")
        for sequence in 1...30 as ClosedRange<UInt64> {
            try a.append([Self.record(sequence, String(repeating: "x", count: Int(sequence)))])
            if sequence % 3 == 0 { try b.append([Self.record(sequence / 3, "b")]) }
            if sequence % 10 == 0 { try a.writeSnapshot(sequence: sequence, instant: 0, payload: [1, 2, 3], keeping: 2) }
            if sequence % 15 == 0 { try a.trim(keepingRecords: 4) }
            try agrees("record \(sequence)")
        }
        #expect(throws: StoreError.self) { try a.append([Self.record(1, "refused")]) }
        try agrees("a refused append")
        try store.delete("a")
        try agrees("deleting a")
        #expect(try store.bytes(of: "a") == 0)
        let again = try store.create("a", instant: 1, genesis: [7])
        try again.append([Self.record(1, "new")])
        try agrees("creating a again")
        #expect(try store.bytes(of: "a") == 1 + 3)
    }

    @Test("trim deletes what the latest snapshot makes unnecessary, in its own world only")
    func trim() throws {
        let store = try WorldStore(path: ":memory:", logger: quietLogger)
        let a = try store.create("a", instant: 0, genesis: [0])
        let b = try store.create("b", instant: 0, genesis: [0])
        try a.append((1...10).map { Self.record($0, "a\($0)") })
        try b.append((1...10).map { Self.record($0, "b\($0)") })
        try a.writeSnapshot(sequence: 8, instant: 0, payload: [8])
        #expect(try a.trim(keepingRecords: 2) == 6, "records 1 to 6 go; 7 and 8 stay before the snapshot")
        #expect(try a.records(after: 0, limit: 20).map(\.sequence) == [7, 8, 9, 10])
        #expect(try a.snapshotSequences() == [8], "the genesis no longer starts a replay")
        #expect(try b.records(after: 0, limit: 20).count == 10, "the other world is untouched")
        #expect(try b.trim(keepingRecords: 0) == 0, "without a snapshot past genesis nothing is needed less")
    }

    @Test("a command log is refused as a world store, and a world store as a command log")
    func refusesTheOtherKind() throws {
        try withTemporaryDirectory { dir in
            let log = dir.file("islet.sqlite")
            _ = try CommandLog(path: log, logger: quietLogger)
            #expect(throws: StoreError.foreignApplication) { _ = try WorldStore(path: log, logger: quietLogger) }
            let worlds = dir.file("islet.simulations.sqlite")
            _ = try WorldStore(path: worlds, logger: quietLogger)
            let refusal = #expect(throws: StoreError.foreignApplication) { _ = try CommandLog(path: worlds, logger: quietLogger) }
            #expect(refusal?.description.contains("store of the simulations other than default") == true, "\(String(describing: refusal))")
        }
    }

    @Test("a second open of a store in use is refused")
    func inUse() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.simulations.sqlite")
            let store = try WorldStore(path: path, logger: quietLogger)
            #expect(throws: StoreError.inUse) { _ = try WorldStore(path: path, logger: quietLogger) }
            withExtendedLifetime(store) {}
        }
    }
}
