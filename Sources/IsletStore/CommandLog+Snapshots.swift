import Logging

extension CommandLog {
    /// Stores a snapshot of the whole engine state and drops all but the latest `keeping` ones
    /// and the genesis snapshot (sequence 0: the state a new store started from, which exporting
    /// the whole log needs; compaction removes it once the records after it are gone).
    ///
    /// - Parameters:
    ///   - sequence: the last record the state includes: not above `lastSequence`, and not below the
    ///     latest snapshot's (an equal sequence replaces that snapshot).
    ///   - instant: the engine's instant, in milliseconds since the Unix epoch.
    ///   - payload: the encoded state.
    ///   - keeping: how many snapshots to keep, at least 1; older ones are deleted in the same
    ///     transaction. Keeping 2 leaves a fallback if the newest cannot be decoded.
    /// - Throws: `StoreError.snapshotOutOfOrder`, or a storage error (then nothing was written).
    public func writeSnapshot(sequence: UInt64, instant: Int64, payload: [UInt8], keeping: Int = 2) throws {
        precondition(keeping >= 1, "a store keeps at least one snapshot")
        try self.inTransaction {
            let latest = try self.latestSnapshotSequence() ?? 0
            guard sequence >= latest, sequence <= self.lastSequence else {
                throw StoreError.snapshotOutOfOrder(
                    path: self.path, sequence: sequence, latest: latest, last: self.lastSequence)
            }
            let insert = try self.connection.prepare(
                "INSERT OR REPLACE INTO snapshot (sequence, instant, payload) VALUES (?1, ?2, ?3)")
            try insert.bind(Int64(sequence), at: 1)
            try insert.bind(instant, at: 2)
            try insert.bind(payload, at: 3)
            try insert.run()
            let prune = try self.connection.prepare(
                """
                DELETE FROM snapshot WHERE sequence != 0
                AND sequence NOT IN (SELECT sequence FROM snapshot ORDER BY sequence DESC LIMIT ?1)
                """)
            try prune.bind(Int64(keeping), at: 1)
            try prune.run()
        }
        self.logger.debug(
            "wrote snapshot",
            metadata: ["islet.store.sequence": "\(sequence)", "islet.store.bytes": "\(payload.count)"])
    }

    /// The snapshot with the highest sequence, or nil if none was written.
    public func latestSnapshot() throws -> LogSnapshot? {
        let statement = try self.connection.prepare(
            "SELECT sequence, instant, payload FROM snapshot ORDER BY sequence DESC LIMIT 1")
        guard try statement.step() else { return nil }
        return LogSnapshot(
            sequence: UInt64(max(statement.int64(at: 0), 0)), instant: statement.int64(at: 1),
            payload: statement.bytes(at: 2))
    }

    /// The snapshot at exactly `sequence`, if one is kept (sequence 0 is the genesis snapshot).
    public func snapshot(at sequence: UInt64) throws -> LogSnapshot? {
        let statement = try self.connection.prepare(
            "SELECT sequence, instant, payload FROM snapshot WHERE sequence = ?1")
        try statement.bind(Int64(clamping: sequence), at: 1)
        guard try statement.step() else { return nil }
        return LogSnapshot(
            sequence: UInt64(max(statement.int64(at: 0), 0)), instant: statement.int64(at: 1),
            payload: statement.bytes(at: 2))
    }

    /// The sequences of the snapshots kept, in increasing order.
    public func snapshotSequences() throws -> [UInt64] {
        let statement = try self.connection.prepare("SELECT sequence FROM snapshot ORDER BY sequence")
        var sequences: [UInt64] = []
        while try statement.step() { sequences.append(UInt64(max(statement.int64(at: 0), 0))) }
        return sequences
    }

    func latestSnapshotSequence() throws -> UInt64? {
        try self.connection.scalarInt64("SELECT max(sequence) FROM snapshot").map { UInt64(max($0, 0)) }
    }
}
