// Touches the C library for open(2), flock(2) and close(2).
//
// Thread and lifetime rules: the lock belongs to the open file description made here, so it is
// held until `deinit` closes the descriptor (or the process ends, which is how a killed server
// releases it). flock(2) locks are independent of the POSIX record locks SQLite takes on the same
// file, so the two never interfere; the descriptor is only closed when its `CommandLog` goes away,
// after which SQLite holds no lock on the file either.

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive advisory lock on a database file, held by the one process that writes it.
final class OwnerLock {
    private let descriptor: Int32

    /// Takes the lock without waiting.
    /// - Throws: `StoreError.inUse` when another open log holds it (in this process or another),
    ///   `StoreError.cannotOpen` when the file cannot be opened.
    init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw StoreError.cannotOpen(path: path, detail: String(cString: strerror(errno)), code: nil)
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
