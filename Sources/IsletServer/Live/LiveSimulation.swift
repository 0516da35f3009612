import IsletCore
import Logging

/// The engine on the loop thread, and the command pipeline around it.
///
/// Accepted batches (and clock steps) produce revisions at once, but nobody sees them yet: at
/// the end of the loop turn (`flush`, the loop's before-poll hook) the turn's revisions go to
/// the `CommitStage`; when it completes, the replies go out in the order the requests came,
/// then the patches are published, then the reads that waited run. Loop-confined.
///
/// In a cluster (`sharedOrder` set) the order is not this process's to decide: a batch is
/// proposed to the world's shared log and applied only when it comes back in the log's order
/// (`applyOrdered`), on every node alike; its reply waits for that. Ticks are proposed by the
/// node holding the world's clock.
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
    /// Set when the store failed (a commit, or a deletion it could not write): commands are
    /// refused from then on.
    private(set) var failure: APIError?
    /// The failure is the shared log's loss of this world (`logLost`), not this node's store:
    /// the node itself is healthy.
    private(set) var isLost = false
    /// False when, after a failed commit, the engine could not be rebuilt at the published
    /// revision (it had moved past what is durable): reads, forks and deletes are refused too.
    private(set) var holdsPublishedState = true
    /// While the engine is rebuilt after a failed commit: what waits for the pipeline waits.
    private var rebuilding = false

    /// In a cluster: where this world's inputs are ordered.
    var sharedOrder: (any SharedOrder)? {
        didSet { self.refreshWakeUp() }
    }
    /// This node's proposals not yet back from the shared log, by request number.
    private var proposals: [UInt64: Reply] = [:]
    private var nextRequest: UInt64 = 1
    private var tickProposed = false
    /// After a tick the log refused: the next is proposed no sooner (not at every loop turn).
    private var tickRetryAt: Instant?
    /// The latest wall instant applied from the shared log: entries proposed by nodes whose
    /// clocks differ are applied at no earlier instant than this, identically everywhere.
    private(set) var orderedWall: Instant

    /// Called with each committed group of revisions, in order, after their replies.
    var publish: ([RevisionRecord]) -> Void = { _ in }
    /// Called once if a commit fails.
    var failed: (APIError) -> Void = { _ in }
    /// Called with the error of each of this node's batches the engine refused, for metrics.
    var refused: (APIError) -> Void = { _ in }
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
        self.orderedWall = clock.now
    }

    /// True when every revision the engine has produced has been published (in a cluster: when
    /// every proposal of this node has come back).
    var isIdle: Bool { self.outbox.isEmpty && !self.commitInFlight && self.proposals.isEmpty && !self.rebuilding }

    /// Applies a batch of command objects now, atomically; `reply` runs once the revision is
    /// committed (or at once, in order, with the error). In a cluster the batch is proposed to
    /// the shared log instead, and `reply` runs once it has been applied in the log's order.
    func submit(_ commands: [JSONValue], reply: @escaping Reply) {
        if let failure = self.failure { return reply(.failure(failure)) }
        if self.sharedOrder != nil { return self.propose(.commands(commands), reply: reply) }
        let wall = self.clock.now
        defer { self.nextWakeUp = self.engine.nextWakeUp }
        do throws(APIError) {
            let revision = try self.engine.apply(commands, at: wall)
            self.outbox.append(
                Entry(record: RevisionRecord(cause: .commands(commands), wall: wall, revision: revision), reply: reply))
        } catch {
            self.refused(error)
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
        if self.sharedOrder != nil { return self.proposeTickIfDue() }
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
        self.runWaitingIfIdle()
    }

    // MARK: The shared log (a cluster)

    /// Appends `cause` to the shared log at this turn's wall instant; `reply` (if any) runs once
    /// the entry has been applied here, or with `unavailable` if it could not be appended.
    private func propose(_ cause: RevisionRecord.Cause, reply: Reply?) {
        guard let order = self.sharedOrder, order.isAvailable else {
            reply?(.failure(APIError(.unavailable, "the cluster's log (Redis) cannot be reached; retry later")))
            return
        }
        let request = self.nextRequest
        self.nextRequest += 1
        if let reply { self.proposals[request] = reply }
        order.append(cause, wall: self.clock.now, request: request) { [self] error in
            guard let error else { return }
            if case .tick = cause {
                self.tickProposed = false
                self.tickRetryAt = self.clock.now.adding(seconds: 1)
                self.refreshWakeUp()
            }
            self.proposals.removeValue(forKey: request)?(.failure(error))
            self.runWaitingIfIdle()
        }
    }

    /// The clock holder's part: a tick entry when scheduled transitions are due.
    private func proposeTickIfDue() {
        let now = self.clock.now
        guard let order = self.sharedOrder, order.holdsClock, order.isAvailable, !self.tickProposed,
            let due = self.engine.nextWakeUp,
            due <= now, self.tickRetryAt.map({ $0 <= now }) ?? true
        else { return }
        self.tickProposed = true
        self.refreshWakeUp()
        self.propose(.tick, reply: nil)
    }

    /// Applies entries of the shared log in the log's order (on every node alike), answers this
    /// node's proposals among them, then publishes the revisions.
    func applyOrdered(_ entries: [OrderedEntry]) {
        var records: [RevisionRecord] = []
        var replies: [(Reply, Result<Revision, APIError>)] = []
        for entry in entries {
            let (record, result) = entry.apply(to: &self.engine, after: &self.orderedWall)
            if let record { records.append(record) }
            if case .tick = entry.cause, entry.request != nil { self.tickProposed = false }
            if let request = entry.request, let result, let reply = self.proposals.removeValue(forKey: request) {
                if case .failure(let error) = result { self.refused(error) }
                replies.append((reply, result))
            }
        }
        self.refreshWakeUp()
        for (reply, result) in replies { reply(result) }
        if let last = records.last {
            self.publishedRev = last.revision.rev
            self.publish(records)
        }
        self.runWaitingIfIdle()
    }

    /// Replaces the engine with one loaded from the shared log's snapshot (a node joining late,
    /// or one whose log was trimmed past its position).
    func reload(_ engine: Engine, wall: Instant) {
        self.engine = engine
        self.orderedWall = wall
        self.publishedRev = engine.rev
        self.refreshWakeUp()
    }

    /// Answers one proposal with `error`: its entry is in the log but cannot be applied.
    func refuseProposal(_ request: UInt64, _ error: APIError) {
        self.proposals.removeValue(forKey: request)?(.failure(error))
        self.runWaitingIfIdle()
    }

    /// Answers every proposal still waiting with `error`: the log went away (whether they were
    /// appended is not known; a retry may apply a batch twice), or the world was deleted.
    func abandonProposals(_ error: APIError) {
        let proposals = self.proposals
        self.proposals = [:]
        self.tickProposed = false
        for request in proposals.keys.sorted() { proposals[request]?(.failure(error)) }
        self.runWaitingIfIdle()
    }

    /// The wall instant the loop should next turn for this world: in a cluster, only the clock
    /// holder's (and not while its tick is on its way).
    func refreshWakeUp() {
        guard let order = self.sharedOrder else { return self.nextWakeUp = self.engine.nextWakeUp }
        let due = self.engine.nextWakeUp.map { due in self.tickRetryAt.map { max(due, $0) } ?? due }
        self.nextWakeUp = order.holdsClock && !self.tickProposed ? due : nil
    }

    private func runWaitingIfIdle() {
        guard self.isIdle, !self.waiting.isEmpty else { return }
        let waiting = self.waiting
        self.waiting = []
        for body in waiting { body() }
    }

    /// The shared log lost this world: as after a store failure, commands are refused with
    /// `error` from now on and the state last published stays served.
    func logLost(_ error: APIError) {
        guard self.failure == nil else { return }
        self.failure = error
        self.isLost = true
        self.abandonProposals(error)
    }

    private static let storeFailure = APIError(.internal, "the store failed; the server accepts no more commands")

    /// The store failed outside a commit (a deletion it could not write): as after a failed
    /// commit, commands are refused from now on and the state last published stays served.
    func storeFailed(_ error: any Error) {
        self.logger.error("store failed", metadata: ["error.type": "\(type(of: error))", "error": "\(error)"])
        guard self.failure == nil else { return }
        self.failure = Self.storeFailure
        self.failed(Self.storeFailure)
    }

    private func commitFailed(_ entries: [Entry], _ error: any Error) {
        let failure = Self.storeFailure
        self.failure = failure
        self.logger.error("commit failed", metadata: ["error.type": "\(type(of: error))", "error": "\(error)"])
        for entry in entries { entry.reply?(.failure(entry.error ?? failure)) }
        for entry in self.outbox { entry.reply?(.failure(entry.error ?? failure)) }
        self.outbox = []
        self.failed(failure)
        // The engine has moved past what is durable: back to the published revision, rebuilt
        // from the log. What waits for the pipeline (reads, forks, deletes) then runs on it, or
        // is refused when it cannot be rebuilt; commands are refused from now on.
        self.rebuilding = true
        self.commitStage.rebuild(at: self.publishedRev) { [weak self] result in
            guard let self else { return }
            self.rebuilding = false
            switch result {
            case .success(let engine): self.engine = engine
            case .failure: self.holdsPublishedState = false
            }
            self.runWaitingIfIdle()
        }
    }
}

/// Where a cluster orders a world's inputs: its log on Redis Streams (`ClusterNode`).
protocol SharedOrder: AnyObject {
    /// False while the log cannot be reached: proposals are refused with `unavailable`.
    var isAvailable: Bool { get }
    /// Whether this node holds the world's clock lease, so proposes its ticks.
    var holdsClock: Bool { get }
    /// Appends one entry; `completion` runs on the loop only if it could not be appended.
    func append(_ cause: RevisionRecord.Cause, wall: Instant, request: UInt64, completion: @escaping (APIError?) -> Void)
}

/// One entry of a world's shared log, as every node applies it.
struct OrderedEntry {
    var cause: RevisionRecord.Cause
    /// The wall instant of the node that proposed it.
    var wall: Instant
    /// This node's request number when this node proposed it.
    var request: UInt64?

    /// Applies the entry to `engine` at `max(wall, last)` (then the new `last`): the revision it
    /// produced, if any, and the result its proposer is answered with (nil for a tick).
    func apply(to engine: inout Engine, after last: inout Instant) -> (RevisionRecord?, Result<Revision, APIError>?) {
        let wall = max(self.wall, last)
        last = wall
        switch self.cause {
        case .commands(let commands):
            do throws(APIError) {
                let revision = try engine.apply(commands, at: wall)
                return (RevisionRecord(cause: self.cause, wall: wall, revision: revision), .success(revision))
            } catch {
                return (nil, .failure(error))
            }
        case .tick:
            return (engine.advance(to: wall).map { RevisionRecord(cause: .tick, wall: wall, revision: $0) }, nil)
        }
    }
}
