internal import HeapModule

/// The one min-heap of every future state change.
///
/// New deadlines are staged in a small array and merged into the heap when the engine needs the
/// earliest one or commits a batch. An atomic batch runs on a copy of the engine; staging keeps
/// that copy from duplicating the whole heap just to add a deadline (the heap is copied only when
/// a batch itself fires deadlines, e.g. `clock.advance`).
///
/// Cancellation is lazy: entities forget the sequence of a deadline they no longer want and the
/// engine skips it when it pops. ``compact(keeping:)`` drops such leftovers when they pile up.
struct DeadlineScheduler: Sendable {
    private var heap = Heap<Deadline>()
    private var staged: [Deadline] = []
    /// The sequence the next scheduled deadline gets; part of the engine state.
    private(set) var nextSequence: UInt64 = 1
    /// The heap size after the last compaction (not part of the observable state).
    private var sizeAfterCompaction = 0

    init() {}

    /// Rebuilds a scheduler from restored deadlines and counter.
    init(deadlines: [Deadline], nextSequence: UInt64) {
        self.heap = Heap(deadlines)
        self.nextSequence = nextSequence
    }

    /// All pending entries, including ones that may have been cancelled.
    var count: Int { self.heap.count + self.staged.count }

    /// Schedules `kind` at `at` and returns the deadline's sequence (the caller stores it on the
    /// entity so the deadline can be recognised as still wanted when it pops).
    /// - Complexity: O(1) amortized.
    mutating func schedule(_ kind: DeadlineKind, at: Instant) -> UInt64 {
        let sequence = self.nextSequence
        self.nextSequence += 1
        self.staged.append(Deadline(at: at, sequence: sequence, kind: kind))
        return sequence
    }

    /// Puts back a deadline that was popped but must fire later (its sequence is kept).
    mutating func reinsert(_ deadline: Deadline) {
        self.staged.append(deadline)
    }

    /// The earliest entry, cancelled or not.
    var earliest: Deadline? {
        let stagedMin = self.staged.min()
        guard let heapMin = self.heap.min else { return stagedMin }
        guard let stagedMin else { return heapMin }
        return min(heapMin, stagedMin)
    }

    /// Removes and returns the earliest entry if it is due at or before `limit`.
    /// - Complexity: O(log n) (plus merging staged entries).
    mutating func popDue(atOrBefore limit: Instant) -> Deadline? {
        self.flush()
        guard let first = self.heap.min, first.at <= limit else { return nil }
        return self.heap.removeMin()
    }

    /// Removes the earliest entry while `isCancelled` says it is no longer wanted, so that
    /// `earliest` names a live deadline.
    mutating func dropCancelledHead(_ isCancelled: (Deadline) -> Bool) {
        self.flush()
        while let first = self.heap.min, isCancelled(first) { self.heap.removeMin() }
    }

    /// Merges staged deadlines into the heap.
    mutating func flush() {
        guard !self.staged.isEmpty else { return }
        if self.staged.count > self.heap.count {
            self.heap = Heap(self.heap.unordered + self.staged)
        } else {
            self.heap.insert(contentsOf: self.staged)
        }
        self.staged.removeAll(keepingCapacity: true)
    }

    /// Rebuilds the heap without cancelled entries once it has doubled since the last rebuild.
    /// - Complexity: O(n) when it rebuilds, otherwise O(1); amortized O(1) per scheduled deadline.
    mutating func compactIfGrown(keeping isLive: (Deadline) -> Bool) {
        guard self.count > max(1024, 2 * self.sizeAfterCompaction) else { return }
        self.flush()
        self.heap = Heap(self.heap.unordered.filter(isLive))
        self.sizeAfterCompaction = self.heap.count
    }

    /// Every entry that `isLive` keeps, sorted by `(at, sequence)`: the canonical snapshot form.
    func liveDeadlines(_ isLive: (Deadline) -> Bool) -> [Deadline] {
        (self.heap.unordered + self.staged).filter(isLive).sorted()
    }
}
