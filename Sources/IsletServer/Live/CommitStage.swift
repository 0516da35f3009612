public import IsletCore

/// One revision as the commit stage receives it: what produced it (the replay input) and what
/// it changed.
public struct RevisionRecord: Sendable {
    /// What produced a revision.
    public enum Cause: Sendable, Equatable {
        /// An accepted batch of command objects (from `POST /v1/commands`, a resource route, a
        /// stream `command` or the APNs-style ingress), exactly as applied.
        case commands([JSONValue])
        /// A clock step: `engine.advance(to: wall)` fired scheduled transitions (a `tick`).
        case tick
    }

    public let cause: Cause
    /// The wall instant the engine was given (`apply(_:at:)` or `advance(to:)`): replaying the
    /// same causes at the same wall instants through the same engine reproduces the revision.
    public let wall: Instant
    /// The revision: number, simulated instant, patch operations (and their encoding), results.
    public let revision: Revision

    public init(cause: Cause, wall: Instant, revision: Revision) {
        self.cause = cause
        self.wall = wall
        self.revision = revision
    }
}

/// The persistence seam of the command pipeline.
///
/// Once per loop turn that produced revisions, the pipeline hands them to `commit`, in order,
/// before any client sees them: acks, HTTP replies and stream patches for those revisions go
/// out only after `completion` has been called with `nil`. Reads (`GET /v1/state`, snapshots)
/// wait too, so no client ever observes a revision whose commit has not completed.
///
/// Rules for implementations:
/// - `commit` is called on the loop thread, never again before the previous call's
///   `completion`; revisions accepted meanwhile wait for the next call (one group per call).
/// - Call `completion` exactly once, on the loop thread: `nil` when the records are durable, or
///   the error. It may be called before `commit` returns (a synchronous commit, e.g. one SQLite
///   transaction per turn) or later (work handed to another thread, then back with
///   `EventLoop.execute`).
/// - A failed commit stops the pipeline: the server answers those requests with `internal`,
///   closes every stream with 1011 and refuses further commands (its state has moved past what
///   is durable).
///
/// A stage that also keeps snapshots of the state (`StoreCommitStage`) is asked, on the loop
/// thread whenever the pipeline is idle (every revision published), whether one is due, and
/// given the published state to store. At shutdown it is closed once, after the last reply.
public protocol CommitStage: AnyObject {
    func commit(_ records: [RevisionRecord], completion: @escaping ((any Error)?) -> Void)

    /// Whether a snapshot of the published state at `rev` should be taken now. Called on the loop
    /// thread when the pipeline is idle. Default: never.
    func snapshotIsDue(rev: UInt64, wall: Instant) -> Bool

    /// Stores a snapshot of `state` (asked for by `snapshotIsDue`). Called on the loop thread.
    func snapshot(_ state: PublishedState)

    /// Finishes the stage at shutdown: `state` (nil if revisions were still unpublished) may be
    /// stored as a last snapshot, pending writes finish, the store is closed; then `completion`
    /// runs on the loop thread. Default: `completion()` at once.
    func close(_ state: PublishedState?, completion: @escaping () -> Void)

    /// The engine at an earlier revision `rev`, rebuilt from the log (a snapshot at or before it
    /// and the records up to it), on the calling thread: for a fork restored at start, before
    /// traffic (a serving server uses `rebuild(at:completion:)`); the error names the earliest
    /// revision the log still reaches.
    func engine(at rev: UInt64) -> Result<Engine, RevisionUnavailable>

    /// `engine(at:)` for a server that keeps serving meanwhile: the log is read where it lives
    /// and the revision replayed off the loop; `completion` runs on the loop (at once for a
    /// stage without one).
    func rebuild(at rev: UInt64, completion: @escaping (Result<Engine, RevisionUnavailable>) -> Void)

    /// The earliest revision `engine(at:)` can rebuild, if any.
    func earliestRevision() -> UInt64?

    /// Writes a fork's revision 0 (`engine`) as its genesis snapshot, off the loop; `completion`
    /// runs on the loop once it is written or has failed (`written`). Until it is written the log
    /// holds a reference to the source.
    func writeGenesis(_ engine: Engine, wall: Instant, completion: @escaping (_ written: Bool) -> Void)
}

/// A revision a log no longer reaches (or never kept: a store-less server keeps only its
/// latest state), with the earliest one it can rebuild.
public struct RevisionUnavailable: Error, Sendable {
    public let earliest: UInt64?
}

extension CommitStage {
    public func snapshotIsDue(rev: UInt64, wall: Instant) -> Bool { false }
    public func snapshot(_ state: PublishedState) {}
    public func close(_ state: PublishedState?, completion: @escaping () -> Void) { completion() }
    public func engine(at rev: UInt64) -> Result<Engine, RevisionUnavailable> {
        .failure(RevisionUnavailable(earliest: nil))
    }
    public func rebuild(at rev: UInt64, completion: @escaping (Result<Engine, RevisionUnavailable>) -> Void) {
        completion(self.engine(at: rev))
    }
    public func earliestRevision() -> UInt64? { nil }
    public func writeGenesis(_ engine: Engine, wall: Instant, completion: @escaping (_ written: Bool) -> Void) {
        completion(true)
    }
}

/// The published state of an idle pipeline, as a snapshot stores it: the engine (a value whose
/// copy costs O(1)) and the stream history of resumable revisions.
public struct PublishedState: Sendable {
    /// The engine at the latest published revision (`engine.rev`).
    public let engine: Engine
    /// The wall instant of the loop turn.
    public let wall: Instant
    let history: RevisionHistory
}

/// The commit stage of a server without persistence: completes at once.
public final class ImmediateCommitStage: CommitStage {
    public init() {}

    public func commit(_ records: [RevisionRecord], completion: @escaping ((any Error)?) -> Void) {
        completion(nil)
    }
}
