// Touches the C library for open(2), flock(2) and close(2).
//
// Thread and lifetime rules: the lock belongs to the open file description made here, so it is
// held until `deinit` closes the descriptor (or the process ends, which is how a killed server
// releases it). The lock is taken on a sidecar file (`<database>-lock`), never on the database:
// closing any descriptor of a file drops every POSIX record lock the process holds on it, SQLite's
// included, so a failed attempt on the database itself would release the locks of a log this
// process already has open.
//
// A lock that is busy is tried again for a short while before `inUse`: a child process that
// another thread is spawning holds a copy of every descriptor, this one included, from its fork
// until its exec closes it, so a lock this process released a moment ago can still look held.

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive advisory lock on a database file, held by the one process that writes it.
final class OwnerLock {
    private let descriptor: Int32

    /// Takes the lock on `path`'s sidecar lock file (created if missing) without waiting.
    /// - Throws: `StoreError.inUse` when another open log holds it (in this process or another),
    ///   `StoreError.cannotOpen` when the lock file cannot be opened.
    init(path: String) throws {
        let descriptor = open(path + "-lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StoreError.cannotOpen(
                path: path, detail: "\(path)-lock: \(String(cString: strerror(errno)))", code: nil)
        }
        var attempts = 1
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            let failure = errno
            if failure == EWOULDBLOCK && attempts < Self.busyAttempts {
                attempts += 1
                usleep(Self.busyPause)
                continue
            }
            close(descriptor)
            if failure == EWOULDBLOCK { throw StoreError.inUse(path: path) }
            throw StoreError.cannotOpen(path: path, detail: "flock: \(String(cString: strerror(failure)))", code: nil)
        }
        self.descriptor = descriptor
    }

    /// How often, and how far apart in microseconds, a busy lock is tried: 250 ms in all, far
    /// longer than a spawn's fork-to-exec, far shorter than anyone waiting on a refusal notices.
    private static let busyAttempts = 50
    private static let busyPause: useconds_t = 5_000

    deinit {
        close(self.descriptor)
    }
}
