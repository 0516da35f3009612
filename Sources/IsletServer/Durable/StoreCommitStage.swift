public import Dispatch
public import IsletCore
public import IsletStore
public import IsletTransport
public import Logging

/// The commit stage on the durable command log: each loop turn's revisions are appended to the
/// `CommandLog` in one transaction (group commit) before their replies and patches go out, and
/// snapshots of the published state are written every N revisions or M seconds, so a restart
/// replays only the log's tail.
///
/// Where the work runs (`Threads`):
/// - `.caller`: everything on the calling thread, synchronously (in-memory servers, tools, tests);
/// - `.loop(loop)`: appends on the loop thread; a snapshot is encoded on a background queue and
///   written back on the loop;
/// - `.writer(loop)`: appends and snapshot writes on a writer thread (a serial queue) that owns
///   the log; the loop is told of each commit with `EventLoop.execute`, and meanwhile keeps
///   accepting commands into the next group. Snapshots are encoded on a background queue.
///
/// A failed append completes with its error (the pipeline then stops, see `CommitStage`). A
/// failed snapshot is logged and retried at the next interval: the log alone stays complete.
public final class StoreCommitStage: CommitStage {
    /// Where appends and snapshot writes run.
    public enum Threads {
        case caller
        case loop(EventLoop)
        case writer(EventLoop)
    }

    private let box: LogBox
    private let threads: Threads
    private let writer: DispatchQueue
    private let replays: DispatchQueue
    private let everyRevisions: UInt64
    private let everyMilliseconds: Int64
    private var lastSnapshot: (rev: UInt64, wall: Instant)
    private var snapshotInFlight = false
    /// A fork's genesis being encoded or written: a close before it lands writes it itself.
    private var pendingGenesis: PublishedState?
    private let logger: Logger

    /// - Parameters:
    ///   - log: the open log, positioned after recovery; from now on only this stage uses it.
    ///   - lastSnapshot: the revision and wall instant of the state recovery started from.
    ///   - writer: the writer queue of `.writer` threads; logs that share a connection (the
    ///     worlds of one `WorldStore`) share it too. By default a queue of this stage's own.
    ///   - genesis: a fork's revision 0 when the log holds only the reference to its source
    ///     (until `writeGenesis` has written it).
    ///   - replays: where `rebuild(at:completion:)` replays a past revision, off the loop.
    public init(
        log: any OrderedLog, settings: IsletConfiguration.Store, threads: Threads,
        lastSnapshot: (rev: UInt64, wall: Instant), logger: Logger,
        writer: DispatchQueue = DispatchQueue(label: "islet.store.writer", qos: .userInitiated), genesis: Engine? = nil,
        replays: DispatchQueue = .global(qos: .userInitiated)
    ) {
        self.box = LogBox(log, genesis: genesis)
        self.writer = writer
        self.replays = replays
        self.threads = threads
        self.everyRevisions = UInt64(max(1, settings.snapshotEveryRevisions))
        self.everyMilliseconds = Int64(settings.snapshotEverySeconds * 1000)
        self.lastSnapshot = lastSnapshot
        self.logger = logger
    }

    public func commit(_ records: [RevisionRecord], completion: @escaping ((any Error)?) -> Void) {
        let box = self.box
        switch self.threads {
        case .caller, .loop:
            completion(box.append(records))
        case .writer(let loop):
            let done = Unchecked(completion)
            self.writer.async {
                let error = box.append(records)
                loop.execute { done.value(error) }
            }
        }
    }

    public func snapshotIsDue(rev: UInt64, wall: Instant) -> Bool {
        guard !self.snapshotInFlight, rev > self.lastSnapshot.rev else { return false }
        return rev - self.lastSnapshot.rev >= self.everyRevisions
            || wall.milliseconds(since: self.lastSnapshot.wall) >= self.everyMilliseconds
    }

    public func snapshot(_ state: PublishedState) {
        self.write(state, then: nil)
    }

    public func writeGenesis(_ engine: Engine, wall: Instant, completion: @escaping (_ written: Bool) -> Void) {
        let genesis = PublishedState(engine: engine, wall: wall, history: RevisionHistory(maxRevisions: 0, maxBytes: 0))
        self.pendingGenesis = genesis
        let this = Unchecked(self)
        self.write(genesis) { written in
            if written { this.value.pendingGenesis = nil }
            completion(written)
        }
    }

    /// Encodes `state` off the loop and writes it on the log's thread; `completion` then runs on
    /// the loop (at once with `.caller` threads).
    private func write(_ state: PublishedState, then completion: ((_ written: Bool) -> Void)?) {
        // A genesis written again (after a failed write) is not the latest snapshot.
        if state.engine.rev >= self.lastSnapshot.rev { self.lastSnapshot = (state.engine.rev, state.wall) }
        let box = self.box
        let logger = self.logger
        switch self.threads {
        case .caller:
            let written = box.write(Self.encode(state), rev: state.engine.rev, wall: state.wall, logger: logger)
            completion?(written)
        case .loop(let loop):
            self.snapshotInFlight = true
            let this = Unchecked(self)
            let done = Unchecked(completion)
            DispatchQueue.global(qos: .utility).async {
                let bytes = Self.encode(state)
                loop.execute {
                    let written = box.write(bytes, rev: state.engine.rev, wall: state.wall, logger: logger)
                    this.value.snapshotInFlight = false
                    done.value?(written)
                }
            }
        case .writer(let loop):
            self.snapshotInFlight = true
            let this = Unchecked(self)
            let done = Unchecked(completion)
            let writer = self.writer
            DispatchQueue.global(qos: .utility).async {
                let bytes = Self.encode(state)
                writer.async {
                    let written = box.write(bytes, rev: state.engine.rev, wall: state.wall, logger: logger)
                    loop.execute {
                        this.value.snapshotInFlight = false
                        done.value?(written)
                    }
                }
            }
        }
    }

    /// Writes a last snapshot when revisions were published since the latest one (so the next
    /// start replays nothing), waits for pending writes, and closes the log. A snapshot still
    /// being encoded off the loop would land after the close and do nothing: a genesis then is
    /// written here, and the last snapshot is written whatever the one in flight was.
    public func close(_ state: PublishedState?, completion: @escaping () -> Void) {
        let box = self.box
        let genesis = self.pendingGenesis
        let final = state.flatMap { $0.engine.rev > self.lastSnapshot.rev || self.snapshotInFlight ? $0 : nil }
        let logger = self.logger
        let finish: @Sendable () -> Void = {
            if let genesis { _ = box.write(Self.encode(genesis), rev: genesis.engine.rev, wall: genesis.wall, logger: logger) }
            if let final { _ = box.write(Self.encode(final), rev: final.engine.rev, wall: final.wall, logger: logger) }
            box.close()
        }
        switch self.threads {
        case .caller, .loop: finish()
        case .writer: self.writer.sync(execute: finish)
        }
        completion()
    }

    public func engine(at rev: UInt64) -> Result<Engine, RevisionUnavailable> {
        let box = self.box
        switch self.threads {
        case .caller, .loop: return box.engine(at: rev)
        case .writer: return self.writer.sync { box.engine(at: rev) }
        }
    }

    public func rebuild(at rev: UInt64, completion: @escaping (Result<Engine, RevisionUnavailable>) -> Void) {
        let box = self.box
        let replays = self.replays
        switch self.threads {
        case .caller:
            completion(box.engine(at: rev))
        case .loop(let loop):
            let done = Unchecked(completion)
            let read = box.rebuild(at: rev)
            replays.async {
                let result = read.flatMap { $0.replay() }
                loop.execute { done.value(result) }
            }
        case .writer(let loop):
            let done = Unchecked(completion)
            self.writer.async {
                let read = box.rebuild(at: rev)
                replays.async {
                    let result = read.flatMap { $0.replay() }
                    loop.execute { done.value(result) }
                }
            }
        }
    }

    public func earliestRevision() -> UInt64? {
        let box = self.box
        switch self.threads {
        case .caller, .loop: return box.earliestRevision()
        case .writer: return self.writer.sync { box.earliestRevision() }
        }
    }

    private static func encode(_ state: PublishedState) -> [UInt8] {
        SnapshotPayload(engine: state.engine.snapshotBytes, history: state.history.allEntries).encoded()
    }
}

/// The log, reachable from the thread that owns it (the loop's, or the writer queue's); after
/// `close()` it is gone and late work does nothing.
private final class LogBox: @unchecked Sendable {
    private var log: (any OrderedLog)?
    /// A fork's revision 0 while its genesis snapshot is not written yet (the log holds only a
    /// reference to its source): the base `engine(at:)` rebuilds from.
    private var genesis: Engine?

    init(_ log: any OrderedLog, genesis: Engine?) {
        self.log = log
        self.genesis = genesis
    }

    /// Appends the group in one transaction; returns the error, if any.
    func append(_ records: [RevisionRecord]) -> (any Error)? {
        guard let log = self.log else { return StoreClosed() }
        do {
            try log.append(records.map(LogReplay.record))
            return nil
        } catch {
            return error
        }
    }

    /// Writes a snapshot; returns whether it was written. A failed snapshot loses nothing (the
    /// records stay), except a fork's genesis: until written, its log refers to its source.
    @discardableResult
    func write(_ payload: [UInt8], rev: UInt64, wall: Instant, logger: Logger) -> Bool {
        guard let log = self.log else { return false }
        do {
            try log.writeSnapshot(sequence: rev, instant: wall.millisecondsSinceEpoch, payload: payload)
            if rev == 0 { self.genesis = nil }
            logger.debug(
                "snapshot written", metadata: ["islet.store.rev": "\(rev)", "islet.store.bytes": "\(payload.count)"])
            return true
        } catch {
            // A fork's genesis that fails leaves its log referring to its source (a retry comes).
            logger.error(
                "snapshot failed; the log stays complete",
                metadata: ["islet.store.rev": "\(rev)", "islet.store.genesis": "\(rev == 0)", "error": "\(error)"])
            return false
        }
    }

    /// The engine at `rev`: the latest snapshot at or before it (or a pending genesis), and the
    /// records up to it.
    func engine(at rev: UInt64) -> Result<Engine, RevisionUnavailable> {
        guard let log = self.log else { return .failure(RevisionUnavailable(earliest: nil)) }
        return StoreRecovery.engine(of: log, at: rev, genesis: self.genesis)
    }

    /// What rebuilding the engine at `rev` reads from the log, to replay elsewhere.
    func rebuild(at rev: UInt64) -> Result<RevisionRebuild, RevisionUnavailable> {
        guard let log = self.log else { return .failure(RevisionUnavailable(earliest: nil)) }
        return StoreRecovery.rebuild(of: log, at: rev, genesis: self.genesis)
    }

    /// The oldest snapshot's revision: no state before it can be rebuilt.
    func earliestRevision() -> UInt64? {
        (try? self.log?.snapshotSequences())??.min()
    }

    func close() { self.log = nil }
}

/// The store was closed at shutdown; nothing more is appended.
struct StoreClosed: Error, CustomStringConvertible {
    var description: String { "the store is closed" }
}

/// Carries a loop-confined value through a background queue back to the loop thread, where
/// alone it is used.
struct Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
