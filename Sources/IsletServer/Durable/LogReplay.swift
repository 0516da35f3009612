public import IsletCore
public import IsletStore

/// Turns revisions into log records and feeds log records back to an engine: the two halves of
/// "replay reproduces the state", shared by the commit stage, startup, export and the tests.
///
/// A record's `sequence` is the revision's `rev`; its `instant` is the **wall** instant the engine
/// was given; a `.batch` payload is the canonical JSON array of the batch's command objects, as
/// applied; a `.tick` (a clock step that changed state) has an empty payload.
public enum LogReplay {
    /// The log record of a committed revision.
    public static func record(_ revision: RevisionRecord) -> LogRecord {
        switch revision.cause {
        case .commands(let commands):
            return LogRecord(
                sequence: revision.revision.rev, instant: revision.wall.millisecondsSinceEpoch, kind: .batch,
                payload: JSONValue.array(commands).encoded)
        case .tick:
            return LogRecord(
                sequence: revision.revision.rev, instant: revision.wall.millisecondsSinceEpoch, kind: .tick,
                payload: [])
        }
    }

    /// The command objects of a `.batch` record.
    /// - Throws: `Mismatch` when the payload is not a JSON array of objects.
    public static func commands(of record: LogRecord) throws(Mismatch) -> [JSONValue] {
        let value: JSONValue
        do {
            value = try JSONParser.stored.parse(record.payload)
        } catch {
            throw Mismatch(sequence: record.sequence, reason: "its payload is not JSON (\(error.message))")
        }
        guard let commands = value.arrayValue, !commands.isEmpty else {
            throw Mismatch(sequence: record.sequence, reason: "its payload is not a non-empty array of commands")
        }
        return commands
    }

    /// Applies one record to `engine`: `apply(commands, at: instant)` for a batch, `advance(to:
    /// instant)` for a tick. The engine must produce exactly the record's sequence as its revision.
    /// - Returns: the revision the record produced again.
    /// - Throws: `Mismatch` when the engine refuses the record or numbers it differently, so the
    ///   log and this engine disagree (the engine is then unchanged, or one revision further on).
    @discardableResult
    public static func apply(_ record: LogRecord, to engine: inout Engine) throws(Mismatch) -> Revision {
        let wall = Instant(millisecondsSinceEpoch: record.instant)
        let revision: Revision
        switch record.kind {
        case .batch:
            let commands = try Self.commands(of: record)
            do {
                revision = try engine.apply(commands, at: wall, admission: .logged)
            } catch {
                throw Mismatch(sequence: record.sequence, reason: "the engine refuses its batch (\(error))")
            }
        case .tick:
            guard let step = engine.advance(to: wall) else {
                throw Mismatch(sequence: record.sequence, reason: "its clock step changes nothing")
            }
            revision = step
        }
        guard revision.rev == record.sequence else {
            throw Mismatch(sequence: record.sequence, reason: "it produced revision \(revision.rev)")
        }
        return revision
    }

    /// A record that does not reproduce its revision.
    public struct Mismatch: Error, Sendable, CustomStringConvertible {
        public let sequence: UInt64
        public let reason: String
        public var description: String { "record \(self.sequence) does not replay: \(self.reason)" }
    }
}
