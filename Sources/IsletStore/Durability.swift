/// How hard a commit works to survive failures; it maps onto SQLite's `synchronous` pragma.
///
/// In WAL mode a commit writes its pages to the WAL file before `append` returns. With `.normal`
/// the WAL is only fsynced at checkpoints, so a killed process (kill -9, crash) loses nothing that
/// was committed, but an operating-system crash or power loss may lose the last commits. `.full`
/// fsyncs the WAL on every commit, so commits also survive power loss, at the cost of one fsync
/// per transaction (which is why appends should be grouped).
public enum Durability: String, Hashable, Sendable, CaseIterable {
    /// `synchronous=NORMAL`: survives a killed process. The default.
    case normal
    /// `synchronous=FULL`: also survives power loss.
    case full

    /// The value SQLite reports for `PRAGMA synchronous` in this mode.
    var synchronousLevel: Int64 {
        switch self {
        case .normal: 1
        case .full: 2
        }
    }
}
