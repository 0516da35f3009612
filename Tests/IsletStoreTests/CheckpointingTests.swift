import Foundation
import Testing

@testable import IsletStore

@Suite("Background checkpointing")
struct CheckpointingTests {
    @Test("Committed pages reach the database file through the background checkpointer")
    func backgroundCheckpointCopiesWAL() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let copy = dir.file("copy.sqlite")
            let log = try CommandLog(
                path: path, durability: .normal, checkpointing: .background(walPages: 4), logger: quietLogger)
            let written = (1...200).map { record($0, bytes: 300) }
            try log.append(Array(written[..<100]))
            try log.append(Array(written[100...]))
            let checkpointer = try #require(log.checkpointer)
            checkpointer.waitUntilIdle()

            // Only the main file, without its WAL: it holds what the checkpoints copied.
            try fileBytes(path).write(to: URL(fileURLWithPath: copy))
            #expect(try readAll(openLog(copy)) == written)
            withExtendedLifetime(log) {}
        }
    }

    @Test("Inline checkpointing and :memory: stores run no checkpointer")
    func noCheckpointer() throws {
        try withTemporaryDirectory { dir in
            let inline = try CommandLog(path: dir.file("a.sqlite"), checkpointing: .inline, logger: quietLogger)
            #expect(inline.checkpointer == nil)
            #expect(try openLog(":memory:").checkpointer == nil)
            #expect(try openLog(dir.file("b.sqlite")).checkpointer != nil)
        }
    }

    @Test("A store with a background checkpointer closes cleanly, leaving no WAL behind")
    func closesCleanly() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            do {
                let log = try CommandLog(path: path, checkpointing: .background(walPages: 2), logger: quietLogger)
                try log.append((1...50).map { record($0, bytes: 300) })
            }
            #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(try readAll(openLog(path)).count == 50)
        }
    }
}
