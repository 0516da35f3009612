/// Cutting a log back to its last good record (`islet store repair`).
extension CommandLog {
    /// Deletes every record and snapshot from `sequence` on, so the log ends at `sequence - 1`,
    /// and gives the log a new epoch in the same transaction: the revisions appended after the
    /// cut are not the ones a client may hold under the old epoch, which then resyncs
    /// (`epoch_changed`) instead of resuming onto another history.
    /// - Returns: how many records were deleted.
    public func truncate(from sequence: UInt64) throws -> Int {
        precondition(sequence >= 1, "the log starts at sequence 1")
        let epoch = StoreSchema.makeEpoch()
        let removed = try self.inTransaction { () throws -> Int in
            let renamed = try self.connection.prepare("UPDATE meta SET value = ?1 WHERE key = 'epoch'")
            try renamed.bind(epoch, at: 1)
            try renamed.run()
            let count = try self.connection.prepare("SELECT count(*) FROM record WHERE sequence >= ?1")
            try count.bind(Int64(sequence), at: 1)
            let removed = try count.step() ? count.int64(at: 0) : 0
            count.reset()
            for table in ["record", "snapshot"] {
                let delete = try self.connection.prepare("DELETE FROM \(table) WHERE sequence >= ?1")
                try delete.bind(Int64(sequence), at: 1)
                try delete.run()
            }
            return Int(removed)
        }
        self.lastSequence = try Self.readLastSequence(self.connection)
        self.epoch = epoch
        return removed
    }

    /// Writes a consistent copy of the whole database to a new file at `path` (`VACUUM INTO`).
    public func copy(to path: String) throws {
        let statement = try self.connection.prepare("VACUUM INTO ?1")
        try statement.bind(path, at: 1)
        try statement.run()
    }
}
