// Touches the C library for open(2), flock(2) and close(2).
//
// Thread and lifetime rules: the lock belongs to the open file description made here, so it is
// held until `deinit` closes the descriptor (or the process ends, which is how a killed server
// releases it). The lock is taken on a sidecar file (`<database>-lock`), never on the database:
// closing any descriptor of a file drops every POSIX record lock the process holds on it, SQLite's
// included, so a failed attempt on the database itself would release the locks of a log this
// process already has open.

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
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            close(descriptor)
            if failure == EWOULDBLOCK { throw StoreError.inUse(path: path) }
            throw StoreError.cannotOpen(path: path, detail: "flock: \(String(cString: strerror(failure)))", code: nil)
        }
        self.descriptor = descriptor
    }

    deinit {
        close(self.descriptor)
    }
}
