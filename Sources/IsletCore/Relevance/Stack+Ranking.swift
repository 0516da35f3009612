/// Ranking a stack's members and deciding its top (SS-2 … SS-5).
///
/// Every feature is piecewise constant: the timeline feature changes at entry transitions and
/// at the end of an entry's relevance window, the hourly features at tops of hours, and the
/// rotation rules at dwell and cap expiries. A stack is therefore re-ranked only at those
/// instants (deadlines), and its ranking in the document is exact at every revision.
extension Stack {
    /// The inputs of one evaluation that do not belong to the stack.
    struct EvaluationContext {
        var now: Instant
        var settings: RelevanceSettings
        /// SS-5: rotations of one widget to the top per rolling 24 h.
        var cap: Int
        var habitHalfLifeMilliseconds: Double
        /// The sequence the next scheduled deadline will get.
        var nextSequence: UInt64
        var mark: UInt64
    }

    /// What an evaluation changed.
    struct EvaluationOutcome {
        var newlyTouched = false
        var topChanged = false
        /// A new re-evaluation instant to schedule (its sequence is `nextSequence`).
        var schedule: Instant?
    }

    /// Re-ranks the members at `context.now`, rotates if SS-5 allows, and arms the next
    /// instant at which the ranking can change by itself.
    /// - Complexity: O(m log m) for m ≤ 10 members.
    mutating func evaluate(_ context: EvaluationContext) -> EvaluationOutcome {
        let now = context.now
        let windowStart = now.adding(milliseconds: -millisecondsPerDay)
        for index in self.members.indices where self.members[index].rotationsToTop.first.map({ $0 <= windowStart }) == true {
            self.members[index].rotationsToTop.removeAll { $0 <= windowStart }
        }
        let oldTop = self.top
        let oldRanking = self.ranking
        var ranking = self.rank(context)
        var unblocksAt: Instant?
        if self.members.isEmpty {
            self.top = nil
            self.topSince = nil
        } else if !self.smartRotate {
            self.place(self.members[0].widget, at: now)
        } else if let top = self.top, let topRow = ranking.first(where: { $0.widget == top }) {
            let threshold = topRow.score + context.settings.hysteresis
            let better = ranking.filter { $0.eligible && $0.widget != top && $0.score > threshold }
            let capped = better.filter { self.isCapped($0.widget, context.cap) }
            if let candidate = better.first(where: { !self.isCapped($0.widget, context.cap) }) {
                let dwellEnds = (self.topSince ?? now).adding(seconds: context.settings.minDwellSeconds)
                if now >= dwellEnds {
                    self.rotate(to: candidate, from: topRow, at: now)
                    ranking = self.rank(context)
                } else {
                    unblocksAt = dwellEnds
                }
            }
            // SS-5: a better candidate held back by the daily cap is looked at again when its
            // oldest rotation leaves the 24-hour window.
            for row in capped {
                guard let member = self.members.first(where: { $0.widget == row.widget }),
                    let oldest = member.rotationsToTop.first
                else { continue }
                let frees = oldest.adding(milliseconds: millisecondsPerDay)
                unblocksAt = min(unblocksAt ?? frees, frees)
            }
        } else {
            // A new stack, or its top left: the best candidate, else the first widget.
            self.place(ranking.first { $0.eligible }?.widget ?? self.members[0].widget, at: now)
            ranking = self.rank(context)
        }
        self.ranking = ranking
        var outcome = EvaluationOutcome()
        outcome.topChanged = self.top != oldTop
        if outcome.topChanged || ranking != oldRanking, self.touchMark != context.mark {
            self.touchMark = context.mark
            outcome.newlyTouched = true
        }
        let next = self.nextChange(after: now, unblocksAt: unblocksAt)
        if next != self.evaluationAt {
            self.evaluationAt = next
            self.evaluationDeadline = next == nil ? nil : context.nextSequence
            outcome.schedule = next
        }
        return outcome
    }

    /// SS-4: every member's features, contributions and score, best first.
    func rank(_ context: EvaluationContext) -> [RankedMember] {
        let now = context.now
        let hour = hourOfDay(now)
        let start = hourStart(now)
        var habits: [Double] = []
        habits.reserveCapacity(self.members.count)
        var maxHabit = 0.0
        for member in self.members {
            let value = member.habit?.value(hour: hour, at: start, halfLifeMilliseconds: context.habitHalfLifeMilliseconds) ?? 0
            habits.append(value)
            maxHabit = max(maxHabit, value)
        }
        var rows: [RankedMember] = []
        rows.reserveCapacity(self.members.count)
        for (index, member) in self.members.enumerated() {
            let eligible = member.isEligible(at: now)
            var features = FeatureVector()
            features.timeline = eligible && member.kindMax > 0 ? min(1, member.score / member.kindMax) : 0
            features.habit = maxHabit > 0 ? habits[index] / maxHabit : 0
            features.freshness = hourlyDecay(since: member.changedAt, at: now)
            features.rotationPenalty = member.widget == self.top ? 0 : hourlyDecay(since: member.leftTopAt, at: now)
            let contributions = features.times(context.settings.weights)
            rows.append(
                RankedMember(
                    widget: member.widget, position: index, eligible: eligible, features: features,
                    contributions: contributions, score: contributions.sum))
        }
        rows.sort(by: RankedMember.precedes)
        return rows
    }

    private func isCapped(_ widget: String, _ cap: Int) -> Bool {
        (self.members.first { $0.widget == widget }?.rotationsToTop.count ?? 0) >= cap
    }

    /// Puts a widget on top without counting a rotation (a new stack, smart rotation off, or
    /// the top widget left the stack).
    private mutating func place(_ widget: String, at now: Instant) {
        guard widget != self.top else { return }
        self.top = widget
        self.topSince = now
    }

    /// SS-5: a rotation, recorded with the winner's contributions (last 50 kept).
    private mutating func rotate(to winner: RankedMember, from loser: RankedMember, at now: Instant) {
        if let index = self.memberIndex(loser.widget) { self.members[index].leftTopAt = now }
        if let index = self.memberIndex(winner.widget) { self.members[index].rotationsToTop.append(now) }
        self.top = winner.widget
        self.topSince = now
        let record: JSONObject = [
            "at": .string(now.rfc3339), "contributions": winner.contributions.json, "from": .string(loser.widget),
            "fromScore": .number(loser.score), "score": .number(winner.score), "to": .string(winner.widget),
        ]
        self.rotations.append(.object(record))
        if self.rotations.count > Self.rotationsKept { self.rotations.removeFirst(self.rotations.count - Self.rotationsKept) }
    }

    static let rotationsKept = 50

    /// The first instant after `now` at which the ranking or the rotation rules can change
    /// without a command or a transition: the end of a relevance window, the next top of the
    /// hour while an hourly feature is in play, or when a blocked rotation unblocks.
    private func nextChange(after now: Instant, unblocksAt: Instant?) -> Instant? {
        var next = unblocksAt
        var hourly = false
        let recent = hourStart(now).adding(milliseconds: -3 * millisecondsPerHour)
        for member in self.members {
            if member.eligibleUntil > now, member.eligibleUntil < .distantFuture, member.score > 0 {
                next = min(next ?? member.eligibleUntil, member.eligibleUntil)
            }
            if !hourly {
                hourly =
                    member.habit != nil || (member.changedAt.map { $0 >= recent } ?? false)
                    || (member.leftTopAt.map { $0 >= recent } ?? false)
            }
        }
        if hourly {
            let hour = nextHour(after: now)
            next = min(next ?? hour, hour)
        }
        return next
    }
}
