internal import HashTreeCollections

/// Re-ranking stacks at `now`, and `relevance.setWeights` (SS-4 … SS-6).
extension Engine {
    /// Re-ranks every stack a transition or command asked for, at `now`, in request order.
    mutating func evaluatePendingStacks() {
        guard !self.changes.evaluations.isEmpty else { return }
        let ids = self.changes.evaluations
        self.changes.evaluations = []
        var zones = ZoneMemo()
        for (index, id) in ids.enumerated() {
            // Three steps, each reading only what the one before brought into the cache: a
            // stack four re-rankings ahead, its members and ranking two ahead, then what the
            // members point to (one re-ranking takes ~2 µs).
            // In place, as `modify`: reading a stack out of the table would copy it.
            if index + 4 < ids.count { self.stacks.prefetch(slot: ids[index + 4]) }
            if index + 2 < ids.count { self.stacks.modify(slot: ids[index + 2]) { $0.prefetchRankingInputs() } }
            if index + 1 < ids.count, let device = self.stacks.modify(slot: ids[index + 1], { $0.device }) {
                let hour = zones.zone(of: device, in: self.devices).hourOfDay(self.now)
                self.stacks.modify(slot: ids[index + 1]) { $0.prefetchMemberParts(hour: hour) }
            }
            self.evaluateStack(id, zones: &zones)
        }
    }

    /// - Complexity: O(1) for the stack (by slot) and its ≤ 10 members; reads no widget, and
    ///   copies neither the stack nor its device (a 24 h jump re-ranks ~480,000 times).
    private mutating func evaluateStack(_ slot: Int32, zones: inout ZoneMemo) {
        guard let device = self.stacks.modify(slot: slot, { $0.device }) else { return }
        let zone = zones.zone(of: device, in: self.devices)
        let context = Stack.EvaluationContext(
            now: self.now, settings: self.relevance, cap: self.configuration.stackRotationsPerWidgetPerDay,
            habitHalfLifeMilliseconds: self.configuration.habitHalfLifeSeconds * 1000, zone: zone,
            nextSequence: self.scheduler.nextSequence, mark: self.revisionMark)
        let result = self.stacks.modify(slot: slot) { stack -> (Stack.EvaluationOutcome, String?) in
            stack.evaluationPending = false
            var local = context
            if !stack.overrides.isEmpty { local.settings = context.settings.applying(stack.overrides) }
            let outcome = stack.evaluate(local)
            return (outcome, outcome.newlyTouched ? stack.id : nil)
        }
        guard let (outcome, id) = result else { return }
        if let id { self.changes.stacks.append(id) }
        if outcome.topChanged { self.changes.devices.insert(device) }
        if let at = outcome.schedule {
            let sequence = self.scheduler.schedule(.stackEvaluation(stack: slot), at: at)
            precondition(sequence == context.nextSequence, "the evaluation deadline's sequence was predicted")
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
