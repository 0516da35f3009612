import IsletCore
import Logging

/// The engine on the loop thread, and the command pipeline around it.
///
/// Accepted batches (and clock steps) produce revisions at once, but nobody sees them yet: at
/// the end of the loop turn (`flush`, the loop's before-poll hook) the turn's revisions go to
/// the `CommitStage`; when it completes, the replies go out in the order the requests came,
/// then the patches are published, then the reads that waited run. Loop-confined.
final class LiveSimulation {
    /// What a submitted batch receives once its turn has been committed.
    typealias Reply = (Result<Revision, APIError>) -> Void

    private struct Entry {
        var record: RevisionRecord?
        var error: APIError?
        var reply: Reply?
    }

    private(set) var engine: Engine
    /// The wall instant the engine next needs `advance(to:)` (its `nextWakeUp`), kept after each
    /// change: a loop turn over many idle simulations reads this field instead of copying each
    /// engine out of its simulation.
    private(set) var nextWakeUp: Instant?
    /// The history the revisions belong to (API.md `epoch`).
    let epoch: String
    let clock: TurnClock
    let commitStage: any CommitStage
    private let logger: Logger
    /// The latest revision whose commit completed and whose replies and patches went out.
    private(set) var publishedRev: UInt64
    /// Requests of this turn (or waiting behind a commit in flight), in arrival order.
    private var outbox: [Entry] = []
    private var commitInFlight = false
    /// Work that must see only published state, waiting for the pipeline to be idle.
    private var waiting: [() -> Void] = []
    /// Set when a commit failed: the state has moved past what is durable.
    private(set) var failure: APIError?

    /// Called with each committed group of revisions, in order, after their replies.
    var publish: ([RevisionRecord]) -> Void = { _ in }
    /// Called once if a commit fails.
    var failed: (APIError) -> Void = { _ in }
    /// Called after each successful commit with its number of records and how long it took
    /// (from handing the group over to its completion), for metrics.
    var committed: (_ records: Int, _ duration: Duration) -> Void = { _, _ in }

    init(engine: Engine, epoch: String, clock: TurnClock, commitStage: any CommitStage, logger: Logger) {
        self.engine = engine
        self.epoch = epoch
        self.clock = clock
        self.commitStage = commitStage
        self.logger = logger
        self.publishedRev = engine.rev
        self.nextWakeUp = engine.nextWakeUp
    }

    /// True when every revision the engine has produced has been published.
    var isIdle: Bool { self.outbox.isEmpty && !self.commitInFlight }

    /// Applies a batch of command objects now, atomically; `reply` runs once the revision is
    /// committed (or at once, in order, with the error).
    func submit(_ commands: [JSONValue], reply: @escaping Reply) {
        if let failure = self.failure { return reply(.failure(failure)) }
        let wall = self.clock.now
        defer { self.nextWakeUp = self.engine.nextWakeUp }
        do throws(APIError) {
            let revision = try self.engine.apply(commands, at: wall)
            self.outbox.append(
                Entry(record: RevisionRecord(cause: .commands(commands), wall: wall, revision: revision), reply: reply))
        } catch {
            if self.isIdle { return reply(.failure(error)) }
            self.outbox.append(Entry(error: error, reply: reply))
        }
    }

    /// Runs `body` when every revision produced so far has been published: at once when the
    /// pipeline is idle, otherwise after the next publication that leaves it idle.
    func whenPublished(_ body: @escaping () -> Void) {
        if self.isIdle { body() } else { self.waiting.append(body) }
    }

    /// The end of a loop turn: fires due transitions (a `tick` revision), then hands the turn's
    /// revisions to the commit stage.
    func flush() {
        guard self.failure == nil else { return }
        self.advanceIfDue()
        guard !self.commitInFlight, !self.outbox.isEmpty else { return }
        let entries = self.outbox
        self.outbox = []
        let records = entries.compactMap(\.record)
        guard !records.isEmpty else { return self.deliver(entries, records) }
        self.commitInFlight = true
        let started = ContinuousClock.now
        self.commitStage.commit(records) { [self] error in
            self.commitInFlight = false
            if let error { return self.commitFailed(entries, error) }
            self.committed(records.count, started.duration(to: .now))
            self.deliver(entries, records)
        }
    }

    /// Fires scheduled transitions whose wall instant has come (also those a rejected batch
    /// left due).
    private func advanceIfDue() {
        guard let due = self.nextWakeUp, due <= self.clock.now else { return }
        let wall = self.clock.now
        defer { self.nextWakeUp = self.engine.nextWakeUp }
        if let revision = self.engine.advance(to: wall) {
            self.outbox.append(Entry(record: RevisionRecord(cause: .tick, wall: wall, revision: revision)))
        }
    }

    private func deliver(_ entries: [Entry], _ records: [RevisionRecord]) {
        for entry in entries {
            if let record = entry.record {
                entry.reply?(.success(record.revision))
            } else if let error = entry.error {
                entry.reply?(.failure(error))
            }
        }
        if let last = records.last {
            self.publishedRev = last.revision.rev
            self.publish(records)
        }
        // More may have been accepted while a commit was in flight: the next flush takes them.
        guard self.isIdle else { return }
        let waiting = self.waiting
        self.waiting = []
        for body in waiting { body() }
    }

    private func commitFailed(_ entries: [Entry], _ error: any Error) {
        let failure = APIError(.internal, "the store failed; the server accepts no more commands")
        self.failure = failure
        self.logger.error("commit failed", metadata: ["error.type": "\(type(of: error))", "error": "\(error)"])
        for entry in entries { entry.reply?(.failure(entry.error ?? failure)) }
        for entry in self.outbox { entry.reply?(.failure(entry.error ?? failure)) }
        self.outbox = []
        self.waiting = []
        self.failed(failure)
    }
}
