public import IsletCore
import IsletRender
import IsletStore
import Logging

/// The state a server starts from: the latest snapshot of its command log with the records after
/// it replayed, the log's epoch, and the stream history up to the last revision.
public struct RecoveredState {
    public var engine: Engine
    /// The log's epoch (API.md `epoch`): the same for as long as the store exists.
    public var epoch: String
    /// The sequence of the snapshot the state was restored from (0: the genesis snapshot).
    public var snapshotSequence: UInt64
    /// How many records after that snapshot were replayed.
    public var replayedRecords: Int
    /// True when the store was new: its genesis snapshot was written just now.
    public var created: Bool
    var history: RevisionHistory
}

/// Why a command log cannot be turned back into a running state: it names the file and says
/// what to do. `islet serve` exits with code 2 on it; it never starts empty over such a file.
public struct RecoveryError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let description: String

    init(path: String, _ problem: String) {
        self.path = path
        self.description =
            "\(path): \(problem); the log and this islet disagree, so it will not start over it: "
            + "run the islet version that wrote it, or move the file aside (islet store export can still read it)"
    }
}

/// Startup: restores the latest snapshot (or writes the genesis snapshot of a new store) and
/// replays every record after it through the engine, checking that each reproduces its revision.
enum StoreRecovery {
    /// - Parameters:
    ///   - wall: now; a new store's engine starts here (on `configuration.virtualClockStart`'s
    ///     paused virtual clock, if set).
    /// - Throws: `RecoveryError`, or the `StoreError` of a failed read or write.
    static func recover(
        _ log: any OrderedLog, configuration: IsletConfiguration, wall: Instant, logger: Logger
    ) throws -> RecoveredState {
        var history = RevisionHistory(
            maxRevisions: configuration.stream.historyRevisions, maxBytes: configuration.stream.historyBytes)
        guard let snapshot = try log.latestSnapshot() else {
            guard log.lastSequence == 0 else {
                throw RecoveryError(path: log.path, "the log holds records but no snapshot to replay them from")
            }
            let engine = IsletServer.freshEngine(configuration, at: wall)
            let payload = SnapshotPayload(engine: engine.snapshotBytes, history: [])
            try log.writeSnapshot(sequence: 0, instant: wall.millisecondsSinceEpoch, payload: payload.encoded())
            return RecoveredState(
                engine: engine, epoch: log.epoch, snapshotSequence: 0, replayedRecords: 0, created: true,
                history: history)
        }
        var engine = try self.restore(snapshot, path: log.path)
        for entry in try self.payload(snapshot, path: log.path).history {
            history.append(rev: entry.rev, encodedOps: entry.encodedOps)
        }
        var replayed = 0
        do {
            try log.forEachRecord(after: snapshot.sequence) { record in
                let revision = try LogReplay.apply(record, to: &engine)
                history.append(rev: revision.rev, encodedOps: revision.encodedOps)
                replayed += 1
            }
        } catch let mismatch as LogReplay.Mismatch {
            throw RecoveryError(path: log.path, mismatch.description)
        }
        guard engine.rev == log.lastSequence else {
            throw RecoveryError(
                path: log.path, "the log ends at \(log.lastSequence) but its records reach only \(engine.rev)")
        }
        return RecoveredState(
            engine: engine, epoch: log.epoch, snapshotSequence: snapshot.sequence, replayedRecords: replayed,
            created: false, history: history)
    }

    /// The engine of a stored snapshot.
    static func restore(_ snapshot: LogSnapshot, path: String) throws -> Engine {
        let payload = try self.payload(snapshot, path: path)
        let engine: Engine
        do {
            engine = try Engine(snapshot: try payload.engineValue(), renderer: MustacheRenderer())
        } catch {
            throw RecoveryError(path: path, "the snapshot at \(snapshot.sequence) cannot be restored (\(error))")
        }
        guard engine.rev == snapshot.sequence else {
            throw RecoveryError(
                path: path, "the snapshot at \(snapshot.sequence) holds the state of revision \(engine.rev)")
        }
        return engine
    }

    private static func payload(_ snapshot: LogSnapshot, path: String) throws -> SnapshotPayload {
        do {
            return try SnapshotPayload(decoding: snapshot.payload)
        } catch {
            throw RecoveryError(path: path, "the snapshot at \(snapshot.sequence) is malformed (\(error))")
        }
    }
}
