internal import HashTreeCollections

/// `widget.setTimeline` and entry transitions (WK-2, WK-3, WK-6, WK-7, SS-3).
///
/// A transition only moves the widget's `current` index, arms the next entry's deadline and
/// refreshes the widget's row in its stack; rendering and JSON happen once per touched widget
/// at the end of the revision.
extension Engine {
    mutating func setTimeline(_ set: WidgetSetTimeline) throws(APIError) -> JSONValue {
        guard var widget = self.widgets[set.id] else {
            throw APIError(.notFound, "no widget \"\(set.id)\"", field: "/id")
        }
        let limit = self.configuration.widgetMaxTimelineEntries
        guard set.entries.count <= limit else {
            throw APIError(
                .limitExceeded, "WK-7: a timeline holds at most \(limit) entries, got \(set.entries.count)",
                field: "/entries")
        }
        try self.templates.checkWidgetBudget(
            app: widget.app, kind: widget.kind, contents: set.entries.map(\.content), field: "/entries")
        let policy: ReloadPolicy
        switch set.policy {
        case .atEnd: policy = .atEnd
        case .never: policy = .never
        case .after(let date): policy = .after(date)
        }
        let shown = widget.shownEntry
        widget.timeline = Timeline(set.entries, policy: policy, setAt: self.now)
        widget.current = currentIndex(widget.timeline.entries, at: self.now)
        // WK-2: before the first entry's date the widget keeps what it showed.
        widget.held = widget.current == nil ? shown : nil
        if widget.current != nil { widget.changedAt = self.now }
        widget.needsRender = true
        // WK-6: whoever sends a timeline answers the pending reload, and any reload waiting.
        widget.reload.pending = false
        widget.reload.pendingSince = nil
        widget.reload.scheduled = nil
        widget.dirty.formUnion([.timeline, .reload, .current, .tap])
        self.commit(widget)
        let slot = self.widgets.slot(of: widget.id)!
        let entryDeadline = self.armEntryDeadline(widget, slot: slot)
        self.widgets.modify(slot: slot) { $0.entryDeadline = entryDeadline }
        self.raiseKindMax(widget.kindKey, to: widget.timeline.entries.reduce(0) { $1.score > $0 ? $1.score : $0 })
        if let due = self.policyReloadInstant(widget.timeline) {
            _ = self.requestReload(widget.id, reason: "policy", notBefore: due)
        }
        self.refreshMember(widget.id)
        return [:]
    }

    /// Schedules the next entry of a widget's timeline; returns the deadline's sequence.
    private mutating func armEntryDeadline(_ widget: Widget, slot: Int32) -> UInt64? {
        let next = (widget.current ?? -1) + 1
        guard next < widget.timeline.entries.count else { return nil }
        return self.scheduler.schedule(.widgetEntry(widget: slot), at: widget.timeline.entries[next].date)
    }

    /// WK-3: when the timeline's policy asks for a reload. `atEnd`: when the last entry's date
    /// passes (a single entry: `widgetSingleEntryReloadSeconds` after it; none: that long from
    /// now); `after(d)`: at d; `never`: no reload by policy.
    func policyReloadInstant(_ timeline: Timeline) -> Instant? {
        switch timeline.policy {
        case .never: return nil
        case .after(let date): return date
        case .atEnd:
            let single = self.configuration.widgetSingleEntryReloadSeconds
            switch timeline.entries.count {
            case 0: return self.now.adding(seconds: single)
            case 1: return timeline.entries[0].date.adding(seconds: single)
            default: return timeline.entries[timeline.entries.count - 1].date
            }
        }
    }

    /// Applies a widget's entry deadline: the latest entry whose date has come becomes current.
    /// - Returns: `false` when the deadline was cancelled or superseded.
    /// - Complexity: O(log n) for the widget and its stack; no rendering, no JSON.
    @discardableResult
    mutating func advanceWidget(_ slot: Int32, sequence: UInt64, at instant: Instant) -> Bool {
        let mark = self.revisionMark
        let nextSequence = self.scheduler.nextSequence
        let untilNextEntry = self.configuration.relevanceZeroDuration == "untilNextEntry"
        let step = self.widgets.modify(slot: slot) { widget -> EntryStep? in
            guard widget.entryDeadline == sequence else { return nil }
            return widget.showEntry(at: instant, mark: mark, nextSequence: nextSequence, untilNextEntry: untilNextEntry)
        }
        guard let step = step ?? nil else { return false }
        self.now = max(self.now, instant)
        if let id = step.newlyTouched { self.changes.widgets.append(TouchedWidget(id: id, slot: slot)) }
        if let next = step.nextDate {
            let sequence = self.scheduler.schedule(.widgetEntry(widget: slot), at: next)
            precondition(sequence == nextSequence, "the entry deadline's sequence was predicted")
        }
        if step.stack >= 0 {
            let relevance = step.relevance
            self.updateMember(slot, of: step.stack) { $0.apply(relevance) }
        }
        return true
    }

    /// SS-3: the highest score seen for an app and kind only grows; when it does, every stacked
    /// widget of that kind is re-ranked with the new scale.
    mutating func raiseKindMax(_ key: String, to score: Double) {
        guard score > (self.kindMaxScores[key] ?? 0) else { return }
        self.kindMaxScores[key] = score
        for id in (self.kindWidgets[key] ?? []).sorted() {
            guard let slot = self.widgets.slot(of: id), let stack = self.widgets[slot: slot]?.stackSlot, stack >= 0
            else {
                continue
            }
            self.updateMember(slot, of: stack) { $0.kindMax = score }
        }
    }
}

/// What an entry transition tells the engine to do next.
struct EntryStep {
    /// The widget's id when this is its first change in the revision.
    var newlyTouched: String?
    var nextDate: Instant?
    /// The slot of the widget's stack, or -1.
    var stack: Int32
    var relevance: MemberRelevance
}

/// The part of a stack member that follows its widget's shown entry.
struct MemberRelevance: Sendable, Hashable {
    var score: Double
    var eligibleFrom: Instant
    var eligibleUntil: Instant
    var changedAt: Instant?
}

extension Widget {
    /// Moves `current` to the latest entry whose date is at or before `instant` (WK-2).
    mutating func showEntry(at instant: Instant, mark: UInt64, nextSequence: UInt64, untilNextEntry: Bool)
        -> EntryStep
    {
        // The deadline fires at the next entry's date: scan forward (entries at equal dates
        // show the last of them).
        var index = (self.current ?? -1) + 1
        let entries = self.timeline.entries
        if index >= entries.count || entries[index].date > instant {
            index = currentIndex(entries, at: instant) ?? 0
        }
        while index + 1 < entries.count, entries[index + 1].date <= instant { index += 1 }
        // Most timelines have no links: then neither lookup (two hashes per transition) is needed.
        let linksChanged =
            (self.timeline.links.isEmpty && self.held?.links == nil)
            ? false : self.shownLinks != self.timeline.links[index]
        self.current = index
        self.held = nil
        self.changedAt = instant
        self.needsRender = true
        self.dirty.insert(.current)
        if linksChanged { self.dirty.insert(.tap) }
        let newlyTouched = self.touchMark != mark ? self.id : nil
        self.touchMark = mark
        var nextDate: Instant?
        if index + 1 < entries.count {
            nextDate = entries[index + 1].date
            self.entryDeadline = nextSequence
        } else {
            self.entryDeadline = nil
        }
        // From `entries`, not through `self.relevance`: calling a method on `self` here would copy
        // the whole widget first.
        return EntryStep(
            newlyTouched: newlyTouched, nextDate: nextDate, stack: self.stackSlot,
            relevance: Timeline.relevance(entries, current: index, changedAt: instant, untilNextEntry: untilNextEntry))
    }

    /// Prefetches what the widget's next entry transition reads first: its timeline's length
    /// and the entries after the current one (neither loaded here, so no miss is waited for).
    func prefetchNextEntries() {
        guard let first = elementsAddress(self.timeline.entries) else { return }
        let stride = MemoryLayout<TimelineEntry>.stride
        // The count, and the next entry and the one after it.
        prefetch(first - arrayCountOffset)
        prefetch(lines: first + ((self.current ?? -1) + 1) * stride, bytes: 2 * stride)
    }

    /// SS-2: the current entry's score and the window in which it is a rotation candidate. A
    /// window that outlasts the entry ends with the next transition, so it is left open here.
    func relevance(untilNextEntry: Bool) -> MemberRelevance {
        Timeline.relevance(
            self.timeline.entries, current: self.current, changedAt: self.changedAt, untilNextEntry: untilNextEntry)
    }
}

extension Timeline {
    /// SS-2: the relevance of a widget showing `entries[current]` (none: not a candidate).
    static func relevance(_ entries: [TimelineEntry], current: Int?, changedAt: Instant?, untilNextEntry: Bool)
        -> MemberRelevance
    {
        guard let index = current, entries[index].hasRelevance else {
            return MemberRelevance(score: .nan, eligibleFrom: .distantPast, eligibleUntil: .distantPast, changedAt: changedAt)
        }
        let entry = entries[index]
        let next = index + 1 < entries.count ? entries[index + 1].date : nil
        var until: Instant
        if entry.duration > 0 {
            until = entry.date.adding(seconds: entry.duration)
            if let next, until >= next { until = .distantFuture }
        } else {
            until = untilNextEntry ? .distantFuture : entry.date
        }
        return MemberRelevance(score: entry.score, eligibleFrom: entry.date, eligibleUntil: until, changedAt: changedAt)
    }
}

/// WK-2: the index of the latest entry dated at or before `instant` (of equal dates, the last).
/// - Complexity: O(log n).
func currentIndex(_ entries: [TimelineEntry], at instant: Instant) -> Int? {
    var low = 0
    var high = entries.count
    while low < high {
        let mid = (low + high) / 2
        if entries[mid].date <= instant { low = mid + 1 } else { high = mid }
    }
    return low == 0 ? nil : low - 1
}
