/// An ordered, durable log of records with snapshots: what a simulation's commit stage appends
/// to and what recovery replays. `CommandLog` (a SQLite file of its own) and `WorldLog` (one
/// world among many in a `WorldStore` file) are its implementations.
///
/// - Warning: Not thread-safe: use a log from the one thread (or serial queue) that owns it.
public protocol OrderedLog: AnyObject {
    /// Where the log lives, for messages (a file path, or the file path and the world's name).
    var path: String { get }
    /// The name of this log's history; it never changes.
    var epoch: String { get }
    /// The highest sequence stored in a record or snapshot; 0 for a new log.
    var lastSequence: UInt64 { get }

    /// Appends `records` (strictly increasing, above `lastSequence`) in one transaction.
    func append(_ records: [LogRecord]) throws
    /// Calls `body` with every record after `sequence`, in order.
    func forEachRecord(after sequence: UInt64, _ body: (LogRecord) throws -> Void) throws
    /// Up to `limit` records after `sequence`, in order.
    func records(after sequence: UInt64, limit: Int) throws -> [LogRecord]
    /// Stores a snapshot at `sequence` and keeps only the latest `keeping` ones (and the genesis).
    func writeSnapshot(sequence: UInt64, instant: Int64, payload: [UInt8], keeping: Int) throws
    /// The snapshot with the highest sequence, if any.
    func latestSnapshot() throws -> LogSnapshot?
    /// The snapshot at exactly `sequence`, if kept.
    func snapshot(at sequence: UInt64) throws -> LogSnapshot?
    /// The sequences of the snapshots kept, in increasing order.
    func snapshotSequences() throws -> [UInt64]
    /// Deletes the records the latest snapshot makes unnecessary for recovery, but the newest
    /// `keepingRecords` of them, and the snapshots before what is left.
    /// - Returns: how many records were deleted.
    @discardableResult
    func trim(keepingRecords: Int) throws -> Int
}

extension OrderedLog {
    /// Stores a snapshot, keeping the latest two (a fallback if the newest cannot be decoded).
    public func writeSnapshot(sequence: UInt64, instant: Int64, payload: [UInt8]) throws {
        try self.writeSnapshot(sequence: sequence, instant: instant, payload: payload, keeping: 2)
    }
}

extension CommandLog: OrderedLog {
    /// `compact` without reclaiming space: safe while serving.
    @discardableResult
    public func trim(keepingRecords: Int) throws -> Int {
        try self.compact(keepingRecords: keepingRecords, reclaimingSpace: false).removedRecords
    }
}
