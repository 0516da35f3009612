public import Logging

/// Islet's durable log on SQLite: an append-only sequence of records plus snapshots of the
/// engine state, so that a restart loads the latest snapshot and replays only the records after it.
///
/// The store knows nothing of Islet's types: records and snapshots carry bytes that the server
/// encodes. Opening a file checks that it is an Islet database of a known schema version (or
/// empty, in which case it is created), so a foreign, newer or damaged file is refused with a
/// `StoreError` and never silently replaced by an empty store. Files use WAL journaling.
///
/// Group commit: `append(_:)` writes all its records in one transaction and returns only after
/// the commit, so a server collects the batches accepted during one loop turn, appends them in one
/// call, and acknowledges them after it returns.
///
/// ```swift
/// let log = try CommandLog(path: "islet.sqlite", durability: .normal, logger: logger)
/// try log.append([LogRecord(sequence: log.lastSequence + 1, instant: now, kind: .batch, payload: bytes)])
/// ```
///
/// Checkpoints (copying the WAL into the database file, with fsyncs) are the one slow part of
/// WAL mode; with `.background` checkpointing (the default) a dispatch queue with a second
/// connection runs them, so `append` costs one transaction: about 0.01–0.1 ms at `.normal` and
/// 0.2–0.7 ms at `.full` on this project's machine (BENCHMARKS.md). Measured that way, a writer
/// thread for the appends themselves was not needed.
///
/// - Warning: Not thread-safe: use from one thread (the server's loop thread). Only the
///   background checkpointer, which it owns, runs elsewhere.
public final class CommandLog {
    /// The database file as given to `init`, or `:memory:`.
    public let path: String
    /// What a commit survives; fixed when the log is opened.
    public let durability: Durability
    /// A random identifier (16 hex digits) made when the store was created, so clients can tell
    /// a restarted server with the same log from one with a new log. Only ``truncate(from:)``
    /// (`islet store repair`) makes another: the revisions after the cut will be another history.
    public internal(set) var epoch: String
    /// The highest sequence stored in the log or a snapshot; 0 for a new store. Appended records
    /// must be numbered above it.
    public internal(set) var lastSequence: UInt64
    /// How this log uses its file.
    public let access: Access

    let connection: SQLiteConnection
    private let insertRecord: SQLiteStatement
    private let begin: SQLiteStatement
    private let commit: SQLiteStatement
    private let rollback: SQLiteStatement
    let logger: Logger
    /// Present with `.background` checkpointing; it holds a second connection to the file.
    let checkpointer: BackgroundCheckpointer?
    /// Held with `.exclusive` access to a file.
    private let ownerLock: OwnerLock?

    /// Opens the store at `path`, creating it if the file is missing or empty.
    ///
    /// - Parameters:
    ///   - path: a file path, or `:memory:` for a store that disappears when closed.
    ///   - durability: `.normal` survives a killed process, `.full` also survives power loss.
    ///   - checkpointing: `.background` keeps checkpoints off the appending thread; ignored for
    ///     `:memory:`, which has no WAL, and for `.readOnly` access.
    ///   - access: `.exclusive` (the default) locks the file against other writers; `.readOnly`
    ///     reads a log another process may be writing.
    ///   - logger: used at debug level, and at info when a store is created or compacted.
    /// - Throws: `StoreError` naming the file: `.notADatabase`, `.corrupt`, `.foreignApplication`,
    ///   `.newerSchema`, `.cannotOpen`, `.ioError`, `.busy`, `.inUse`, and `.notAStore` for a
    ///   read-only open of a file that holds no current Islet store.
    public init(
        path: String, durability: Durability = .normal, checkpointing: Checkpointing = .background,
        access: Access = .exclusive, logger: Logger
    ) throws {
        var logger = logger
        logger[metadataKey: "islet.store.path"] = "\(path)"
        let connection = try SQLiteConnection(path: path, readOnly: access == .readOnly)
        let isFile = path != ":memory:" && !path.isEmpty
        self.ownerLock = access == .exclusive && isFile ? try OwnerLock(path: path) : nil
        // Read-only checks first: nothing is written to a file that turns out not to be ours.
        let header = try StoreSchema.readHeader(connection)
        try StoreSchema.validate(header, path: path)
        let previousVersion: Int32
        if access == .readOnly {
            try StoreSchema.requireCurrent(header, path: path)
            previousVersion = header.userVersion
        } else {
            try Self.configure(connection, durability: durability, logger: logger)
            previousVersion = try StoreSchema.migrate(connection)
        }

        self.path = path
        self.durability = durability
        self.access = access
        self.connection = connection
        self.logger = logger
        self.epoch = try StoreSchema.readEpoch(connection)
        self.lastSequence = try Self.readLastSequence(connection)
        self.insertRecord = try connection.prepare(
            "INSERT INTO record (sequence, instant, kind, payload) VALUES (?1, ?2, ?3, ?4)")
        self.begin = try connection.prepare("BEGIN IMMEDIATE")
        self.commit = try connection.prepare("COMMIT")
        self.rollback = try connection.prepare("ROLLBACK")
        self.checkpointer =
            access == .readOnly
            ? nil
            : try Self.startCheckpointer(
                connection, durability: durability, checkpointing: checkpointing, logger: logger)
        self.logOpened(previousVersion: previousVersion)
    }

    deinit {
        self.checkpointer?.waitUntilIdle()
    }

    /// Appends `records` in one transaction: either all are durable when this returns, or none.
    ///
    /// - Parameter records: in strictly increasing sequence order, the first above `lastSequence`.
    ///   An empty array does nothing.
    /// - Throws: `StoreError.sequenceNotIncreasing` or `.sequenceTooLarge` for misnumbered records,
    ///   or a storage error; in every case nothing of `records` was written.
    /// - Complexity: O(n log m) for n records appended to a log of m.
    public func append(_ records: [LogRecord]) throws {
        guard let last = records.last else { return }
        try self.inTransaction {
            var previous = self.lastSequence
            for record in records {
                // Checked record by record inside the transaction: a bad one rolls back the group.
                try self.checkNext(record.sequence, after: previous)
                try self.insert(record)
                previous = record.sequence
            }
        }
        self.lastSequence = last.sequence
        self.catchUpCheckpointIfWALIsLong()
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it or the commit throws.
    func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try self.begin.run()
        do {
            let result = try body()
            try self.commit.run()
            return result
        } catch {
            if !self.connection.isAutocommit { try? self.rollback.run() }
            throw error
        }
    }

    /// See `BackgroundCheckpointer.walIsLong`. A failure (for example `SQLITE_BUSY` because the
    /// background checkpoint is running) only means the next append tries again.
    private func catchUpCheckpointIfWALIsLong() {
        guard let checkpointer = self.checkpointer, checkpointer.walIsLong else { return }
        do {
            try self.connection.checkpoint(.passive)
        } catch {
            self.logger.trace("catch-up checkpoint skipped", metadata: ["error.message": "\(error)"])
        }
    }

    private func checkNext(_ sequence: UInt64, after previous: UInt64) throws {
        guard sequence > previous else {
            throw StoreError.sequenceNotIncreasing(path: self.path, sequence: sequence, last: previous)
        }
        guard sequence <= UInt64(Int64.max) else {
            throw StoreError.sequenceTooLarge(path: self.path, sequence: sequence)
        }
    }

    private func insert(_ record: LogRecord) throws {
        defer { self.insertRecord.reset() }
        try self.insertRecord.bind(Int64(record.sequence), at: 1)
        try self.insertRecord.bind(record.instant, at: 2)
        try self.insertRecord.bind(Int64(record.kind.rawValue), at: 3)
        try self.insertRecord.bind(record.payload, at: 4)
        _ = try self.insertRecord.step()
    }
}

@available(*, unavailable, message: "CommandLog is not thread-safe: use it from one thread")
extension CommandLog: Sendable {}

extension CommandLog {
    /// Applies the durability and the pragmas every connection needs. WAL is set only after the
    /// header checks, because switching the journal mode writes to the file.
    private static func configure(_ connection: SQLiteConnection, durability: Durability, logger: Logger) throws {
        let mode = try connection.scalarText("PRAGMA journal_mode = WAL") ?? "?"
        if mode != "wal" {
            logger.debug("store is not in WAL mode", metadata: ["islet.store.journal_mode": "\(mode)"])
        }
        try connection.execute(
            """
            PRAGMA synchronous = \(durability.synchronousLevel);
            PRAGMA busy_timeout = 5000;
            PRAGMA journal_size_limit = 67108864;
            """)
    }

    private static func startCheckpointer(
        _ connection: SQLiteConnection, durability: Durability, checkpointing: Checkpointing, logger: Logger
    ) throws -> BackgroundCheckpointer? {
        guard let walPages = checkpointing.walPages, connection.path != ":memory:", !connection.path.isEmpty else {
            return nil
        }
        let checkpointer = try BackgroundCheckpointer(
            path: connection.path, durability: durability, walPages: walPages, logger: logger)
        connection.onCommit { checkpointer.committed(walPages: $0) }
        return checkpointer
    }

    static func readLastSequence(_ connection: SQLiteConnection) throws -> UInt64 {
        let record = try connection.scalarInt64("SELECT max(sequence) FROM record") ?? 0
        let snapshot = try connection.scalarInt64("SELECT max(sequence) FROM snapshot") ?? 0
        return UInt64(max(record, snapshot, 0))
    }

    private func logOpened(previousVersion: Int32) {
        let metadata: Logger.Metadata = [
            "islet.store.epoch": "\(self.epoch)",
            "islet.store.last_sequence": "\(self.lastSequence)",
            "islet.store.durability": "\(self.durability.rawValue)",
            "islet.store.schema_version": "\(StoreSchema.latestVersion)",
        ]
        if previousVersion == 0 {
            self.logger.info("created store", metadata: metadata)
        } else {
            if previousVersion < StoreSchema.latestVersion {
                self.logger.info(
                    "migrated store",
                    metadata: metadata.merging(["islet.store.from_version": "\(previousVersion)"]) { $1 })
            }
            self.logger.debug("opened store", metadata: metadata)
        }
    }
}
