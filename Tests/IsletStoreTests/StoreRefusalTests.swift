import Foundation
import Testing

@testable import IsletStore

/// A file that is not a usable Islet database is refused with an error naming it, and is left as it was.
@Suite("Refusing files that are not usable Islet databases")
struct StoreRefusalTests {
    @Test("A file of garbage bytes is refused as not a database and left unchanged")
    func garbageFile() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
            try garbage.write(to: URL(fileURLWithPath: path))

            let error = try #require(throws: StoreError.self) { try openLog(path) }
            #expect(error == .notADatabase)
            #expect(error.path == path)
            #expect(error.description.contains("\(path) is not an Islet database"))
            #expect(error.description.contains("move it aside"))
            #expect(try fileBytes(path) == garbage)
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        }
    }

    @Test("An Islet database whose record pages were overwritten reports corruption when read")
    func damagedPages() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            // Closing the only connection checkpoints the WAL into the main file.
            try openLog(path).append((1...400).map { record($0, bytes: 200) })
            var bytes = try fileBytes(path)
            let pageSize = 4096
            bytes.replaceSubrange(4 * pageSize..<12 * pageSize, with: Data(repeating: 0xA5, count: 8 * pageSize))
            try bytes.write(to: URL(fileURLWithPath: path))

            let error = try #require(throws: StoreError.self) { try readAll(openLog(path)) }
            #expect(error == .corrupt)
            #expect(error.description.contains("\(path) is corrupt"))
        }
    }

    @Test("An SQLite database of another program is refused and left unchanged")
    func foreignTables() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("other.sqlite")
            do {
                let other = try SQLiteConnection(path: path)
                try other.execute("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('Ada');")
            }
            let before = try fileBytes(path)

            let error = try #require(throws: StoreError.self) { try openLog(path) }
            #expect(error == .foreignApplication)
            #expect(error.description.contains("\(path) is an SQLite database of another program"))
            #expect(try fileBytes(path) == before)
        }
    }

    @Test("An SQLite database with another application_id is refused even when it has no tables")
    func foreignApplicationID() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("other.sqlite")
            do { try SQLiteConnection(path: path).execute("PRAGMA application_id = 42") }

            let error = try #require(throws: StoreError.self) { try openLog(path) }
            #expect(error == .foreignApplication)
            #expect(error.description.contains("application_id 0x2A"))
        }
    }

    @Test("A database written by a newer Islet is refused and left unchanged")
    func newerSchema() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            do {
                let log = try openLog(path)
                try log.append(records(1...2))
                try log.connection.execute("PRAGMA user_version = \(StoreSchema.latestVersion + 1)")
            }
            let before = try fileBytes(path)

            let error = try #require(throws: StoreError.self) { try openLog(path) }
            #expect(error == .newerSchema)
            #expect(error.description.contains("schema version \(StoreSchema.latestVersion + 1)"))
            #expect(error.description.contains("run a newer islet"))
            #expect(try fileBytes(path) == before)
        }
    }

    @Test("Errors compare by kind only, whatever their path and message")
    func equalityIgnoresContext() {
        let error = StoreError.cannotOpen(path: "/a", detail: "x", code: 14)
        #expect(error == .cannotOpen)
        #expect(error != .ioError)
        #expect(error.sqliteCode == 14)
    }
}
