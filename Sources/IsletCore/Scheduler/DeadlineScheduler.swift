internal import HeapModule

/// Every future state change, in `(instant, sequence)` order.
///
/// Deadlines are kept in buckets, one per distinct instant, each in sequence order (sequences
/// only grow, so appending keeps the order); a min-heap holds the bucket instants. Timelines make
/// many deadlines share an instant (every widget whose entries fall on the hour), so popping
/// one costs no more than moving a bucket's head: the bucket deadlines are popping from is held
/// out of the dictionary (`frontBucket`), which is hashed once per instant, not per deadline.
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
    /// The instant deadlines last popped from, and its bucket, held out of `buckets` (the instant
    /// stays in `instants`). Both `nil` or both set; the bucket is never empty.
    private var frontAt: Instant?
    private var frontBucket: Bucket?
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
        let existing = self.modifyBucket(at: deadline.at) { bucket -> Bool in
            guard bucket != nil else { return false }
            if bucket!.head > 0 {
                bucket!.head -= 1
                bucket!.items[bucket!.head] = deadline
            } else {
                bucket!.items.insert(deadline, at: 0)
            }
            return true
        }
        if !existing {
            self.buckets[deadline.at] = Bucket(items: [deadline])
            self.instants.insert(deadline.at)
        }
        self.bucketed += 1
    }

    /// Calls `body` on the bucket of `instant` (`nil` when there is none), wherever it is held.
    /// `body` must not empty a bucket, nor create one.
    private mutating func modifyBucket<R>(at instant: Instant, _ body: (inout Bucket?) -> R) -> R {
        self.frontAt == instant ? body(&self.frontBucket) : body(&self.buckets[instant])
    }

    private func bucket(at instant: Instant) -> Bucket? {
        self.frontAt == instant ? self.frontBucket : self.buckets[instant]
    }

    /// The earliest entry, cancelled or not.
    var earliest: Deadline? {
        let stagedMin = self.stagedMin
        guard let instant = self.instants.min, let bucketMin = self.bucket(at: instant)?.first else {
            return stagedMin
        }
        guard let stagedMin else { return bucketMin }
        return min(bucketMin, stagedMin)
    }

    /// The deadline `distance` places after the next one among those of the next one's instant,
    /// if it is already bucketed: what the engine will most likely handle soon (staged or
    /// cancelled deadlines are not looked at, so it is only a hint).
    func upcoming(after distance: Int) -> Deadline? {
        guard let head = self.frontBucket?.head, let count = self.frontBucket?.items.count, head + distance < count
        else { return nil }
        return self.frontBucket?.items[head + distance]
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

    /// Pops the first deadline of the earliest instant's bucket, made the front one first.
    private mutating func removeFirst(of instant: Instant) -> Deadline {
        if self.frontAt != instant {
            if let at = self.frontAt { self.buckets[at] = self.frontBucket }
            self.frontAt = instant
            self.frontBucket = self.buckets.removeValue(forKey: instant)
        }
        let deadline = self.frontBucket!.items[self.frontBucket!.head]
        self.frontBucket!.head += 1
        self.bucketed -= 1
        if self.frontBucket!.head == self.frontBucket!.items.count {
            self.frontAt = nil
            self.frontBucket = nil
            self.instants.removeMin()
        }
        return deadline
    }

    /// Removes the earliest entry while `isCancelled` says it is no longer wanted, so that
    /// `earliest` names a live deadline.
    mutating func dropCancelledHead(_ isCancelled: (Deadline) -> Bool) {
        self.flush()
        while let instant = self.instants.min, let first = self.bucket(at: instant)?.first, isCancelled(first) {
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
            let run = self.staged[start..<end]
            let existing = self.modifyBucket(at: at) { bucket -> Bool in
                bucket?.items.append(contentsOf: run)
                return bucket != nil
            }
            if !existing {
                self.buckets[at] = Bucket(items: Array(run))
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
        if let front = self.frontBucket { result += front.items[front.head...] }
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
