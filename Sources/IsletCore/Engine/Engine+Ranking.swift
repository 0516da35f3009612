internal import HashTreeCollections
internal import Synchronization

/// Re-ranking stacks at `now`, and `relevance.setWeights` (SS-4 … SS-6).
extension Engine {
    /// Re-ranks every stack a transition or command asked for, at `now`. The stacks are moved
    /// out of the table, re-ranked (when many, by two threads: a re-ranking reads and writes its
    /// own stack only, and a long clock step re-ranks 10,000 stacks at each top of the hour),
    /// then moved back in request order, which arms their next deadlines in the order one thread
    /// alone would: the same sequences, the same document.
    mutating func evaluatePendingStacks() {
        guard !self.changes.evaluations.isEmpty else { return }
        let slots = self.changes.evaluations
        self.changes.evaluations = []
        var zones = ZoneMemo()
        var pending: [PendingReRanking] = []
        pending.reserveCapacity(slots.count)
        for (index, slot) in slots.enumerated() {
            // A stack four moves ahead: moving one out reads all its bytes.
            if index + 4 < slots.count { self.stacks.prefetch(slot: slots[index + 4]) }
            // A slot listed twice (its stack deleted, another created in it, in one batch) is
            // re-ranked once: a second re-ranking at the same instant would change nothing.
            guard let device = self.stacks.modify(slot: slot, { $0.device }) else { continue }
            var stack: Stack?
            self.stacks.exchange(slot: slot, with: &stack)
            pending.append(PendingReRanking(slot: slot, zone: zones.zone(of: device, in: self.devices), stack: stack))
        }
        // Each stack's own zone replaces `.utc` when it is re-ranked.
        let context = Stack.EvaluationContext(
            now: self.now, settings: self.relevance, cap: self.configuration.stackRotationsPerWidgetPerDay,
            habitHalfLifeMilliseconds: self.configuration.habitHalfLifeSeconds * 1000, zone: .utc,
            mark: self.revisionMark)
        let sideBySide = pending.count >= self.sideBySideMinimum
        pending.withUnsafeMutableBufferPointer { stacks in
            guard sideBySide else { return PendingReRanking.run(stacks, stacks.indices, context) }
            let shared = SharedReRankings(stacks, context)
            let helper = ConcurrentWork { shared.run() }
            shared.run()
            helper.wait()
        }
        self.finishReRankings(&pending)
    }

    /// Moves re-ranked stacks back in, in order, recording what changed and arming each new
    /// re-evaluation instant.
    private mutating func finishReRankings(_ reRanked: inout [PendingReRanking]) {
        reRanked.withUnsafeMutableBufferPointer { stacks in
            for index in stacks.indices {
                let outcome = stacks[index].outcome
                let slot = stacks[index].slot
                if outcome.newlyTouched { self.changes.stacks.append(stacks[index].inPlace { $0.id }) }
                if outcome.topChanged { self.changes.devices.insert(stacks[index].inPlace { $0.device }) }
                if let at = outcome.schedule {
                    let sequence = self.scheduler.schedule(.stackEvaluation(stack: slot), at: at)
                    stacks[index].inPlace { $0.evaluationDeadline = sequence }
                }
                self.stacks.exchange(slot: slot, with: &stacks[index].stack)
            }
        }
    }

    /// `relevance.setWeights`: global (every stack without its own value re-ranks) or one
    /// stack's overrides (SS-6: in the same revision).
    mutating func setWeights(_ set: RelevanceSetWeights) throws(APIError) -> JSONValue {
        guard let id = set.stack else {
            for (feature, weight) in set.weights { if let weight { self.relevance.weights[feature] = weight } }
            if let hysteresis = set.hysteresis { self.relevance.hysteresis = hysteresis }
            if let dwell = set.minDwellSeconds { self.relevance.minDwellSeconds = dwell }
            self.changes.relevance = true
            for stack in self.stacks.keys.sorted() {
                self.touchStack(stack)
                self.requestEvaluation(of: stack)
            }
            return [:]
        }
        guard var stack = self.stacks[id] else { throw APIError(.notFound, "no stack \"\(id)\"", field: "/stack") }
        if set.reset { stack.overrides = RelevanceOverrides() }
        for (feature, weight) in set.weights { stack.overrides.weights[feature] = weight }
        if let hysteresis = set.hysteresis { stack.overrides.hysteresis = hysteresis }
        if let dwell = set.minDwellSeconds { stack.overrides.minDwellSeconds = dwell }
        self.stacks[id] = stack
        self.touchStack(id)
        self.requestEvaluation(of: id)
        return [:]
    }
}

/// A stack moved out of the table to be re-ranked, with its device's time zone (looked up
/// before, so that a re-ranking on the second thread reads nothing of the engine's).
struct PendingReRanking: Sendable {
    let slot: Int32
    let zone: TimeZoneRule
    /// Optional only to be exchanged with the table's slot: never `nil` while pending.
    var stack: Stack?
    var outcome = Stack.EvaluationOutcome()

    /// Re-ranks `stacks[range]` in order. Each stack's members and last ranking are prefetched
    /// two re-rankings ahead, then what the members point to one ahead (one re-ranking takes
    /// ~2 µs, and its first loads otherwise miss the cache); never beyond `range`, which the
    /// other thread may be changing.
    static func run(
        _ stacks: UnsafeMutableBufferPointer<PendingReRanking>, _ range: Range<Int>, _ context: Stack.EvaluationContext
    ) {
        for index in range.prefix(2) { stacks[index].inPlace { $0.prefetchRankingInputs() } }
        for index in range {
            if index + 2 < range.upperBound { stacks[index + 2].inPlace { $0.prefetchRankingInputs() } }
            if index + 1 < range.upperBound {
                let hour = stacks[index + 1].zone.hourOfDay(context.now)
                stacks[index + 1].inPlace { $0.prefetchMemberParts(hour: hour) }
            }
            var local = context
            local.zone = stacks[index].zone
            stacks[index].outcome = stacks[index].inPlace { $0.reRank(local) }
        }
    }

    /// Calls `body` on the stack in place (read out of the optional, it would be copied, its
    /// strings and arrays retained).
    @inline(__always)
    mutating func inPlace<R>(_ body: (inout Stack) -> R) -> R { body(&self.stack!) }
}

/// Re-rankings two threads share: each claims the next few until none are left, so the work
/// divides by the threads' actual speeds (given a fixed half, the second core of a shared 2-core
/// VM re-ranked at half the loop thread's pace, and the loop thread waited: BENCHMARKS.md,
/// round 6).
///
/// Each claimed range is one thread's alone; the buffer outlives both (the starting thread
/// waits for the other before it goes on), and the wait orders their writes before its reads.
private final class SharedReRankings: @unchecked Sendable {
    private let stacks: UnsafeMutableBufferPointer<PendingReRanking>
    private let context: Stack.EvaluationContext
    private let claimed = Atomic<Int>(0)
    /// Small enough to even out the threads' ends, large enough for the prefetch distance.
    private static let claim = 32

    init(_ stacks: UnsafeMutableBufferPointer<PendingReRanking>, _ context: Stack.EvaluationContext) {
        self.stacks = stacks
        self.context = context
    }

    func run() {
        while true {
            let start = self.claimed.wrappingAdd(Self.claim, ordering: .relaxed).oldValue
            guard start < self.stacks.count else { return }
            PendingReRanking.run(self.stacks, start..<min(start + Self.claim, self.stacks.count), self.context)
        }
    }
}

/// The time zones of the devices whose stacks were re-ranked: stacks come in the order their
/// re-ranking was asked for, not by device, and looking a device up copies it (its dozens of
/// fields) out of the device map.
private struct ZoneMemo {
    private var zones: [String: TimeZoneRule] = [:]

    mutating func zone(of device: String, in devices: TreeDictionary<String, Device>) -> TimeZoneRule {
        if let zone = self.zones[device] { return zone }
        let zone = devices[device]?.timeZone ?? .utc
        self.zones[device] = zone
        return zone
    }
}
