extension CommandLog {
    /// Calls `body` with every record whose sequence is above `sequence`, in sequence order.
    ///
    /// Rows are read one at a time from a single statement, so memory stays flat however long the
    /// log is; this is the replay path at startup. The records seen are those committed when the
    /// first one is read.
    /// - Parameters:
    ///   - sequence: read records after this one; 0 reads the whole log.
    ///   - body: called once per record; throwing stops the reading and rethrows.
    /// - Throws: a `StoreError`, or what `body` threw.
    /// - Warning: Do not call other methods of this log from `body`.
    /// - Complexity: O(log m + k) for k records read from a log of m.
    public func forEachRecord(after sequence: UInt64, _ body: (LogRecord) throws -> Void) throws {
        let statement = try self.connection.prepare(
            "SELECT sequence, instant, kind, payload FROM record WHERE sequence > ?1 ORDER BY sequence")
        try statement.bind(Int64(clamping: sequence), at: 1)
        while try statement.step() {
            try body(try self.decodeRecord(statement))
        }
    }

    /// Up to `limit` records after `sequence`, in order: one page, for resuming a stream client
    /// or for reading the log in bounded chunks.
    /// - Complexity: O(log m + limit).
    public func records(after sequence: UInt64, limit: Int) throws -> [LogRecord] {
        let statement = try self.connection.prepare(
            "SELECT sequence, instant, kind, payload FROM record WHERE sequence > ?1 ORDER BY sequence LIMIT ?2")
        try statement.bind(Int64(clamping: sequence), at: 1)
        try statement.bind(Int64(max(limit, 0)), at: 2)
        var records: [LogRecord] = []
        while try statement.step() {
            records.append(try self.decodeRecord(statement))
        }
        return records
    }

    /// The sequence of the oldest record still in the log (compaction removes older ones), or nil
    /// when the log holds no record. A stream client asking to resume before it needs a snapshot.
    public func firstRecordSequence() throws -> UInt64? {
        try self.connection.scalarInt64("SELECT min(sequence) FROM record").map { UInt64($0) }
    }

    /// The number of records in the log.
    /// - Complexity: O(m): SQLite counts the rows.
    public func recordCount() throws -> Int {
        Int(try self.connection.scalarInt64("SELECT count(*) FROM record") ?? 0)
    }

    private func decodeRecord(_ statement: SQLiteStatement) throws -> LogRecord {
        let sequence = statement.int64(at: 0)
        let rawKind = statement.int64(at: 2)
        guard sequence > 0, let kind = UInt8(exactly: rawKind).flatMap(LogRecord.Kind.init(rawValue:)) else {
            throw StoreError.corrupt(
                path: self.path, detail: "record \(sequence) has sequence or kind \(rawKind) out of range", code: nil)
        }
        return LogRecord(
            sequence: UInt64(sequence), instant: statement.int64(at: 1), kind: kind, payload: statement.bytes(at: 3))
    }
}
