// One of the few files that touch SQLite's C API (with UnsafeSQLiteStatement.swift and
// UnsafeSQLiteCheck.swift). Nothing here is public, so no C type can reach IsletStore's API.
//
// Thread and lifetime rules: a connection is opened with SQLITE_OPEN_NOMUTEX, so it must be used
// from one thread at a time; `CommandLog` owns exactly one and inherits that rule. The `sqlite3*`
// handle is owned by this class and closed in `deinit` with `sqlite3_close_v2`, which defers the
// close until every statement prepared on it is finalized; statements also keep their connection
// alive, so either may be released first.

internal import CSQLite

/// An open SQLite database handle: execute SQL, prepare statements, read a few pragmas.
///
/// Not thread-safe: use from one thread at a time.
final class SQLiteConnection {
    /// The path given to `sqlite3_open_v2`, kept to name the file in every error.
    let path: String
    private let handle: OpaquePointer
    /// Kept alive as long as SQLite may call it; SQLite holds only an unretained pointer.
    private var walHook: WALHook?

    /// Opens (or creates) the database at `path`. SQLite reads nothing yet: a file that is not a
    /// database is only detected by the first statement that reads it.
    ///
    /// - Parameter readOnly: open an existing file for reading only (never created).
    /// - Throws: `StoreError.cannotOpen` when the file cannot be opened or created.
    init(path: String, readOnly: Bool = false) throws {
        var db: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        let flags = access | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let detail = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw storeError(rc: rc, detail: detail, call: "sqlite3_open_v2", path: path)
        }
        self.path = path
        self.handle = db
    }

    deinit {
        sqlite3_close_v2(self.handle)
    }

    /// Runs one or more SQL statements that return no rows we need.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(self.handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard rc != SQLITE_OK else { return }
        let detail = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(rc))
        throw storeError(rc: rc, detail: detail, call: "sqlite3_exec(\(sqlSummary(sql)))", path: self.path)
    }

    /// Compiles `sql` into a statement that can be bound, stepped and reset many times.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(self.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        try self.check(rc, "sqlite3_prepare_v3(\(sqlSummary(sql)))")
        guard let statement else { preconditionFailure("prepared an empty SQL string: \(sql)") }
        return SQLiteStatement(handle: statement, connection: self)
    }

    /// The number of rows changed by the most recent INSERT, UPDATE or DELETE on this connection.
    var changes: Int { Int(sqlite3_changes64(self.handle)) }

    /// True unless the connection is inside an explicit transaction.
    var isAutocommit: Bool { sqlite3_get_autocommit(self.handle) != 0 }

    /// Calls `body` after every commit on this connection with the number of pages now in the WAL.
    ///
    /// This replaces SQLite's automatic checkpoint (which is itself a WAL hook), so whoever sets
    /// it takes over checkpointing. `body` runs on the committing thread, inside the commit call.
    func onCommit(_ body: @escaping (_ walPages: Int) -> Void) {
        let hook = WALHook(body)
        self.walHook = hook
        sqlite3_wal_hook(self.handle, walHookTrampoline, Unmanaged.passUnretained(hook).toOpaque())
    }

    /// How much a checkpoint may wait for, and make others wait for.
    enum CheckpointMode {
        /// Copies what it can without waiting for or blocking anyone.
        case passive
        /// Blocks new writers until every frame is copied and readers have moved to the database
        /// file, then truncates the WAL file to zero bytes.
        case truncate
    }

    /// Copies committed WAL pages into the database file, with the fsyncs that entails.
    ///
    /// - Returns: the frames in the WAL and how many of them are now in the database file.
    /// - Throws: `StoreError.busy` when a blocking mode could not get its locks within the busy timeout.
    @discardableResult
    func checkpoint(_ mode: CheckpointMode) throws -> (walPages: Int, checkpointed: Int) {
        let cMode =
            switch mode {
            case .passive: SQLITE_CHECKPOINT_PASSIVE
            case .truncate: SQLITE_CHECKPOINT_TRUNCATE
            }
        var walPages: Int32 = 0
        var checkpointed: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(self.handle, nil, cMode, &walPages, &checkpointed)
        try self.check(rc, "sqlite3_wal_checkpoint_v2(\(mode))")
        return (Int(walPages), Int(checkpointed))
    }

    /// Turns a result code from a call on this connection into a thrown `StoreError`.
    func check(_ rc: Int32, _ call: @autoclosure () -> String) throws {
        guard rc != SQLITE_OK, rc != SQLITE_ROW, rc != SQLITE_DONE else { return }
        let detail = String(cString: sqlite3_errmsg(self.handle))
        throw storeError(rc: rc, detail: detail, call: call(), path: self.path)
    }
}

extension SQLiteConnection {
    /// The first column of the first row of `sql`, or nil when it returns no row or NULL.
    func scalarInt64(_ sql: String) throws -> Int64? {
        let statement = try self.prepare(sql)
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.int64(at: 0)
    }

    /// The first column of the first row of `sql` as text, or nil when there is none.
    func scalarText(_ sql: String) throws -> String? {
        let statement = try self.prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(at: 0)
    }
}

/// The start of a statement, enough to recognise it in an error message.
func sqlSummary(_ sql: String) -> String {
    let line = sql.split(whereSeparator: \.isNewline).first.map(String.init) ?? sql
    return line.count > 48 ? String(line.prefix(48)) + "…" : line
}

/// The Swift closure behind `sqlite3_wal_hook`, owned by its connection.
private final class WALHook {
    let body: (Int) -> Void
    init(_ body: @escaping (Int) -> Void) { self.body = body }
}

/// SQLite calls this after each commit; the context is the connection's `WALHook`.
private func walHookTrampoline(
    context: UnsafeMutableRawPointer?, db: OpaquePointer?, name: UnsafePointer<CChar>?, pages: Int32
) -> Int32 {
    guard let context else { return SQLITE_OK }
    Unmanaged<WALHook>.fromOpaque(context).takeUnretainedValue().body(Int(pages))
    return SQLITE_OK
}
