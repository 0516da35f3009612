import Logging

/// What `CommandLog.compact(keepingRecords:reclaimingSpace:)` removed.
public struct CompactionReport: Hashable, Sendable {
    /// How many records were deleted.
    public var removedRecords: Int
    /// The highest sequence deleted, or nil when nothing was.
    public var removedThrough: UInt64?
    /// The size of the database file (pages × page size) before and after, in bytes. Without
    /// reclaiming space the file keeps its size and freed pages are reused by later appends.
    public var bytesBefore: Int64
    public var bytesAfter: Int64
}

extension CommandLog {
    /// Deletes log records the latest snapshot makes unnecessary for recovery.
    ///
    /// Records at or before the latest snapshot's sequence are deleted, except the newest
    /// `keepingRecords` of them, which stay so that the log can still be read (or exported) a
    /// little before the snapshot. Records after the snapshot are never touched. Older snapshots
    /// before the deleted records (the genesis snapshot among them) go too. Without a snapshot
    /// nothing is deleted.
    /// - Parameters:
    ///   - keepingRecords: how many records at or before the snapshot to keep, at least 0.
    ///   - reclaimingSpace: also `VACUUM` and truncate the WAL, so the file shrinks. This rewrites
    ///     the whole database and blocks other writers meanwhile: meant for `islet store compact`,
    ///     not for the serving loop.
    /// - Complexity: O(d log m) for d deleted records; O(m) more when reclaiming space.
    @discardableResult
    public func compact(keepingRecords: Int = 0, reclaimingSpace: Bool = true) throws -> CompactionReport {
        precondition(keepingRecords >= 0, "keepingRecords must not be negative")
        let bytesBefore = try self.databaseBytes()
        let removed = try self.inTransaction { try self.deleteRecordsBeforeSnapshot(keeping: keepingRecords) }
        if reclaimingSpace {
            try self.connection.execute("VACUUM")
            // The VACUUM's commit may have started a background checkpoint; let it finish, then
            // copy the rest and empty the WAL, so the file on disk is the smaller one.
            self.checkpointer?.waitUntilIdle()
            if self.connection.path != ":memory:" { try self.connection.checkpoint(.truncate) }
        }
        let report = CompactionReport(
            removedRecords: removed.count, removedThrough: removed.through, bytesBefore: bytesBefore,
            bytesAfter: try self.databaseBytes())
        self.logger.info(
            "compacted store",
            metadata: [
                "islet.store.removed_records": "\(report.removedRecords)",
                "islet.store.removed_through": "\(report.removedThrough.map { "\($0)" } ?? "none")",
                "islet.store.bytes_before": "\(report.bytesBefore)", "islet.store.bytes_after": "\(report.bytesAfter)",
            ])
        return report
    }

    private func deleteRecordsBeforeSnapshot(keeping: Int) throws -> (count: Int, through: UInt64?) {
        guard let snapshot = try self.latestSnapshotSequence() else { return (0, nil) }
        // The newest record to delete: skip `keeping` records back from the snapshot.
        let boundary = try self.connection.prepare(
            "SELECT sequence FROM record WHERE sequence <= ?1 ORDER BY sequence DESC LIMIT 1 OFFSET ?2")
        try boundary.bind(Int64(snapshot), at: 1)
        try boundary.bind(Int64(keeping), at: 2)
        guard try boundary.step() else { return (0, nil) }
        let through = boundary.int64(at: 0)
        boundary.reset()
        let delete = try self.connection.prepare("DELETE FROM record WHERE sequence <= ?1")
        try delete.bind(through, at: 1)
        try delete.run()
        let removed = self.connection.changes
        // Snapshots whose following records are gone can no longer start a replay (the genesis
        // snapshot among them); the latest snapshot is never among them.
        let stale = try self.connection.prepare("DELETE FROM snapshot WHERE sequence < ?1 AND sequence < ?2")
        try stale.bind(through, at: 1)
        try stale.bind(Int64(snapshot), at: 2)
        try stale.run()
        return (removed, UInt64(through))
    }

    private func databaseBytes() throws -> Int64 {
        let pages = try self.connection.scalarInt64("PRAGMA page_count") ?? 0
        let pageSize = try self.connection.scalarInt64("PRAGMA page_size") ?? 0
        return pages * pageSize
    }
}
