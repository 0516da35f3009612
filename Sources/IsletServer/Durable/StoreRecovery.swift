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
    /// The command log's identity (`log.id`, made at its first start): the world store beside
    /// it is bound to it.
    public var logID: String? = nil
}

/// Why a command log cannot be turned back into a running state: it names the file and says
/// what to do. `islet serve` exits with code 2 on it; it never starts empty over such a file.
public struct RecoveryError: Error, Sendable, CustomStringConvertible {
    public let path: String
    /// The first record that does not replay, when one is to blame (`islet store repair` cuts
    /// the log back to the record before it).
    public let sequence: UInt64?
    public let description: String

    init(path: String, _ problem: String, sequence: UInt64? = nil) {
        self.path = path
        self.sequence = sequence
        let remedy =
            sequence == nil
            ? "run the islet version that wrote it, or move the file aside (islet store export can still read it)"
            : "run the islet version that wrote it, or islet store repair --db \(path) to cut the log back to "
                + "record \(sequence! - 1) (a copy of the file is kept)"
        self.description = "\(path): \(problem); the log and this islet disagree, so it will not start over it: \(remedy)"
    }

    init(path: String, _ mismatch: LogReplay.Mismatch) {
        self.init(path: path, mismatch.description, sequence: mismatch.sequence)
    }
}

/// Startup: restores the latest snapshot (or writes the genesis snapshot of a new store) and
/// replays every record after it through the engine, checking that each reproduces its revision.
enum StoreRecovery {
    /// - Parameters:
    ///   - wall: now; a new store's engine starts here (on `configuration.virtualClockStart`'s
    ///     paused virtual clock, if set).
    /// - Throws: `RecoveryError`, or the `StoreError` of a failed read or write.
    ///   - genesis: a fork's revision 0, rebuilt from its source, when its log holds no snapshot.
    static func recover(
        _ log: any OrderedLog, configuration: IsletConfiguration, wall: Instant, logger: Logger,
        genesis: Engine? = nil
    ) throws -> RecoveredState {
        var history = RevisionHistory(
            maxRevisions: configuration.stream.historyRevisions, maxBytes: configuration.stream.historyBytes)
        guard let snapshot = try log.latestSnapshot() else {
            if let genesis {
                // A fork whose genesis snapshot was not written: its revision 0, then its records.
                var engine = genesis
                var replayed = 0
                do {
                    try log.forEachRecord(after: 0) { record in
                        let revision = try LogReplay.apply(record, to: &engine)
                        history.append(rev: revision.rev, encodedOps: revision.encodedOps)
                        replayed += 1
                    }
                } catch let mismatch as LogReplay.Mismatch {
                    throw RecoveryError(path: log.path, mismatch)
                }
                return RecoveredState(
                    engine: engine, epoch: log.epoch, snapshotSequence: 0, replayedRecords: replayed, created: false,
                    history: history)
            }
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
        // The newest snapshot first; one that cannot be restored gives way to the one before it,
        // whose records the log still holds (the store keeps two snapshots for this).
        var firstError: RecoveryError?
        let older = try log.snapshotSequences().filter { $0 < snapshot.sequence }.sorted(by: >)
        for sequence in [snapshot.sequence] + older {
            guard let candidate = sequence == snapshot.sequence ? snapshot : try log.snapshot(at: sequence) else {
                continue
            }
            do {
                let state = try self.replay(log, from: candidate, history: history)
                if let firstError {
                    logger.warning(
                        "recovered from an older snapshot",
                        metadata: ["islet.store.snapshot": "\(sequence)", "error": "\(firstError)"])
                }
                return state
            } catch let error as RecoveryError {
                firstError = firstError ?? error
            }
        }
        throw firstError!
    }

    /// The state of `snapshot` with every record after it replayed.
    private static func replay(_ log: any OrderedLog, from snapshot: LogSnapshot, history: RevisionHistory) throws
        -> RecoveredState
    {
        var history = history
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
            throw RecoveryError(path: log.path, mismatch)
        }
        guard engine.rev == log.lastSequence else {
            throw RecoveryError(
                path: log.path, "the log ends at \(log.lastSequence) but its records reach only \(engine.rev)")
        }
        return RecoveredState(
            engine: engine, epoch: log.epoch, snapshotSequence: snapshot.sequence, replayedRecords: replayed,
            created: false, history: history)
    }

    /// The engine at `rev` of `log`: the latest snapshot at or before it (or `genesis`, a
    /// fork's revision 0 not written yet), and the records up to it.
    static func engine(of log: any OrderedLog, at rev: UInt64, genesis: Engine? = nil) -> Result<
        Engine, RevisionUnavailable
    > {
        self.rebuild(of: log, at: rev, genesis: genesis).flatMap { $0.replay() }
    }

    /// What rebuilding the engine at `rev` of `log` reads from it: read where the log lives,
    /// then replayed anywhere (``RevisionRebuild/replay()``).
    static func rebuild(of log: any OrderedLog, at rev: UInt64, genesis: Engine? = nil) -> Result<
        RevisionRebuild, RevisionUnavailable
    > {
        do {
            let sequences = try log.snapshotSequences()
            let base: RevisionRebuild.Base
            var position: UInt64
            if let sequence = sequences.filter({ $0 <= rev }).max(), let snapshot = try log.snapshot(at: sequence) {
                base = .snapshot(snapshot)
                position = sequence
            } else if let genesis {
                base = .genesis(genesis)
                position = 0
            } else {
                return .failure(RevisionUnavailable(earliest: sequences.min()))
            }
            var records: [LogRecord] = []
            while position < rev {
                let batch = try log.records(after: position, limit: Int(min(rev - position, 4096)))
                guard let last = batch.last else { return .failure(RevisionUnavailable(earliest: sequences.min() ?? 0)) }
                records += batch
                position = last.sequence
            }
            return .success(RevisionRebuild(base: base, records: records, path: log.path))
        } catch {
            return .failure(RevisionUnavailable(earliest: nil))
        }
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

/// A past revision's state as a log holds it: a snapshot (or a fork's unwritten revision 0) and
/// the records after it. Replaying it takes the time of restoring the snapshot and applying up
/// to `--snapshot-every` records, so a server does it off its loop.
struct RevisionRebuild: Sendable {
    enum Base: Sendable {
        case snapshot(LogSnapshot)
        case genesis(Engine)
    }

    let base: Base
    let records: [LogRecord]
    let path: String

    /// The engine at the last record's revision (the base's, without records).
    func replay() -> Result<Engine, RevisionUnavailable> {
        do {
            var engine: Engine
            switch self.base {
            case .snapshot(let snapshot): engine = try StoreRecovery.restore(snapshot, path: self.path)
            case .genesis(let genesis): engine = genesis
            }
            for record in self.records { try LogReplay.apply(record, to: &engine) }
            return .success(engine)
        } catch {
            return .failure(RevisionUnavailable(earliest: nil))
        }
    }
}
