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
        /// SS-7: the stack's device's time zone, whose hours the hourly features follow.
        var zone: TimeZoneRule
        var mark: UInt64
    }

    /// What an evaluation changed.
    struct EvaluationOutcome {
        var newlyTouched = false
        var topChanged = false
        /// A new re-evaluation instant to schedule (the caller arms it and sets
        /// `evaluationDeadline`).
        var schedule: Instant?
    }

    /// A re-ranking as the engine asks for it: with the stack's own settings (SS-6), no longer
    /// pending.
    mutating func reRank(_ context: EvaluationContext) -> EvaluationOutcome {
        self.evaluationPending = false
        var local = context
        if !self.overrides.isEmpty { local.settings = context.settings.applying(self.overrides) }
        return self.evaluate(local)
    }

    /// Re-ranks the members at `context.now`, rotates if SS-5 allows, and arms the next
    /// instant at which the ranking can change by itself.
    /// - Complexity: O(m log m) for m ≤ 10 members.
    mutating func evaluate(_ context: EvaluationContext) -> EvaluationOutcome {
        let now = context.now
        let windowStart = now.adding(milliseconds: -millisecondsPerDay)
        if let oldest = self.oldestRotation, oldest <= windowStart {
            var earliest: Instant?
            for index in self.members.indices {
                self.members[index].rotationsToTop.removeAll { $0 <= windowStart }
                if let first = self.members[index].rotationsToTop.first { earliest = min(earliest ?? first, first) }
            }
            self.oldestRotation = earliest
        }
        let oldTop = self.top
        let oldRanking = self.ranking
        let topPosition = self.top.flatMap(self.memberIndex)
        var ranking = self.rank(context, topPosition: topPosition)
        var unblocksAt: Instant?
        if self.members.isEmpty {
            self.top = nil
            self.topSince = nil
        } else if !self.smartRotate {
            // SS-5 off: the first widget stays on top, ranked as the top (no rotation penalty).
            self.place(0, at: now)
            if topPosition != 0 { ranking = self.rank(context, topPosition: 0) }
        } else if let topPosition, let topRow = ranking.first(where: { $0.position == topPosition }) {
            let threshold = topRow.score + context.settings.hysteresis
            var candidate: RankedMember?
            for row in ranking where row.eligible && row.position != topPosition && row.score > threshold {
                if self.members[row.position].rotationsToTop.count < context.cap {
                    if candidate == nil { candidate = row }
                } else if let oldest = self.members[row.position].rotationsToTop.first {
                    // SS-5: a better candidate held back by the daily cap is looked at again
                    // when its oldest rotation leaves the 24-hour window.
                    let frees = oldest.adding(milliseconds: millisecondsPerDay)
                    unblocksAt = min(unblocksAt ?? frees, frees)
                }
            }
            if let candidate {
                let dwellEnds = (self.topSince ?? now).adding(seconds: context.settings.minDwellSeconds)
                if now >= dwellEnds {
                    self.rotate(to: candidate, from: topRow, at: now)
                    ranking = self.rank(context, topPosition: candidate.position)
                } else {
                    unblocksAt = min(unblocksAt ?? dwellEnds, dwellEnds)
                }
            }
        } else {
            // A new stack, or its top left: the best candidate, else the first widget.
            let best = ranking.first { $0.eligible }?.position ?? 0
            self.place(best, at: now)
            ranking = self.rank(context, topPosition: best)
        }
        self.ranking = ranking
        var outcome = EvaluationOutcome()
        outcome.topChanged = self.top != oldTop
        if outcome.topChanged || ranking != oldRanking, self.touchMark != context.mark {
            self.touchMark = context.mark
            outcome.newlyTouched = true
        }
        let next = self.nextChange(after: now, unblocksAt: unblocksAt, zone: context.zone)
        if next != self.evaluationAt {
            self.evaluationAt = next
            self.evaluationDeadline = nil
            outcome.schedule = next
        }
        return outcome
    }

    /// Prefetches what a re-ranking reads first: the members and the last ranking, as many
    /// cache lines as ten of each take (their counts are not loaded, so no miss is waited for).
    func prefetchRankingInputs() {
        prefetch(self.members, upTo: StackUpsert.maxWidgets)
        prefetch(self.ranking, upTo: StackUpsert.maxWidgets)
    }

    /// Prefetches what a re-ranking at `hour` (of the stack's zone) reads through its members,
    /// once they are in the cache: each habit array's count and its sum for that hour (24
    /// sums span four lines, and the count may sit on a line before the first), and each
    /// rotation record's count and oldest entry.
    func prefetchMemberParts(hour: Int) {
        for index in self.members.indices {
            if let sums = self.members[index].habit.flatMap({ elementsAddress($0.sums) }) {
                prefetch(sums - arrayCountOffset)
                prefetch(sums + hour * MemoryLayout<Double>.stride)
            }
            if let rotations = elementsAddress(self.members[index].rotationsToTop) {
                prefetch(lines: rotations - arrayCountOffset, bytes: arrayCountOffset + MemoryLayout<Instant>.stride)
            }
        }
    }

    /// SS-4: every member's features, contributions and score, best first.
    /// - Parameter topPosition: The position of the top widget (found once by the caller).
    func rank(_ context: EvaluationContext, topPosition: Int?) -> [RankedMember] {
        let now = context.now
        let start = context.zone.hourStart(now)
        let hour = context.zone.hourOfDay(now)
        let topPosition = topPosition ?? -1
        let weights = context.settings.weights
        // Members are read through a buffer pointer: copying a member would retain its strings
        // and arrays, ten times per evaluation.
        return self.members.withUnsafeBufferPointer { members in
            var maxHabit = 0.0
            var habits: (Double, Double, Double, Double, Double, Double, Double, Double, Double, Double) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            var hasHabits = false
            for index in members.indices where members[index].habit != nil {
                hasHabits = true
                break
            }
            if hasHabits {
                withUnsafeMutableBytes(of: &habits) { raw in
                    let values = raw.bindMemory(to: Double.self)
                    func evaluate(at instant: Instant) {
                        maxHabit = 0
                        for index in members.indices.prefix(values.count) {
                            let value =
                                members[index].habit?.value(
                                    hour: hour, at: instant, halfLifeMilliseconds: context.habitHalfLifeMilliseconds) ?? 0
                            values[index] = value
                            maxHabit = max(maxHabit, value)
                        }
                    }
                    evaluate(at: start)
                    // Evaluated more than 1,024 half-lives before a use it counts (a fork to an
                    // earlier clock), 2^(elapsed / half-life) overflows. Only the ratios matter,
                    // and relative to the latest use they are the same and finite.
                    if maxHabit.isInfinite { evaluate(at: members.lazy.compactMap(\.habit?.reference).max() ?? start) }
                }
            }
            var rows: [RankedMember] = []
            rows.reserveCapacity(members.count)
            withUnsafeBytes(of: &habits) { raw in
                let values = raw.bindMemory(to: Double.self)
                for index in members.indices {
                    let eligible = members[index].isEligible(at: now)
                    var features = FeatureVector()
                    let kindMax = members[index].kindMax
                    features.timeline = eligible && kindMax > 0 ? min(1, members[index].score / kindMax) : 0
                    if maxHabit > 0, index < values.count { features.habit = values[index] / maxHabit }
                    features.freshness = hourlyDecay(since: members[index].changedAt, hourStart: start, zone: context.zone)
                    features.rotationPenalty =
                        index == topPosition ? 0 : hourlyDecay(since: members[index].leftTopAt, hourStart: start, zone: context.zone)
                    let contributions = features.times(weights)
                    rows.append(
                        RankedMember(
                            position: index, eligible: eligible, features: features, contributions: contributions,
                            score: contributions.sum))
                }
            }
            // Insertion sort: at most 10 rows, and no comparator closure per comparison.
            for index in rows.indices.dropFirst() {
                let row = rows[index]
                var slot = index
                while slot > 0, RankedMember.precedes(row, rows[slot - 1]) {
                    rows[slot] = rows[slot - 1]
                    slot -= 1
                }
                rows[slot] = row
            }
            return rows
        }
    }

    /// Puts the widget at `position` on top without counting a rotation (a new stack, smart
    /// rotation off, or the top widget left the stack).
    private mutating func place(_ position: Int, at now: Instant) {
        let widget = self.members[position].widget
        guard widget != self.top else { return }
        self.top = widget
        self.topSince = now
    }

    /// SS-5: a rotation, recorded with the winner's contributions (last 50 kept).
    private mutating func rotate(to winner: RankedMember, from loser: RankedMember, at now: Instant) {
        self.members[loser.position].leftTopAt = now
        self.members[winner.position].rotationsToTop.append(now)
        self.oldestRotation = self.oldestRotation ?? now
        self.top = self.members[winner.position].widget
        self.topSince = now
        self.rotations.append(
            Rotation(
                at: now, from: self.members[loser.position].widget, fromScore: loser.score,
                to: self.members[winner.position].widget, score: winner.score, contributions: winner.contributions))
        self.rotationCount += 1
        if self.rotations.count > Self.rotationsKept {
            self.rotations.removeFirst(self.rotations.count - Self.rotationsKept)
        }
    }

    static let rotationsKept = 50

    /// The first instant after `now` at which the ranking or the rotation rules can change
    /// without a command or a transition: the end of a relevance window, the next top of the
    /// hour while an hourly feature is in play, or when a blocked rotation unblocks.
    private func nextChange(after now: Instant, unblocksAt: Instant?, zone: TimeZoneRule) -> Instant? {
        var next = unblocksAt
        var hourly = false
        let recent = zone.hourStart(now).adding(milliseconds: -3 * millisecondsPerHour)
        self.members.withUnsafeBufferPointer { members in
            for index in members.indices {
                let until = members[index].eligibleUntil
                if until > now, until < .distantFuture, members[index].score > 0 {
                    next = min(next ?? until, until)
                }
                if !hourly {
                    hourly =
                        members[index].habit != nil || (members[index].changedAt.map { $0 >= recent } ?? false)
                        || (members[index].leftTopAt.map { $0 >= recent } ?? false)
                }
            }
        }
        if hourly {
            let hour = zone.nextHour(after: now)
            next = min(next ?? hour, hour)
        }
        return next
    }
}
