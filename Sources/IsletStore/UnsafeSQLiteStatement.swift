// Touches SQLite's C API: prepared statements, binding and reading columns.
//
// Thread and lifetime rules: a statement belongs to the connection that prepared it and shares its
// one-thread-at-a-time rule. It keeps that connection alive and is finalized in `deinit`. Byte and
// text values are copied in (`SQLITE_TRANSIENT`) and copied out, so no Swift buffer outlives a call.

internal import CSQLite

/// A prepared SQL statement: bind parameters (1-based), step through rows, read columns (0-based).
///
/// Not thread-safe: use from the thread that uses its connection.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(self.handle)
    }

    func bind(_ value: Int64, at index: Int32) throws {
        try self.connection.check(sqlite3_bind_int64(self.handle, index, value), "sqlite3_bind_int64")
    }

    func bind(_ text: String, at index: Int32) throws {
        let rc = sqlite3_bind_text(self.handle, index, text, -1, islet_sqlite_transient())
        try self.connection.check(rc, "sqlite3_bind_text")
    }

    /// Binds bytes as a BLOB. An empty array binds a zero-length BLOB, not NULL.
    func bind(_ bytes: [UInt8], at index: Int32) throws {
        let rc = bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                return sqlite3_bind_zeroblob(self.handle, index, 0)
            }
            return sqlite3_bind_blob64(self.handle, index, base, UInt64(buffer.count), islet_sqlite_transient())
        }
        try self.connection.check(rc, "sqlite3_bind_blob64")
    }

    /// Advances to the next row.
    ///
    /// - Returns: true when a row is available, false when the statement is done.
    /// - Throws: `StoreError`; the statement is reset first, so it can be used again.
    func step() throws -> Bool {
        let rc = sqlite3_step(self.handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        sqlite3_reset(self.handle)
        try self.connection.check(rc, "sqlite3_step(\(self.sqlSummary))")
        return false
    }

    /// Steps a statement that returns no rows, then resets it for the next use.
    func run() throws {
        defer { self.reset() }
        _ = try self.step()
    }

    /// Rewinds the statement and clears its bindings so it can be reused.
    func reset() {
        sqlite3_reset(self.handle)
        sqlite3_clear_bindings(self.handle)
    }

    func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(self.handle, column) == SQLITE_NULL
    }

    func int64(at column: Int32) -> Int64 {
        sqlite3_column_int64(self.handle, column)
    }

    func text(at column: Int32) -> String? {
        sqlite3_column_text(self.handle, column).map { String(cString: $0) }
    }

    /// Copies a BLOB column out; NULL and zero-length BLOBs both read as `[]`.
    func bytes(at column: Int32) -> [UInt8] {
        // sqlite3_column_blob must be called before sqlite3_column_bytes (SQLite's documented order).
        guard let base = sqlite3_column_blob(self.handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(self.handle, column))
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    private var sqlSummary: String {
        sqlite3_sql(self.handle).map { IsletStore.sqlSummary(String(cString: $0)) } ?? "?"
    }
}
