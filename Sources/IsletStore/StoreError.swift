/// An error from the store, naming the database file and saying what the operator should do.
///
/// It is a struct with a private code so that cases can be added without breaking callers.
/// Compare against the static members (`error == .notADatabase`); equality looks at the code only,
/// never at the path or the message. `description` is the sentence to show an operator, for example
/// "islet.sqlite is not an Islet database (file is not a database): move it aside or pass --db
/// with another path".
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case notADatabase
        case corrupt
        case foreignApplication
        case newerSchema
        case cannotOpen
        case ioError
        case busy
        case inUse
        case otherLogsWorlds
        case notAStore
        case sequenceNotIncreasing
        case sequenceTooLarge
        case snapshotOutOfOrder
        case sqliteFailure
    }

    private let code: Code

    /// The database path the error concerns, as it was given to `CommandLog` (`:memory:` for a
    /// throwaway store). Empty on the static members used for comparison.
    public let path: String

    /// What went wrong, naming the file, and what to do about it.
    public let message: String

    /// SQLite's extended result code, when SQLite reported the error.
    public let sqliteCode: Int32?

    private init(_ code: Code, path: String = "", message: String = "", sqliteCode: Int32? = nil) {
        self.code = code
        self.path = path
        self.message = message
        self.sqliteCode = sqliteCode
    }

    public var description: String { self.message }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.code) }

    /// The file exists but is not an SQLite database (`SQLITE_NOTADB`).
    public static let notADatabase = Self(.notADatabase)
    /// The file is an SQLite database whose pages are damaged (`SQLITE_CORRUPT`).
    public static let corrupt = Self(.corrupt)
    /// The file is an SQLite database made by another program (its `application_id` is not Islet's).
    public static let foreignApplication = Self(.foreignApplication)
    /// The file was written by a newer Islet whose schema this version does not know.
    public static let newerSchema = Self(.newerSchema)
    /// The file cannot be opened or created: missing directory, permissions, read-only file system.
    public static let cannotOpen = Self(.cannotOpen)
    /// The operating system reported an I/O error, or the disk is full.
    public static let ioError = Self(.ioError)
    /// Another connection or process holds a lock on the database for too long.
    public static let busy = Self(.busy)
    /// Another open log (another `islet serve`, `islet store compact`, …) holds the file's lock.
    public static let inUse = Self(.inUse)
    /// A world store beside one command log belongs to another (`--db X` and `--db X.sqlite`
    /// name the same `X.simulations.sqlite`).
    public static let otherLogsWorlds = Self(.otherLogsWorlds)
    /// A read-only open found no Islet store at the path (missing, empty, or an older schema).
    public static let notAStore = Self(.notAStore)
    /// A record's sequence is not greater than the one before it: a bug in the caller.
    public static let sequenceNotIncreasing = Self(.sequenceNotIncreasing)
    /// A sequence is above `Int64.max`, which SQLite cannot store: a bug in the caller.
    public static let sequenceTooLarge = Self(.sequenceTooLarge)
    /// A snapshot's sequence is below the latest snapshot's or beyond the log: a bug in the caller.
    public static let snapshotOutOfOrder = Self(.snapshotOutOfOrder)
    /// Any other failure reported by SQLite; the message carries SQLite's own text.
    public static let sqliteFailure = Self(.sqliteFailure)
}

// Factories used inside the module; each message ends with what to do.
extension StoreError {
    static func notADatabase(path: String, detail: String, code: Int32?) -> Self {
        Self(
            .notADatabase, path: path,
            message: "\(path) is not an Islet database (\(detail)): move it aside or pass --db with another path",
            sqliteCode: code)
    }

    static func corrupt(path: String, detail: String, code: Int32?) -> Self {
        Self(
            .corrupt, path: path,
            message: "\(path) is corrupt (\(detail)): restore it from a backup or move it aside; "
                + "Islet will not start empty over it",
            sqliteCode: code)
    }

    static func foreignApplication(path: String, applicationID: Int32) -> Self {
        if applicationID == WorldStore.applicationID {
            return Self(
                .foreignApplication, path: path,
                message: "\(path) is Islet's store of the simulations other than default, not a command log: "
                    + "pass --db with the command log beside it (its name without .simulations)")
        }
        let owner = applicationID == 0 ? "no application_id, but it has tables" : "application_id \(hex(applicationID))"
        return Self(
            .foreignApplication, path: path,
            message: "\(path) is an SQLite database of another program (\(owner)): "
                + "move it aside or pass --db with another path")
    }

    static func newerSchema(path: String, found: Int32, known: Int32) -> Self {
        Self(
            .newerSchema, path: path,
            message: "\(path) has schema version \(found), but this islet knows versions up to \(known): "
                + "run a newer islet, or pass --db with another path")
    }

    static func cannotOpen(path: String, detail: String, code: Int32?) -> Self {
        Self(
            .cannotOpen, path: path,
            message: "cannot open \(path) (\(detail)): check that its directory exists and is writable, "
                + "or pass --db with another path",
            sqliteCode: code)
    }

    static func ioError(path: String, detail: String, code: Int32?) -> Self {
        Self(
            .ioError, path: path,
            message: "I/O error on \(path) (\(detail)): check the disk and its free space, then retry",
            sqliteCode: code)
    }

    static func busy(path: String, detail: String, code: Int32?) -> Self {
        Self(
            .busy, path: path,
            message: "\(path) is locked (\(detail)): stop the other process using it, or pass --db "
                + "with another path",
            sqliteCode: code)
    }

    static func inUse(path: String) -> Self {
        Self(
            .inUse, path: path,
            message: "\(path) is in use by another islet process (a server or a store command): stop it first, "
                + "or pass --db with another path")
    }

    static func otherLogsWorlds(path: String) -> Self {
        Self(
            .otherLogsWorlds, path: path,
            message: "\(path) holds the simulations of another command log (one made before this one at the "
                + "same path, or the other of --db X and --db X.sqlite, which share it): pass --db with the log it "
                + "belongs to, or move it aside (remove it with its log to start afresh)")
    }

    static func notAStore(path: String, detail: String) -> Self {
        Self(.notAStore, path: path, message: "\(path) is not an Islet store that can be read (\(detail))")
    }

    static func sequenceNotIncreasing(path: String, sequence: UInt64, last: UInt64) -> Self {
        Self(
            .sequenceNotIncreasing, path: path,
            message: "record sequence \(sequence) is not greater than the last sequence \(last) in \(path): "
                + "the caller must number records in increasing order (nothing of this append was written)")
    }

    static func sequenceTooLarge(path: String, sequence: UInt64) -> Self {
        Self(
            .sequenceTooLarge, path: path,
            message: "sequence \(sequence) is above \(Int64.max), the largest \(path) can store (nothing was written)")
    }

    static func snapshotOutOfOrder(path: String, sequence: UInt64, latest: UInt64, last: UInt64) -> Self {
        Self(
            .snapshotOutOfOrder, path: path,
            message: "snapshot sequence \(sequence) for \(path) must lie between the latest snapshot's (\(latest)) "
                + "and the last record's (\(last)) (nothing was written)")
    }

    static func sqliteFailure(path: String, call: String, detail: String, code: Int32?) -> Self {
        Self(.sqliteFailure, path: path, message: "\(call) failed on \(path) (\(detail))", sqliteCode: code)
    }
}

private func hex(_ value: Int32) -> String {
    "0x" + String(UInt32(bitPattern: value), radix: 16, uppercase: true)
}
