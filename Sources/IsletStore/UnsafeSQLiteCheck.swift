// Touches SQLite's C API only for its result-code constants. This is the one place where SQLite
// result codes become `StoreError`s, so every call reports failures the same way.

internal import CSQLite

/// Turns a failing SQLite result code into the `StoreError` an operator can act on.
///
/// Codes that can only mean a bug in this module (`SQLITE_MISUSE`, `SQLITE_RANGE`) stop the process
/// with the call's name; everything else becomes a thrown error naming `path`.
/// - Parameters:
///   - rc: the (extended) result code.
///   - detail: SQLite's message for it (`sqlite3_errmsg`).
///   - call: the C function and, for statements, the start of their SQL.
///   - path: the database file.
func storeError(rc: Int32, detail: String, call: String, path: String) -> StoreError {
    let primary = rc & 0xFF
    precondition(
        primary != SQLITE_MISUSE && primary != SQLITE_RANGE, "\(call): \(detail) (rc \(rc)), a bug in IsletStore")
    switch primary {
    case SQLITE_NOTADB:
        return .notADatabase(path: path, detail: detail, code: rc)
    case SQLITE_CORRUPT:
        return .corrupt(path: path, detail: detail, code: rc)
    case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH:
        return .cannotOpen(path: path, detail: detail, code: rc)
    case SQLITE_IOERR, SQLITE_FULL, SQLITE_NOLFS:
        return .ioError(path: path, detail: detail, code: rc)
    case SQLITE_BUSY, SQLITE_LOCKED:
        return .busy(path: path, detail: detail, code: rc)
    default:
        return .sqliteFailure(path: path, call: call, detail: detail, code: rc)
    }
}
