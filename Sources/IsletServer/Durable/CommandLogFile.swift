import IsletStore
import IsletCore
import Logging

/// A command log opened by the `islet store` tools (export, import, compact, info). It lives in
/// IsletServer because `islet` may import only this module.
public final class CommandLogFile {
    /// What `compact(keepingRecords:)` removed.
    public struct Compaction: Sendable, Equatable {
        /// How many records were deleted.
        public var removedRecords: Int
        /// The highest sequence deleted, or nil when nothing was.
        public var removedThrough: UInt64?
        /// The size of the database file before and after, in bytes.
        public var bytesBefore: Int64
        public var bytesAfter: Int64
    }

    private let log: CommandLog

    /// Opens the log at `path`: exclusively (it is created if missing), or read-only beside a
    /// server that is using it.
    /// - Throws: `StoreError` naming the file when it cannot be used.
    public init(path: String, readOnly: Bool = false) throws {
        let logger = Logger(label: "islet.store") { _ in SwiftLogNoOpLogHandler() }
        self.log = try CommandLog(path: path, access: readOnly ? .readOnly : .exclusive, logger: logger)
    }

    /// The random identifier made when the store was created, so a new log is told from an old one.
    public var epoch: String { self.log.epoch }
    /// The highest sequence stored in the log or a snapshot (the last revision); 0 for a new store.
    public var lastSequence: UInt64 { self.log.lastSequence }

    /// The number of records in the log.
    public func recordCount() throws -> Int { try self.log.recordCount() }

    /// The sequence of the oldest record still in the log (compaction removes older ones), or nil.
    public func firstRecordSequence() throws -> UInt64? { try self.log.firstRecordSequence() }

    /// The sequences of the snapshots kept, in increasing order.
    public func snapshotSequences() throws -> [UInt64] { try self.log.snapshotSequences() }

    /// Writes the whole log as scenario lines (`ScenarioExport`).
    /// - Returns: how many lines were written.
    public func exportScenario(to sink: (ScenarioLine) throws -> Void) throws -> Int {
        try ScenarioExport.export(self.log, to: sink)
    }

    /// Replays scenario lines into this log, which must hold no revision (`ScenarioImport`).
    public func importScenario(file path: String, configuration: IsletConfiguration) throws -> ImportSummary {
        try ScenarioImport.run(file: path, into: self.log, configuration: configuration)
    }

    /// Deletes the records before the latest snapshot except the `keepingRecords` newest of them,
    /// and shrinks the file.
    /// - Throws: `CompactionRefused` while a fork of `default` still needs the log (its genesis
    ///   snapshot is written when a server starts); `StoreError`.
    public func compact(keepingRecords: Int) throws -> Compaction {
        let logger = Logger(label: "islet.store") { _ in SwiftLogNoOpLogHandler() }
        if let fork = try SimulationStorage.forksAwaitingGenesis(besides: self.log.path, logger: logger).first {
            throw CompactionRefused(
                description: "\(self.log.path): simulation \(fork.id) is a fork of default at revision \(fork.rev) "
                    + "whose first snapshot is not written yet, so it needs this log's records; start islet serve "
                    + "once (it writes the snapshot at start), stop it, then compact")
        }
        let report = try self.log.compact(keepingRecords: keepingRecords)
        return Compaction(
            removedRecords: report.removedRecords, removedThrough: report.removedThrough,
            bytesBefore: report.bytesBefore, bytesAfter: report.bytesAfter)
    }

    /// What `repair(keepingCopyAt:)` did.
    public struct Repair: Sendable, Equatable {
        /// The first record that did not replay, or nil when the log replays (nothing was done).
        public var firstBadRecord: UInt64?
        /// How many records were deleted (that one and every later one).
        public var removedRecords: Int
        /// The last revision of the repaired log.
        public var lastSequence: UInt64
    }

    /// Replays the log as `islet serve` does; if a record does not replay, keeps a copy of the
    /// whole file at `copyPath` first, then deletes that record and every later one (and the
    /// snapshots from it on), and checks that the rest replays.
    /// - Throws: `RecoveryError` when the log does not replay for another reason (a snapshot
    ///   that cannot be read, say), which cutting records cannot mend; `StoreError`.
    public func repair(keepingCopyAt copyPath: String) throws -> Repair {
        let configuration = IsletConfiguration()
        let logger = Logger(label: "islet.store") { _ in SwiftLogNoOpLogHandler() }
        do {
            _ = try StoreRecovery.recover(self.log, configuration: configuration, wall: Instant(millisecondsSinceEpoch: 0), logger: logger)
            return Repair(firstBadRecord: nil, removedRecords: 0, lastSequence: self.log.lastSequence)
        } catch let error as RecoveryError {
            guard let sequence = error.sequence else { throw error }
            try self.log.copy(to: copyPath)
            let removed = try self.log.truncate(from: sequence)
            _ = try StoreRecovery.recover(self.log, configuration: configuration, wall: Instant(millisecondsSinceEpoch: 0), logger: logger)
            return Repair(firstBadRecord: sequence, removedRecords: removed, lastSequence: self.log.lastSequence)
        }
    }

    /// True for the errors that say a command log or a scenario file cannot be used as asked, which
    /// an operator must act on: a `StoreError` (the database is corrupt, another program's, newer or
    /// locked, or a read or write failed), a `RecoveryError` (its log does not replay), a
    /// `ScenarioError` or a `CompactionRefused`. `islet serve` and `islet store` exit with code 2 on them.
    public static func isOperatorError(_ error: any Error) -> Bool {
        error is StoreError || error is RecoveryError || error is ScenarioError || error is CompactionRefused
    }

    /// Whether `error` says another process holds the log at `path` (which it may have made a
    /// moment ago); not another file, such as the world store beside it.
    public static func isHeldElsewhere(_ error: any Error, path: String) -> Bool {
        (error as? StoreError).map { ($0 == .inUse || $0 == .busy) && $0.path == path } ?? false
    }
}

/// A compaction that would delete records a fork still needs (`islet store compact` exits 2).
public struct CompactionRefused: Error, Sendable, CustomStringConvertible {
    public let description: String
}
