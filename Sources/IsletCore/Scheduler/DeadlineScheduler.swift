internal import HeapModule

/// Every future state change, in `(instant, sequence)` order.
///
/// Deadlines are kept in buckets, one per distinct instant, each in sequence order (sequences
/// only grow, so appending keeps the order); a min-heap holds the bucket instants. Timelines make
/// many deadlines share an instant (every widget whose entries fall on the hour), so popping
/// one costs two dictionary accesses instead of a trip down a heap of millions of entries.
///
/// New deadlines are staged in a small array and merged when the engine needs the earliest one
/// or commits a batch. An atomic batch runs on a copy of the engine; staging keeps that copy from
/// duplicating the buckets just to add a deadline (they are copied only when a batch itself
/// fires deadlines, e.g. `clock.advance`).
///
/// Cancellation is lazy: entities forget the sequence of a deadline they no longer want and the
/// engine skips it when it pops. ``compactIfGrown(keeping:)`` drops such leftovers when they
/// pile up.
struct DeadlineScheduler: Sendable {
    /// The deadlines due at one instant, in sequence order, from `head` on.
    private struct Bucket: Sendable {
        var items: [Deadline]
        var head = 0

        var first: Deadline? { self.head < self.items.count ? self.items[self.head] : nil }
    }

    private var instants = Heap<Instant>()
    private var buckets: [Instant: Bucket] = [:]
    private var bucketed = 0
    private var staged: [Deadline] = []
    /// The earliest staged deadline (so staged ones need not be merged to know it).
    private var stagedMin: Deadline?
    /// The sequence the next scheduled deadline gets; part of the engine state.
    private(set) var nextSequence: UInt64 = 1
    /// The number of deadlines after the last compaction (not part of the observable state).
    private var sizeAfterCompaction = 0

    init() {}

    /// Rebuilds a scheduler from restored deadlines and counter.
    init(deadlines: [Deadline], nextSequence: UInt64) {
        self.nextSequence = nextSequence
        self.staged = deadlines.sorted()
        self.flush()
    }

    /// All pending entries, including ones that may have been cancelled.
    var count: Int { self.bucketed + self.staged.count }

    /// Schedules `kind` at `at` and returns the deadline's sequence (the caller stores it on the
    /// entity so the deadline can be recognised as still wanted when it pops).
    /// - Complexity: O(1) amortized.
    mutating func schedule(_ kind: DeadlineKind, at: Instant) -> UInt64 {
        let sequence = self.nextSequence
        self.nextSequence += 1
        let deadline = Deadline(at: at, sequence: sequence, kind: kind)
        self.staged.append(deadline)
        if self.stagedMin.map({ deadline < $0 }) ?? true { self.stagedMin = deadline }
        return sequence
    }

    /// Puts back the deadline just popped, in front of its instant's bucket (its sequence is
    /// below every other deadline of that instant).
    mutating func reinsert(_ deadline: Deadline) {
        if self.buckets[deadline.at] != nil, self.buckets[deadline.at]!.head > 0 {
            self.buckets[deadline.at]!.head -= 1
            self.buckets[deadline.at]!.items[self.buckets[deadline.at]!.head] = deadline
        } else if self.buckets[deadline.at] != nil {
            self.buckets[deadline.at]!.items.insert(deadline, at: 0)
        } else {
            self.buckets[deadline.at] = Bucket(items: [deadline])
            self.instants.insert(deadline.at)
        }
        self.bucketed += 1
    }

    /// The earliest entry, cancelled or not.
    var earliest: Deadline? {
        let stagedMin = self.stagedMin
        guard let instant = self.instants.min, let bucketMin = self.buckets[instant]?.first else { return stagedMin }
        guard let stagedMin else { return bucketMin }
        return min(bucketMin, stagedMin)
    }

    /// Removes and returns the earliest entry if it is due at or before `limit`.
    /// - Complexity: O(1) amortized (plus merging staged entries); O(log b) for b distinct
    ///   instants when an instant's last deadline pops.
    mutating func popDue(atOrBefore limit: Instant) -> Deadline? {
        // Staged deadlines are merged only when one of them could be next: transitions
        // scheduling the next hour's pile up and are merged in one go per instant.
        if let stagedMin = self.stagedMin, self.instants.min.map({ stagedMin.at <= $0 }) ?? true { self.flush() }
        guard let instant = self.instants.min, instant <= limit else { return nil }
        return self.removeFirst(of: instant)
    }

    private mutating func removeFirst(of instant: Instant) -> Deadline {
        let (deadline, empty) = { (bucket: inout Bucket) -> (Deadline, Bool) in
            let deadline = bucket.items[bucket.head]
            bucket.head += 1
            return (deadline, bucket.head == bucket.items.count)
        }(&self.buckets[instant]!)
        self.bucketed -= 1
        if empty {
            self.buckets[instant] = nil
            self.instants.removeMin()
        }
        return deadline
    }

    /// Removes the earliest entry while `isCancelled` says it is no longer wanted, so that
    /// `earliest` names a live deadline.
    mutating func dropCancelledHead(_ isCancelled: (Deadline) -> Bool) {
        self.flush()
        while let instant = self.instants.min, let first = self.buckets[instant]?.first, isCancelled(first) {
            _ = self.removeFirst(of: instant)
        }
    }

    /// Merges staged deadlines into their buckets.
    mutating func flush() {
        guard !self.staged.isEmpty else { return }
        var start = 0
        while start < self.staged.count {
            // A run of deadlines at one instant is appended with one dictionary access.
            let at = self.staged[start].at
            var end = start + 1
            while end < self.staged.count, self.staged[end].at == at { end += 1 }
            if self.buckets[at] != nil {
                self.buckets[at]!.items.append(contentsOf: self.staged[start..<end])
            } else {
                self.buckets[at] = Bucket(items: Array(self.staged[start..<end]))
                self.instants.insert(at)
            }
            start = end
        }
        self.bucketed += self.staged.count
        self.staged.removeAll(keepingCapacity: true)
        self.stagedMin = nil
    }

    /// Every entry, cancelled or not, in no particular order.
    private var all: [Deadline] {
        var result = self.staged
        result.reserveCapacity(self.count)
        for bucket in self.buckets.values { result += bucket.items[bucket.head...] }
        return result
    }

    /// Rebuilds the buckets without cancelled entries once they have doubled since the last
    /// rebuild.
    /// - Complexity: O(n log n) when it rebuilds, otherwise O(1); amortized O(log n) per
    ///   scheduled deadline.
    mutating func compactIfGrown(keeping isLive: (Deadline) -> Bool) {
        guard self.count > max(1024, 2 * self.sizeAfterCompaction) else { return }
        let kept = self.all.filter(isLive)
        self = DeadlineScheduler(deadlines: kept, nextSequence: self.nextSequence)
        self.sizeAfterCompaction = self.count
    }

    /// A scheduler holding only the entries `isWanted` keeps, with the same sequence counter
    /// (a forecast runs a copy of the engine on the deadlines of one stack).
    /// - Complexity: O(n).
    func keeping(_ isWanted: (Deadline) -> Bool) -> DeadlineScheduler {
        DeadlineScheduler(deadlines: self.all.filter(isWanted), nextSequence: self.nextSequence)
    }

    /// Every entry that `isLive` keeps, sorted by `(at, sequence)`: the canonical snapshot form.
    func liveDeadlines(_ isLive: (Deadline) -> Bool) -> [Deadline] {
        self.all.filter(isLive).sorted()
    }
}
