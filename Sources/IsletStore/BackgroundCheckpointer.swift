import Dispatch
import Logging
import Synchronization

/// Runs passive checkpoints of one database on a serial dispatch queue, with a connection of its
/// own, so that the thread appending to the log never pays for them.
///
/// Thread rules: `committed(walPages:)` is called on the appending thread, from SQLite's WAL hook
/// at the end of each commit; it records the WAL's size (read by `walIsLong` on the same thread),
/// flips a flag under a mutex and, at most once per pending checkpoint, enqueues work. The checkpointing connection is touched only on `queue`, which is
/// why the class can be `@unchecked Sendable`. A passive checkpoint never blocks the writer; if
/// it cannot copy everything (the writer kept appending), the next trigger continues.
final class BackgroundCheckpointer: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let queue = DispatchQueue(label: "islet.store.checkpoint")
    private let isScheduled = Mutex(false)
    private let threshold: Int
    /// WAL size past which the appending thread should catch up itself (see `walIsLong`).
    private let catchUpThreshold: Int
    /// The WAL's size after the last commit. Read and written on the appending thread only.
    private var walPages = 0
    private let logger: Logger

    init(path: String, durability: Durability, walPages: Int, logger: Logger) throws {
        self.connection = try SQLiteConnection(path: path)
        try self.connection.execute("PRAGMA synchronous = \(durability.synchronousLevel); PRAGMA busy_timeout = 5000;")
        self.threshold = walPages
        self.catchUpThreshold = walPages * 4
        self.logger = logger
    }

    /// True when the WAL has grown to 4× the threshold: the appending thread should then run one
    /// passive checkpoint itself. Must be called on the appending thread.
    ///
    /// SQLite starts the WAL over only when a write transaction begins with every frame already
    /// copied. A writer that never pauses always commits again before a background checkpoint
    /// finishes, so the WAL would grow without bound. A checkpoint on the appending thread copies
    /// the few frames the background one has not (it has copied most), and the next transaction
    /// then starts the WAL over. Under paced load the background keeps up and this never fires.
    var walIsLong: Bool { self.walPages >= self.catchUpThreshold }

    /// Called after each commit, on the appending thread, with the WAL's size; schedules a
    /// checkpoint past the threshold.
    func committed(walPages: Int) {
        self.walPages = walPages
        guard walPages >= self.threshold else { return }
        let schedule = self.isScheduled.withLock { scheduled in
            defer { scheduled = true }
            return !scheduled
        }
        guard schedule else { return }
        self.queue.async { self.checkpoint() }
    }

    /// Waits until no checkpoint is queued or running. Safe to call from any thread but the queue's.
    func waitUntilIdle() {
        self.queue.sync {}
    }

    private func checkpoint() {
        // Cleared first: a commit during this checkpoint may schedule the next one.
        self.isScheduled.withLock { $0 = false }
        do {
            let result = try self.connection.checkpoint(.passive)
            self.logger.trace(
                "checkpointed",
                metadata: [
                    "islet.store.wal_pages": "\(result.walPages)", "islet.store.checkpointed": "\(result.checkpointed)",
                ])
        } catch {
            // The log stays correct without checkpoints (the WAL only grows), so this is reported, not fatal.
            self.logger.info("checkpoint failed", metadata: ["error.message": "\(error)"])
        }
    }
}
