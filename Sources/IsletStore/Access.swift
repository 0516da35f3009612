extension CommandLog {
    /// How a `CommandLog` uses its file, fixed when it is opened.
    public enum Access: Hashable, Sendable {
        /// Reads and writes, holding an exclusive advisory lock (`flock`) on the file while open,
        /// so that a second writer (another `islet serve`, `islet store compact`) is refused with
        /// `StoreError.inUse` instead of interleaving records with the first. The default.
        case exclusive
        /// Reads and writes without the lock: for tests and tools that coordinate themselves.
        case shared
        /// Reads only, without the lock and without creating, migrating or checkpointing
        /// anything: for reading a log that a running server owns (`islet store export`). The
        /// file must already be an Islet database of the current schema version.
        case readOnly
    }
}
