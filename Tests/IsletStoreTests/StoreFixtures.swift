import Foundation
import Logging

@testable import IsletStore

/// A directory of its own for one test, removed when the test's closure returns.
struct TemporaryDirectory {
    let path: String

    func file(_ name: String) -> String { self.path + "/" + name }
}

func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory.path + "/islet-store-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(TemporaryDirectory(path: path))
}

/// Tests log nowhere; they never bootstrap the logging system.
let quietLogger = Logger(label: "islet.store.tests") { _ in SwiftLogNoOpLogHandler() }

/// Opens without the owner lock, so a test may hold a writer and a reader on one file.
func openLog(_ path: String, durability: Durability = .normal, access: CommandLog.Access = .shared) throws
    -> CommandLog
{
    try CommandLog(path: path, durability: durability, access: access, logger: quietLogger)
}

/// A record whose payload is derived from its sequence, so reads can be checked byte for byte.
func record(_ sequence: UInt64, kind: LogRecord.Kind = .batch, bytes: Int = 24) -> LogRecord {
    let payload = (0..<bytes).map { UInt8(truncatingIfNeeded: sequence &* 31 &+ UInt64($0)) }
    return LogRecord(
        sequence: sequence, instant: 1_795_000_000_000 &+ Int64(truncatingIfNeeded: sequence), kind: kind,
        payload: payload)
}

func records(_ sequences: ClosedRange<UInt64>) -> [LogRecord] { sequences.map { record($0) } }

func readAll(_ log: CommandLog, after sequence: UInt64 = 0) throws -> [LogRecord] {
    var all: [LogRecord] = []
    try log.forEachRecord(after: sequence) { all.append($0) }
    return all
}

func fileBytes(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
}
