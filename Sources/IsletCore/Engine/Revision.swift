internal import HashTreeCollections

/// One accepted batch or clock step: its number, instant, patch and command results.
public struct Revision: Sendable, Hashable {
    public var rev: UInt64
    /// The simulated instant of the revision (the document's `/clock/now` after it).
    public var at: Instant
    /// The canonical encoding of the RFC 6902 operations that turn the previous document into
    /// this one (a JSON array), written as the engine produced them. Paths are absolute and never
    /// above `/<collection>/<id>`; `/clock/now` is always among them.
    public var encodedOps: [UInt8]
    /// How many operations `encodedOps` holds.
    public var operationCount: Int
    /// One result per command of the batch (API.md); empty for a clock step.
    public var results: [JSONValue]
    /// How many scheduled transitions (deadlines) the revision applied.
    public var transitions: Int
    /// What the revision let go of to keep the world within its bounds (for `/metrics`).
    public var discards = Discards()

    /// The operations, parsed from `encodedOps` on each read (only a subscription narrowed
    /// below a path needs them: the revision does not keep them as trees).
    /// - Complexity: O(size of the patch).
    public var ops: [PatchOperation] {
        do {
            return try [PatchOperation](decoding: self.encodedOps)
        } catch {
            preconditionFailure("revision \(self.rev)'s own patch does not parse: \(error)")
        }
    }
}

/// What a revision let go of to keep the world within its bounds: counted by the server's
/// metrics, each also visible in the state (a delivery record, or a token answering 400).
public struct Discards: Sendable, Hashable {
    /// Retired push tokens forgotten past `EngineLimits.retiredTokens` (AP-4).
    public var retiredTokens = 0
    /// Throttled pushes replaced by a newer one for the same activity or channel (AP-9).
    public var coalescedPushes = 0
    /// Throttled pushes dropped past `EngineLimits.throttledPerApp`.
    public var droppedThrottled = 0
    /// Deferred pushes dropped past `EngineLimits.deferredPerApp`.
    public var droppedDeferred = 0

    public init() {}

    /// True when nothing was let go of.
    public var isEmpty: Bool { self == Discards() }
}

/// What the revision in progress touched, so that only those subtrees are rebuilt and diffed.
struct ChangeSet: Sendable {
    /// The activities touched, each as the document showed it before the revision (`nil`: it
    /// had none): their entries are built from the model, and their operations come from
    /// comparing the two (``Engine/publishActivity(_:was:into:)``).
    var activities: [String: Activity?] = [:]
    /// The configuration before the revision changed it (activities' layouts follow it);
    /// `nil` when it did not.
    var publishedConfiguration: SimulatorConfiguration?
    /// Activities whose fragments must be rendered again before their JSON is rebuilt.
    var renders: Set<String> = []
    var apps: Set<String> = []
    /// The apps whose delivery log changed in this revision (their ops follow from the counts,
    /// without comparing logs; an app not also in `apps` is not rebuilt).
    var deliveryLogs: [String: DeliveryLogChange] = [:]
    /// The channels of each app that changed in this revision (created, deleted, broadcast to,
    /// subscribed to): only their entries are rebuilt and compared.
    var channels: [String: Set<String>] = [:]
    var devices: Set<String> = []
    /// Every device's scene must be rebuilt (configuration or an app's identity changed).
    var allDevices = false
    /// Per device, the rankings the revision changed and their Lock Screen moves (LA-15). The
    /// Lock Screen list is not part of a device's stored entry, so a Lock Screen change alone
    /// does not rebuild the entry.
    var scenes: [String: SceneChange] = [:]
    var config = false
    var clockSettings = false
    var transitions = 0
    /// Widgets touched in this revision, each once (their `touchMark` says so), in touch order.
    var widgets: [TouchedWidget] = []
    /// Widgets removed in this revision that the document showed.
    var unpublishedWidgets: Set<String> = []
    /// Stacks whose document entry must be rebuilt, each once (their `touchMark`).
    var stacks: [String] = []
    /// Stacks (slots) to re-rank at `now`, each once (their `evaluationPending` flag; a slot
    /// whose stack was replaced in the batch may be listed twice, and is re-ranked once), in
    /// request order.
    var evaluations: [Int32] = []
    /// `/relevance` changed.
    var relevance = false
    var discards = Discards()

    /// A guess of the revision's encoded patch size from what it touched (a widget's members
    /// take ~1.5 KiB, a stack's ranking ~2.5 KiB), so that a huge patch is not copied as it grows.
    var encodedSizeGuess: Int {
        let entries = self.activities.count + self.apps.count + self.devices.count + self.scenes.count
        return 512 + 2_048 * (self.widgets.count + entries) + 3_072 * self.stacks.count
    }

    /// Notes an activity as touched; `published` (what the document showed before the
    /// revision) is read only on its first touch, which must come before it changes.
    mutating func touchActivity(_ id: String, published: @autoclosure () -> Activity?, render: Bool) {
        if self.activities.index(forKey: id) == nil { self.activities[id] = .some(published()) }
        if render { self.renders.insert(id) }
    }
}

/// How an app's delivery log changed in a revision.
struct DeliveryLogChange: Sendable {
    /// How many records the document showed before the revision.
    var published: Int
    /// How many records the revision appended (some may be gone again, past `deliveriesKept`).
    var appended = 0
}

extension Engine {
    /// Applies a batch of command objects atomically: all of them, or none and an error.
    ///
    /// Deadlines due at or before the batch's instant are applied first, each at its own
    /// instant, in the same revision. One revision results, with one result per command.
    /// - Parameters:
    ///   - commands: the command objects (`{"type": …}`), as in `{"commands": [...]}`.
    ///   - wall: the caller's wall instant for the batch.
    /// - Throws: the first invalid command's error, its `field` under `/commands/<i>`; the
    ///   engine is then unchanged.
    /// - Complexity: O(log n) per entity each command touches, plus the size of the changed
    ///   subtrees; never O(n) in the number of entities.
    ///   - admission: `.logged` when replaying a log, whose records were admitted when written.
    public mutating func apply(_ commands: [JSONValue], at wall: Instant, admission: Admission = .new)
        throws(APIError) -> Revision
    {
        var decoded: [Command] = []
        decoded.reserveCapacity(commands.count)
        for (index, json) in commands.enumerated() {
            do throws(APIError) {
                decoded.append(try Command(json: json))
            } catch {
                throw error.nested(under: JSONPointer(tokens: ["commands", String(index)]))
            }
        }
        return try self.apply(decoded, at: wall, admission: admission)
    }

    /// Applies a batch of decoded commands atomically (see ``apply(_:at:admission:)-JSONValue``).
    public mutating func apply(_ commands: [Command], at wall: Instant, admission: Admission = .new)
        throws(APIError) -> Revision
    {
        guard !commands.isEmpty else {
            throw APIError(.invalidArgument, "a batch needs at least one command", field: "/commands")
        }
        self.admission = admission
        defer { self.admission = .new }
        if commands.count == 1, self.runsInPlace(commands[0], at: wall) {
            let now = self.now
            let results: [JSONValue]
            do throws(APIError) {
                results = try self.run(commands, at: wall)
            } catch {
                self.now = now
                throw error
            }
            let revision = self.finishRevision(results: results)
            self.settleScheduler()
            return revision
        }
        var trial = self
        let results = try trial.run(commands, at: wall)
        let revision = trial.finishRevision(results: results)
        // `consume` ends the trial's lifetime so the committed state owns its buffers uniquely
        // and settling the scheduler does not copy the heap.
        self = consume trial
        self.settleScheduler()
        return revision
    }

    /// Applies every deadline due at or before the simulated instant of `wall`, each at its own
    /// instant, as one revision.
    /// - Returns: the revision, or `nil` when nothing changed (the document stays as it was).
    /// - Complexity: O(k log n) for k transitions; never proportional to the time elapsed.
    public mutating func advance(to wall: Instant) -> Revision? {
        let target = self.simulatedInstant(atWall: wall)
        guard let next = self.nextDeadline, next <= target else { return nil }
        let start = self.now
        self.runDeadlines(upTo: target)
        guard self.changes.transitions > 0 else {
            self.now = start
            self.settleScheduler()
            return nil
        }
        let revision = self.finishRevision(results: [])
        self.settleScheduler()
        return revision
    }

    /// Convenience for tools and tests: ``advance(to:)`` at the time source's instant.
    public mutating func advance(using source: some TimeSource) -> Revision? {
        self.advance(to: source.now)
    }

    /// Whether a lone command may run on the engine itself instead of on a copy (a copy makes
    /// every map, index and log the command touches copy itself first), because a refusal
    /// cannot leave a change behind:
    /// - a clock.advance whose arguments are checked cannot fail, so advancing a large world
    ///   does not copy every entity it changes;
    /// - an activity.update (the push path's hot command) checks everything before it changes
    ///   anything (`receiveUpdate`: a push is never refused, only a non-push one over a limit,
    ///   and its budget is charged only for a push), when no deadline falls due before it (those
    ///   would run first, and must not stay behind if it is refused).
    private func runsInPlace(_ command: Command, at wall: Instant) -> Bool {
        switch command {
        case .clockAdvance(let advance): return self.canAdvanceClock(advance)
        case .activityUpdate: return self.nextDeadline.map { $0 > self.simulatedInstant(atWall: wall) } ?? true
        default: return false
        }
    }

    private mutating func run(_ commands: [Command], at wall: Instant) throws(APIError) -> [JSONValue] {
        let target = self.simulatedInstant(atWall: wall)
        self.runDeadlines(upTo: target)
        self.now = target
        var results: [JSONValue] = []
        results.reserveCapacity(commands.count)
        for (index, command) in commands.enumerated() {
            do throws(APIError) {
                results.append(try self.execute(command, wall: wall))
            } catch {
                throw error.nested(under: JSONPointer(tokens: ["commands", String(index)]))
            }
        }
        // SS-6: rankings the batch changed are recomputed in the same revision.
        self.evaluatePendingStacks()
        return results
    }

    /// Pops and applies due deadlines in `(instant, sequence)` order; each sets `now` to its
    /// own instant first. Stacks whose ranking may have changed are re-ranked at each instant
    /// after its last transition. Returns how many deadlines were live.
    @discardableResult
    mutating func runDeadlines(upTo target: Instant) -> Int {
        var applied = 0
        while let deadline = self.scheduler.popDue(atOrBefore: target) {
            // Stacks are re-ranked once every transition of an instant has happened, before time
            // moves on; a re-ranking may arm a deadline earlier than the one just popped.
            if deadline.at > self.now, !self.changes.evaluations.isEmpty {
                self.evaluatePendingStacks()
                if let earliest = self.scheduler.earliest, earliest < deadline {
                    self.scheduler.reinsert(deadline)
                    continue
                }
            }
            // Two steps: the widget of an entry transition eight deadlines ahead, then, four
            // ahead, the entries it points to (a transition takes ~0.4 µs).
            if let ahead = self.scheduler.upcoming(after: 2 * Self.transitionPrefetchDistance),
                case .widgetEntry(let slot) = ahead.kind
            {
                self.widgets.prefetch(slot: slot)
            }
            if let ahead = self.scheduler.upcoming(after: Self.transitionPrefetchDistance),
                case .widgetEntry(let slot) = ahead.kind
            {
                // In place: reading a widget out of the table would copy it (and retain its parts).
                self.widgets.modify(slot: slot) { $0.prefetchNextEntries() }
            }
            if self.fireIfLive(deadline) { applied += 1 }
        }
        self.evaluatePendingStacks()
        self.changes.transitions += applied
        return applied
    }

    /// How many deadlines ahead an entry transition's timeline is prefetched: far enough for the
    /// miss to be over when its turn comes (a transition takes ~0.4 µs), near enough to stay in
    /// the cache.
    static let transitionPrefetchDistance = 4

    /// Merges staged deadlines, drops cancelled ones from the head and compacts if needed.
    mutating func settleScheduler() {
        var scheduler = self.scheduler
        self.scheduler = DeadlineScheduler()  // so `scheduler` owns the heap uniquely
        scheduler.dropCancelledHead { !self.isLive($0) }
        scheduler.compactIfGrown { self.isLive($0) }
        self.scheduler = scheduler
    }
}

/// Whether a batch is admitted now or replayed from a log that admitted it earlier.
///
/// A few revision-2 rules only refuse what revision 1 accepted (SC-3's phrase token). A log
/// written before them must still replay, so such admission rules check new batches only;
/// every rule that changes what a command does applies to both.
public enum Admission: Sendable {
    case new
    case logged
}
