/// One entry of the durable log: what happened, when, and its encoded bytes.
///
/// The store never looks inside `payload`; the server encodes and decodes it. Sequences start at 1
/// and strictly increase along the log (0 means "before the first record"), which is what lets a
/// restarted server replay from a snapshot and resume stream clients by sequence.
public struct LogRecord: Hashable, Sendable {
    /// What a record stands for, so replay knows how to feed it back to the engine.
    public enum Kind: UInt8, Hashable, Sendable, CaseIterable {
        /// An accepted batch of commands.
        case batch = 1
        /// A clock step that changed state; its payload may be empty.
        case tick = 2
    }

    /// The position in the log; the server uses its revision number. At most `Int64.max`.
    public var sequence: UInt64
    /// When the record took effect, in milliseconds since the Unix epoch (the engine's instant).
    public var instant: Int64
    public var kind: Kind
    /// The encoded content, stored and returned byte for byte.
    public var payload: [UInt8]

    public init(sequence: UInt64, instant: Int64, kind: Kind, payload: [UInt8]) {
        self.sequence = sequence
        self.instant = instant
        self.kind = kind
        self.payload = payload
    }
}

/// The whole engine state at one sequence, so startup replays only the records after it.
public struct LogSnapshot: Hashable, Sendable {
    /// The sequence of the last record whose effect the snapshot includes.
    public var sequence: UInt64
    /// The engine's instant at that point, in milliseconds since the Unix epoch.
    public var instant: Int64
    /// The encoded state, stored and returned byte for byte.
    public var payload: [UInt8]

    public init(sequence: UInt64, instant: Int64, payload: [UInt8]) {
        self.sequence = sequence
        self.instant = instant
        self.payload = payload
    }
}
