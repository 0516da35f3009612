import Foundation
import Testing

@testable import IsletStore

@Suite("Opening and creating a store")
struct CommandLogOpeningTests {
    @Test("A new store gets a 16-hex-digit epoch that stays the same when reopened")
    func epochIsStable() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let epoch = try openLog(path).epoch
            #expect(epoch.count == 16)
            #expect(epoch.allSatisfy { $0.isHexDigit })
            #expect(try openLog(path).epoch == epoch)
        }
    }

    @Test("Two new stores get different epochs")
    func epochsDiffer() throws {
        #expect(try openLog(":memory:").epoch != openLog(":memory:").epoch)
    }

    @Test("A :memory: store works without touching the disk")
    func memoryStore() throws {
        let log = try openLog(":memory:")
        try log.append(records(1...3))
        #expect(try readAll(log) == records(1...3))
        #expect(log.path == ":memory:")
    }

    @Test("Durability sets SQLite's synchronous pragma", arguments: [(Durability.normal, Int64(1)), (.full, 2)])
    func durabilitySetsSynchronous(durability: Durability, level: Int64) throws {
        try withTemporaryDirectory { dir in
            let log = try openLog(dir.file("islet.sqlite"), durability: durability)
            #expect(try log.connection.scalarInt64("PRAGMA synchronous") == level)
            #expect(log.durability == durability)
        }
    }

    @Test("A file store uses WAL journaling and carries Islet's application_id")
    func walAndApplicationID() throws {
        try withTemporaryDirectory { dir in
            let log = try openLog(dir.file("islet.sqlite"))
            #expect(try log.connection.scalarText("PRAGMA journal_mode") == "wal")
            #expect(try log.connection.scalarInt64("PRAGMA application_id") == Int64(StoreSchema.applicationID))
        }
    }

    @Test("An existing empty file becomes a new store")
    func emptyFileIsCreated() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            let log = try openLog(path)
            #expect(log.lastSequence == 0)
            #expect(try log.recordCount() == 0)
        }
    }

    @Test("A path in a missing directory fails with cannotOpen naming the path")
    func missingDirectory() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("no/such/dir/islet.sqlite")
            let error = try #require(throws: StoreError.self) { try openLog(path) }
            #expect(error == .cannotOpen)
            #expect(error.path == path)
            #expect(error.description.contains(path))
            #expect(error.description.contains("directory exists"))
        }
    }

    @Test("A directory given as the database path fails with cannotOpen")
    func directoryPath() throws {
        try withTemporaryDirectory { dir in
            let error = try #require(throws: StoreError.self) { try openLog(dir.path) }
            #expect(error == .cannotOpen)
            #expect(error.description.contains(dir.path))
        }
    }
}
