import IsletCore
import IsletRender
public import IsletStore
import Logging

/// What an import did.
public struct ImportSummary: Sendable, Equatable {
    /// Scenario lines read (blank lines are not counted).
    public var lines: Int
    /// Revisions written to the log.
    public var revisions: UInt64
    /// `clock.advance` revisions added because a line's `at` lay ahead of a paused clock (a file
    /// recorded on the wall clock; zero for one recorded on a paused virtual clock).
    public var clockAdvances: Int
}

/// `islet store import` and `islet serve --replay`: a scenario file replayed, on a virtual clock,
/// into a new command log, which then starts a server like any other log.
///
/// The engine starts on a paused virtual clock at `configuration.virtualClockStart`, or else at
/// the first line's `at`. Each line is applied when the clock shows its `at`:
/// - while the clock runs (after a `clock.set` with a rate, or in wall mode), at the wall instant
///   where it shows `at`;
/// - while it is paused and `at` is ahead, a `clock.advance` to `at` comes first, as a revision of
///   its own (this happens only for files recorded on the wall clock);
/// - a clock step (`"commands": []`) fires the transitions due by `at`.
///
/// A file exported from a server on a paused virtual clock (a harness's) therefore replays to the
/// same revisions and the same document, byte for byte.
public enum ScenarioImport {
    /// Records are appended in transactions of this many.
    static let group = 1000

    /// Replays the scenario file at `path` without writing anything: every line must parse and
    /// be accepted by the engine. Callers check a file before they create or touch a log, so a
    /// refused scenario leaves nothing behind.
    /// - Throws: `ScenarioError` naming the file's problem or the line that is malformed or refused.
    @discardableResult
    public static func check(file path: String, configuration: IsletConfiguration) throws -> ImportSummary {
        try self.replay(file: path, configuration: configuration, writing: nil)
    }

    /// Replays the scenario file at `path` into `log`, which must hold no record. Check the file
    /// first (`check(file:configuration:)`): a line refused here leaves the lines before it in
    /// the log.
    /// - Throws: `ScenarioError` naming the line that is malformed or that the engine refuses;
    ///   a `StoreError` on a failed write (records already written stay).
    @discardableResult
    public static func run(
        file path: String, into log: CommandLog, configuration: IsletConfiguration
    ) throws -> ImportSummary {
        guard log.lastSequence == 0 else {
            throw ScenarioError(
                "\(log.path) already holds revisions up to \(log.lastSequence): a scenario replays into a new store")
        }
        return try self.replay(file: path, configuration: configuration, writing: log)
    }

    private static func replay(
        file path: String, configuration: IsletConfiguration, writing log: CommandLog?
    ) throws -> ImportSummary {
        let file = try LineReader(path: path)
        var reader = LineNumbering()
        let first = try reader.nextLine(from: file.next)
        let start = configuration.virtualClockStart ?? first?.line.at ?? Instant(millisecondsSinceEpoch: 0)
        var replayer = ScenarioReplayer(start: start)
        var history = RevisionHistory(
            maxRevisions: configuration.stream.historyRevisions, maxBytes: configuration.stream.historyBytes)
        try log?.writeSnapshot(
            sequence: 0, instant: start.millisecondsSinceEpoch,
            payload: SnapshotPayload(engine: replayer.engine.snapshotBytes, history: []).encoded())
        var pending: [LogRecord] = []
        var lines = 0
        var current = first
        while let (number, line) = current {
            lines += 1
            let produced: [(LogRecord, Revision)]
            do {
                produced = try replayer.apply(line)
            } catch {
                throw ScenarioError(line: number, "the engine refuses it: \(error)")
            }
            if let log {
                for (record, revision) in produced {
                    pending.append(record)
                    history.append(rev: revision.rev, encodedOps: revision.encodedOps)
                }
                if pending.count >= Self.group {
                    try log.append(pending)
                    pending = []
                }
            }
            current = try reader.nextLine(from: file.next)
        }
        if let log {
            try log.append(pending)
            if replayer.engine.rev > 0 {
                let payload = SnapshotPayload(engine: replayer.engine.snapshotBytes, history: history.allEntries)
                try log.writeSnapshot(
                    sequence: replayer.engine.rev, instant: replayer.wall.millisecondsSinceEpoch,
                    payload: payload.encoded())
            }
        }
        return ImportSummary(lines: lines, revisions: replayer.engine.rev, clockAdvances: replayer.clockAdvances)
    }
}

/// Applies scenario lines to an engine on a virtual clock, producing the log records a server
/// would have written for them.
struct ScenarioReplayer {
    private(set) var engine: Engine
    /// The wall instant given to the engine for the latest line.
    private(set) var wall: Instant
    private(set) var clockAdvances = 0

    init(start: Instant) {
        self.wall = start
        self.engine = Engine(
            renderer: MustacheRenderer(), at: start, clock: .virtual(now: start, rate: 0, atWall: start))
    }

    /// The records (with their revisions) that `line` produces: none, one, or a `clock.advance`
    /// and then the line's own.
    mutating func apply(_ line: ScenarioLine) throws(APIError) -> [(LogRecord, Revision)] {
        var produced: [(LogRecord, Revision)] = []
        if line.at > self.engine.now {
            if let wall = self.engine.clock.wall(forSimulated: line.at) {
                self.wall = max(self.wall, wall)
            } else {
                let advance: [JSONValue] = [["type": "clock.advance", "to": .string(line.at.rfc3339)]]
                produced.append(try self.record(.commands(advance)))
                self.clockAdvances += 1
            }
        }
        if line.isClockStep {
            if let revision = self.engine.advance(to: self.wall) {
                produced.append(Self.pair(RevisionRecord(cause: .tick, wall: self.wall, revision: revision)))
            }
        } else {
            produced.append(try self.record(.commands(line.commands)))
        }
        return produced
    }

    private mutating func record(_ cause: RevisionRecord.Cause) throws(APIError) -> (LogRecord, Revision) {
        guard case .commands(let commands) = cause else { preconditionFailure("ticks are not applied as batches") }
        // A scenario is an exported log: its batches were admitted when they were recorded.
        let revision = try self.engine.apply(commands, at: self.wall, admission: .logged)
        return Self.pair(RevisionRecord(cause: cause, wall: self.wall, revision: revision))
    }

    private static func pair(_ record: RevisionRecord) -> (LogRecord, Revision) {
        (LogReplay.record(record), record.revision)
    }
}

/// Numbers the lines of a scenario file and skips blank ones.
private struct LineNumbering {
    var number = 0

    mutating func nextLine(from next: () throws -> [UInt8]?) throws -> (number: Int, line: ScenarioLine)? {
        while let bytes = try next() {
            self.number += 1
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            do {
                return (self.number, try ScenarioLine(parsing: bytes))
            } catch {
                throw ScenarioError(line: self.number, error.message)
            }
        }
        return nil
    }
}
