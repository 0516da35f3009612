public import Logging

/// Many worlds' logs in one SQLite file: each world is an `OrderedLog` of its own (records,
/// snapshots, named values), and creating or deleting one is a single transaction, with no file
/// to create or remove. A server keeps every simulation but `default` here, so a world costs a
/// few rows, not a file and a connection.
///
/// ```swift
/// let store = try WorldStore(path: "islet.simulations.sqlite", durability: .normal, logger: logger)
/// let log = try store.create("h1", instant: now, genesis: bytes, values: ["created": "…"])
/// try log.append([LogRecord(sequence: 1, instant: now, kind: .batch, payload: batch)])
/// ```
///
/// - Warning: Not thread-safe: the store and every `WorldLog` of it share one connection; use them
///   from one thread or one serial queue.
public final class WorldStore {
    /// The database file, or `:memory:`.
    public let path: String
    let connection: SQLiteConnection
    let logger: Logger
    private let ownerLock: OwnerLock?
    /// Each world's bytes of records and snapshots, counted in one pass when first asked and
    /// then kept by appends; a world whose snapshots or records were replaced or deleted is
    /// counted again when next asked. Listing the simulations asks for every world: counted
    /// each time, that read every record in the file on the server's loop.
    private var sizes: [String: Int64]?

    /// "ISLW" in ASCII: a world store, which `CommandLog` refuses to open (and the reverse).
    static let applicationID: Int32 = 0x4953_4C57
    static let version: Int32 = 1
    private static let schema = """
        CREATE TABLE world (
            name TEXT PRIMARY KEY, epoch TEXT NOT NULL, created INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE value (
            world TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (world, key)) WITHOUT ROWID;
        CREATE TABLE record (
            world TEXT NOT NULL, sequence INTEGER NOT NULL, instant INTEGER NOT NULL, kind INTEGER NOT NULL,
            payload BLOB NOT NULL);
        CREATE UNIQUE INDEX record_order ON record (world, sequence);
        CREATE TABLE snapshot (
            world TEXT NOT NULL, sequence INTEGER NOT NULL, instant INTEGER NOT NULL, payload BLOB NOT NULL);
        CREATE UNIQUE INDEX snapshot_order ON snapshot (world, sequence);
        """

    /// Opens the store at `path`, creating it if the file is missing or empty; or, `readOnly`,
    /// an existing store a running server may be writing (no lock taken, nothing written).
    /// - Throws: `StoreError` naming the file: another program's database or a newer version
    ///   (`.foreignApplication`, `.newerSchema`), `.inUse`, `.notAStore` (read-only, no store
    ///   there), or a storage error.
    public init(path: String, durability: Durability = .normal, readOnly: Bool = false, logger: Logger) throws {
        var logger = logger
        logger[metadataKey: "islet.store.path"] = "\(path)"
        let connection = try SQLiteConnection(path: path, readOnly: readOnly)
        let isFile = path != ":memory:" && !path.isEmpty
        self.ownerLock = isFile && !readOnly ? try OwnerLock(path: path) : nil
        let header = try StoreSchema.readHeader(connection)
        if !header.isEmpty {
            guard header.applicationID == Self.applicationID else {
                throw StoreError.foreignApplication(path: path, applicationID: header.applicationID)
            }
            guard header.userVersion <= Self.version else {
                throw StoreError.newerSchema(path: path, found: header.userVersion, known: Self.version)
            }
        }
        if readOnly {
            guard !header.isEmpty else { throw StoreError.notAStore(path: path, detail: "the file holds no world store") }
            self.path = path
            self.connection = connection
            self.logger = logger
            return
        }
        _ = try connection.scalarText("PRAGMA journal_mode = WAL")
        try connection.execute(
            "PRAGMA synchronous = \(durability.synchronousLevel); PRAGMA busy_timeout = 5000; "
                + "PRAGMA journal_size_limit = 67108864;")
        if header.isEmpty {
            try connection.execute(
                "BEGIN IMMEDIATE; \(Self.schema) PRAGMA application_id = \(Self.applicationID); "
                    + "PRAGMA user_version = \(Self.version); COMMIT;")
            logger.info("world store created")
        }
        self.path = path
        self.connection = connection
        self.logger = logger
    }

    /// The value holding a world's place in creation order (1, 2, …): the APNs ingress and
    /// channels look for a token in creation order, so a token a fork copied goes to its source
    /// also after a restart.
    static let creationOrderKey = "created.order"

    /// A world as listed: its name, epoch and creation instant (ms since the Unix epoch).
    public struct World: Hashable, Sendable {
        public var name: String
        public var epoch: String
        public var created: Int64
    }

    /// Every world, in creation order: by the sequence `create` stores (`created.order`); worlds
    /// from before it kept one come first, by creation instant and name.
    public func worlds() throws -> [World] {
        let statement = try self.connection.prepare(
            """
            SELECT name, epoch, created FROM world LEFT JOIN value ON value.world = world.name AND value.key = ?1
            ORDER BY value.value IS NOT NULL, CAST(value.value AS INTEGER), created, name
            """)
        try statement.bind(Self.creationOrderKey, at: 1)
        var worlds: [World] = []
        while try statement.step() {
            worlds.append(
                World(
                    name: statement.text(at: 0) ?? "", epoch: statement.text(at: 1) ?? "",
                    created: statement.int64(at: 2)))
        }
        return worlds
    }

    /// Creates a world whose log starts with the genesis snapshot `genesis` (sequence 0), with
    /// `values` stored beside it, all in one transaction: it exists whole or not at all. Without
    /// `genesis`, `values` must say where revision 0 comes from (a fork names its source).
    /// - Throws: `StoreError.inUse` naming the world when it exists, or a storage error.
    public func create(_ name: String, instant: Int64, genesis: [UInt8]?, values: [String: String] = [:]) throws
        -> WorldLog
    {
        let epoch = StoreSchema.makeEpoch()
        try self.inTransaction {
            let exists = try self.connection.prepare("SELECT 1 FROM world WHERE name = ?1")
            try exists.bind(name, at: 1)
            guard try !exists.step() else { throw StoreError.inUse(path: "\(self.path) (world \(name))") }
            let world = try self.connection.prepare("INSERT INTO world (name, epoch, created) VALUES (?1, ?2, ?3)")
            try world.bind(name, at: 1)
            try world.bind(epoch, at: 2)
            try world.bind(instant, at: 3)
            try world.run()
            if let genesis {
                let snapshot = try self.connection.prepare(
                    "INSERT INTO snapshot (world, sequence, instant, payload) VALUES (?1, 0, ?2, ?3)")
                try snapshot.bind(name, at: 1)
                try snapshot.bind(instant, at: 2)
                try snapshot.bind(genesis, at: 3)
                try snapshot.run()
            }
            self.forgetSize(of: name)
            let order = try self.connection.prepare(
                """
                INSERT INTO value (world, key, value)
                SELECT ?1, ?2, COALESCE(MAX(CAST(value AS INTEGER)), 0) + 1 FROM value WHERE key = ?2
                """)
            try order.bind(name, at: 1)
            try order.bind(Self.creationOrderKey, at: 2)
            try order.run()
            for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                let insert = try self.connection.prepare("INSERT INTO value (world, key, value) VALUES (?1, ?2, ?3)")
                try insert.bind(name, at: 1)
                try insert.bind(key, at: 2)
                try insert.bind(value, at: 3)
                try insert.run()
            }
        }
        return WorldLog(store: self, name: name, epoch: epoch, lastSequence: 0)
    }

    /// The log of an existing world.
    /// - Throws: `StoreError.notAStore` when there is no such world.
    public func open(_ name: String) throws -> WorldLog {
        let statement = try self.connection.prepare("SELECT epoch FROM world WHERE name = ?1")
        try statement.bind(name, at: 1)
        guard try statement.step(), let epoch = statement.text(at: 0) else {
            throw StoreError.notAStore(path: self.path, detail: "no world \(name)")
        }
        let last = try self.int64(
            "SELECT max(m) FROM (SELECT max(sequence) AS m FROM record WHERE world = ?1 "
                + "UNION ALL SELECT max(sequence) FROM snapshot WHERE world = ?1)", name)
        return WorldLog(store: self, name: name, epoch: epoch, lastSequence: UInt64(max(last ?? 0, 0)))
    }

    /// The values stored beside a world.
    public func values(of name: String) throws -> [String: String] {
        let statement = try self.connection.prepare("SELECT key, value FROM value WHERE world = ?1 AND key != ?2")
        try statement.bind(name, at: 1)
        try statement.bind(Self.creationOrderKey, at: 2)
        var values: [String: String] = [:]
        while try statement.step() { values[statement.text(at: 0) ?? ""] = statement.text(at: 1) ?? "" }
        return values
    }

    /// Binds the store to the command log `logID` names (the first log to open it), so that
    /// another log's server does not take its worlds for its own.
    /// - Throws: `StoreError.otherLogsWorlds` when another log holds it.
    public func claim(for logID: String) throws {
        // The store's own values sit under the world "", which no world can be named.
        let read = try self.connection.prepare("SELECT value FROM value WHERE world = '' AND key = ?1")
        try read.bind(CommandLog.identityKey, at: 1)
        if try read.step() {
            guard read.text(at: 0) == logID else { throw StoreError.otherLogsWorlds(path: self.path) }
            return
        }
        let insert = try self.connection.prepare("INSERT INTO value (world, key, value) VALUES ('', ?1, ?2)")
        try insert.bind(CommandLog.identityKey, at: 1)
        try insert.bind(logID, at: 2)
        try insert.run()
    }

    /// Removes a world with its records, snapshots and values, in one transaction.
    public func delete(_ name: String) throws {
        try self.inTransaction {
            for table in ["record", "snapshot", "value"] {
                let statement = try self.connection.prepare("DELETE FROM \(table) WHERE world = ?1")
                try statement.bind(name, at: 1)
                try statement.run()
            }
            let world = try self.connection.prepare("DELETE FROM world WHERE name = ?1")
            try world.bind(name, at: 1)
            try world.run()
            self.forgetSize(of: name)
        }
    }

    /// The bytes of a world's records and snapshots.
    /// - Complexity: O(1), but O(records in the file) the first time and O(the world's
    ///   records) after its snapshots or records were replaced or deleted.
    public func bytes(of name: String) throws -> Int64 {
        if self.sizes == nil {
            var sizes: [String: Int64] = [:]
            for table in ["record", "snapshot"] {
                let statement = try self.connection.prepare(
                    "SELECT world, sum(length(payload)) FROM \(table) GROUP BY world")
                while try statement.step() { sizes[statement.text(at: 0) ?? "", default: 0] += statement.int64(at: 1) }
            }
            self.sizes = sizes
        }
        if let size = self.sizes?[name] { return size }
        let size = try self.countBytes(of: name)
        self.sizes?[name] = size
        return size
    }

    /// The bytes of a world's records and snapshots, read from the file.
    func countBytes(of name: String) throws -> Int64 {
        try self.int64(
            "SELECT (SELECT coalesce(sum(length(payload)), 0) FROM record WHERE world = ?1) "
                + "+ (SELECT coalesce(sum(length(payload)), 0) FROM snapshot WHERE world = ?1)", name) ?? 0
    }

    /// Keeps a counted world's size after records were appended to it.
    func add(bytes: Int, to name: String) {
        if let size = self.sizes?[name] { self.sizes?[name] = size + Int64(bytes) }
    }

    /// Makes the next `bytes(of:)` count the world again (called inside a transaction, before
    /// it commits: forgetting is right whether or not it does).
    func forgetSize(of name: String) {
        self.sizes?[name] = nil
    }

    func int64(_ sql: String, _ name: String) throws -> Int64? {
        let statement = try self.connection.prepare(sql)
        try statement.bind(name, at: 1)
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.int64(at: 0)
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it or the commit throws.
    func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try self.connection.execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try self.connection.execute("COMMIT")
            return result
        } catch {
            if !self.connection.isAutocommit { try? self.connection.execute("ROLLBACK") }
            throw error
        }
    }
}

@available(*, unavailable, message: "WorldStore is not thread-safe: use it from one thread")
extension WorldStore: Sendable {}

/// One world's log inside a `WorldStore`.
public final class WorldLog: OrderedLog {
    public let store: WorldStore
    public let name: String
    public let epoch: String
    public private(set) var lastSequence: UInt64

    init(store: WorldStore, name: String, epoch: String, lastSequence: UInt64) {
        self.store = store
        self.name = name
        self.epoch = epoch
        self.lastSequence = lastSequence
    }

    public var path: String { "\(self.store.path) (world \(self.name))" }

    public func append(_ records: [LogRecord]) throws {
        guard let last = records.last else { return }
        try self.store.inTransaction {
            let insert = try self.store.connection.prepare(
                "INSERT INTO record (world, sequence, instant, kind, payload) VALUES (?1, ?2, ?3, ?4, ?5)")
            var previous = self.lastSequence
            for record in records {
                guard record.sequence > previous else {
                    throw StoreError.sequenceNotIncreasing(path: self.path, sequence: record.sequence, last: previous)
                }
                guard record.sequence <= UInt64(Int64.max) else {
                    throw StoreError.sequenceTooLarge(path: self.path, sequence: record.sequence)
                }
                try insert.bind(self.name, at: 1)
                try insert.bind(Int64(record.sequence), at: 2)
                try insert.bind(record.instant, at: 3)
                try insert.bind(Int64(record.kind.rawValue), at: 4)
                try insert.bind(record.payload, at: 5)
                _ = try insert.step()
                insert.reset()
                previous = record.sequence
            }
        }
        self.lastSequence = last.sequence
        self.store.add(bytes: records.reduce(0) { $0 + $1.payload.count }, to: self.name)
    }

    public func forEachRecord(after sequence: UInt64, _ body: (LogRecord) throws -> Void) throws {
        let statement = try self.store.connection.prepare(
            "SELECT sequence, instant, kind, payload FROM record WHERE world = ?1 AND sequence > ?2 ORDER BY sequence")
        try statement.bind(self.name, at: 1)
        try statement.bind(Int64(clamping: sequence), at: 2)
        while try statement.step() { try body(try self.record(statement)) }
    }

    public func records(after sequence: UInt64, limit: Int) throws -> [LogRecord] {
        let statement = try self.store.connection.prepare(
            "SELECT sequence, instant, kind, payload FROM record WHERE world = ?1 AND sequence > ?2 "
                + "ORDER BY sequence LIMIT ?3")
        try statement.bind(self.name, at: 1)
        try statement.bind(Int64(clamping: sequence), at: 2)
        try statement.bind(Int64(max(limit, 0)), at: 3)
        var records: [LogRecord] = []
        while try statement.step() { records.append(try self.record(statement)) }
        return records
    }

    public func writeSnapshot(sequence: UInt64, instant: Int64, payload: [UInt8], keeping: Int) throws {
        precondition(keeping >= 1, "a log keeps at least one snapshot")
        try self.store.inTransaction {
            self.store.forgetSize(of: self.name)
            let latest = UInt64(max(try self.store.int64("SELECT max(sequence) FROM snapshot WHERE world = ?1", self.name) ?? 0, 0))
            // The genesis (0) may come late: a fork's is written after its first records.
            guard sequence == 0 || (sequence >= latest && sequence <= self.lastSequence) else {
                throw StoreError.snapshotOutOfOrder(
                    path: self.path, sequence: sequence, latest: latest, last: self.lastSequence)
            }
            let insert = try self.store.connection.prepare(
                "INSERT OR REPLACE INTO snapshot (world, sequence, instant, payload) VALUES (?1, ?2, ?3, ?4)")
            try insert.bind(self.name, at: 1)
            try insert.bind(Int64(sequence), at: 2)
            try insert.bind(instant, at: 3)
            try insert.bind(payload, at: 4)
            try insert.run()
            let prune = try self.store.connection.prepare(
                """
                DELETE FROM snapshot WHERE world = ?1 AND sequence != 0 AND sequence NOT IN
                (SELECT sequence FROM snapshot WHERE world = ?1 ORDER BY sequence DESC LIMIT ?2)
                """)
            try prune.bind(self.name, at: 1)
            try prune.bind(Int64(keeping), at: 2)
            try prune.run()
        }
    }

    @discardableResult
    public func trim(keepingRecords: Int) throws -> Int {
        precondition(keepingRecords >= 0, "keepingRecords must not be negative")
        return try self.store.inTransaction {
            self.store.forgetSize(of: self.name)
            guard let latest = try self.store.int64("SELECT max(sequence) FROM snapshot WHERE world = ?1", self.name)
            else { return 0 }
            let boundary = try self.store.connection.prepare(
                "SELECT sequence FROM record WHERE world = ?1 AND sequence <= ?2 ORDER BY sequence DESC LIMIT 1 OFFSET ?3")
            try boundary.bind(self.name, at: 1)
            try boundary.bind(latest, at: 2)
            try boundary.bind(Int64(keepingRecords), at: 3)
            guard try boundary.step() else { return 0 }
            let through = boundary.int64(at: 0)
            boundary.reset()
            let delete = try self.store.connection.prepare("DELETE FROM record WHERE world = ?1 AND sequence <= ?2")
            try delete.bind(self.name, at: 1)
            try delete.bind(through, at: 2)
            try delete.run()
            let removed = self.store.connection.changes
            let stale = try self.store.connection.prepare(
                "DELETE FROM snapshot WHERE world = ?1 AND sequence < ?2 AND sequence < ?3")
            try stale.bind(self.name, at: 1)
            try stale.bind(through, at: 2)
            try stale.bind(latest, at: 3)
            try stale.run()
            return removed
        }
    }

    public func latestSnapshot() throws -> LogSnapshot? {
        try self.snapshot(
            "SELECT sequence, instant, payload FROM snapshot WHERE world = ?1 ORDER BY sequence DESC LIMIT 1", nil)
    }

    public func snapshot(at sequence: UInt64) throws -> LogSnapshot? {
        try self.snapshot(
            "SELECT sequence, instant, payload FROM snapshot WHERE world = ?1 AND sequence = ?2", sequence)
    }

    public func snapshotSequences() throws -> [UInt64] {
        let statement = try self.store.connection.prepare(
            "SELECT sequence FROM snapshot WHERE world = ?1 ORDER BY sequence")
        try statement.bind(self.name, at: 1)
        var sequences: [UInt64] = []
        while try statement.step() { sequences.append(UInt64(max(statement.int64(at: 0), 0))) }
        return sequences
    }

    private func snapshot(_ sql: String, _ sequence: UInt64?) throws -> LogSnapshot? {
        let statement = try self.store.connection.prepare(sql)
        try statement.bind(self.name, at: 1)
        if let sequence { try statement.bind(Int64(clamping: sequence), at: 2) }
        guard try statement.step() else { return nil }
        return LogSnapshot(
            sequence: UInt64(max(statement.int64(at: 0), 0)), instant: statement.int64(at: 1),
            payload: statement.bytes(at: 2))
    }

    private func record(_ statement: SQLiteStatement) throws -> LogRecord {
        let sequence = statement.int64(at: 0)
        guard sequence >= 0, let kind = LogRecord.Kind(rawValue: UInt8(clamping: statement.int64(at: 2))) else {
            throw StoreError.corrupt(path: self.path, detail: "record \(sequence) is malformed", code: nil)
        }
        return LogRecord(
            sequence: UInt64(sequence), instant: statement.int64(at: 1), kind: kind, payload: statement.bytes(at: 3))
    }
}

@available(*, unavailable, message: "WorldLog is not thread-safe: use it from one thread")
extension WorldLog: Sendable {}
