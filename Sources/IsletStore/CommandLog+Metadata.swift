/// Named values stored beside the log (its `meta` table): facts about the history that are
/// neither records nor snapshots, such as when a simulation was created.
extension CommandLog {
    /// The value stored under `key`, if any.
    public func metadata(_ key: String) throws -> String? {
        let statement = try self.connection.prepare("SELECT value FROM meta WHERE key = ?1")
        try statement.bind(key, at: 1)
        guard try statement.step() else { return nil }
        return statement.text(at: 0)
    }

    /// Stores `value` under `key` (replacing what was there), durably before it returns.
    /// - Precondition: `key` is not `epoch`, which the store owns.
    public func setMetadata(_ key: String, _ value: String) throws {
        precondition(key != "epoch", "the store owns the epoch")
        let statement = try self.connection.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")
        try statement.bind(key, at: 1)
        try statement.bind(value, at: 2)
        try statement.run()
    }

    /// The log's identity, made at its first call and kept for good: unlike the epoch, which a
    /// log made afresh at the same path also gets, it tells this log from every other one, so
    /// that a world store can be bound to it (`WorldStore.claim(for:)`).
    public func identity() throws -> String {
        if let id = try self.metadata(Self.identityKey) { return id }
        let id = (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined(separator: "-")
        try self.setMetadata(Self.identityKey, id)
        return id
    }

    /// The `meta` key of `identity()`, and the key under which a world store keeps the identity
    /// of the log it is bound to.
    static let identityKey = "log.id"
}
