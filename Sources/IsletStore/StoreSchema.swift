/// One step from schema version `version - 1` to `version`.
///
/// Steps are never edited once released: a change to the schema is a new step at the end.
struct Migration {
    let version: Int32
    let sql: String
}

/// The store's on-disk schema: Islet's `application_id` and the migration steps, and the checks
/// that refuse a file which is not an Islet database of a version this code knows.
///
/// The schema version lives in `PRAGMA user_version`; steps run in order, all in one transaction.
enum StoreSchema {
    /// "ISLT" in ASCII. SQLite files of other programs carry another value (or 0) and are refused.
    static let applicationID: Int32 = 0x4953_4C54

    static let migrations: [Migration] = [
        // Version 1: the log itself, and the key/value table that holds the epoch.
        Migration(
            version: 1,
            sql: """
                CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
                CREATE TABLE record (
                    sequence INTEGER PRIMARY KEY,
                    instant INTEGER NOT NULL,
                    kind INTEGER NOT NULL,
                    payload BLOB NOT NULL);
                """),
        // Version 2: snapshots, so startup replays only the tail of the log.
        Migration(
            version: 2,
            sql: """
                CREATE TABLE snapshot (
                    sequence INTEGER PRIMARY KEY,
                    instant INTEGER NOT NULL,
                    payload BLOB NOT NULL);
                """),
    ]

    static var latestVersion: Int32 { migrations.last?.version ?? 0 }

    /// What the database header says about the file, read without writing anything.
    struct Header: Equatable {
        var applicationID: Int32
        var userVersion: Int32
        /// Tables, indexes, views and triggers; 0 for a new or empty file.
        var schemaObjects: Int64

        var isEmpty: Bool { applicationID == 0 && userVersion == 0 && schemaObjects == 0 }
    }

    /// Reads the header. This is the first read of a file, so a file that is not a database, or
    /// whose first page is damaged, fails here, before anything is written to it.
    static func readHeader(_ connection: SQLiteConnection) throws -> Header {
        Header(
            applicationID: Int32(truncatingIfNeeded: try connection.scalarInt64("PRAGMA application_id") ?? 0),
            userVersion: Int32(truncatingIfNeeded: try connection.scalarInt64("PRAGMA user_version") ?? 0),
            schemaObjects: try connection.scalarInt64("SELECT count(*) FROM sqlite_schema") ?? 0)
    }

    /// Refuses files of other programs and of newer Islet versions; an empty file is accepted.
    static func validate(_ header: Header, path: String) throws {
        guard !header.isEmpty else { return }
        guard header.applicationID == applicationID else {
            throw StoreError.foreignApplication(path: path, applicationID: header.applicationID)
        }
        guard header.userVersion <= latestVersion else {
            throw StoreError.newerSchema(path: path, found: header.userVersion, known: latestVersion)
        }
    }

    /// Refuses, for reading only, a file that holds no Islet store of the current version (a read-only
    /// connection can neither create nor migrate one).
    static func requireCurrent(_ header: Header, path: String) throws {
        guard !header.isEmpty else { throw StoreError.notAStore(path: path, detail: "the file holds no store") }
        guard header.userVersion == latestVersion else {
            throw StoreError.notAStore(
                path: path,
                detail: "schema version \(header.userVersion), not \(latestVersion): "
                    + "open it once with islet serve or islet store compact to migrate it")
        }
    }

    /// Brings the database to `target` in one transaction; a new database also gets Islet's
    /// `application_id` and a fresh epoch.
    ///
    /// - Returns: the version the database had before, 0 for a new one.
    @discardableResult
    static func migrate(_ connection: SQLiteConnection, to target: Int32 = latestVersion) throws -> Int32 {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            // Read again under the write lock: another process may have created the schema meanwhile.
            let header = try readHeader(connection)
            try validate(header, path: connection.path)
            for step in migrations where step.version > header.userVersion && step.version <= target {
                try connection.execute(step.sql)
            }
            if header.isEmpty {
                try connection.execute("PRAGMA application_id = \(applicationID)")
                try insertEpoch(makeEpoch(), into: connection)
            }
            if target > header.userVersion {
                try connection.execute("PRAGMA user_version = \(target)")
            }
            try connection.execute("COMMIT")
            return header.userVersion
        } catch {
            if !connection.isAutocommit { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// Sixteen hex digits from the system's secure generator.
    static func makeEpoch() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = String(generator.next() as UInt64, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func insertEpoch(_ epoch: String, into connection: SQLiteConnection) throws {
        let statement = try connection.prepare("INSERT INTO meta (key, value) VALUES ('epoch', ?1)")
        try statement.bind(epoch, at: 1)
        try statement.run()
    }

    static func readEpoch(_ connection: SQLiteConnection) throws -> String {
        guard let epoch = try connection.scalarText("SELECT value FROM meta WHERE key = 'epoch'") else {
            throw StoreError.corrupt(path: connection.path, detail: "the epoch is missing", code: nil)
        }
        return epoch
    }
}
