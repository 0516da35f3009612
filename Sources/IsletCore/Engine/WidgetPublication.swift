internal import Synchronization

/// Publishing touched widgets: each is rendered once, however many transitions it went
/// through, and changed in place, never copied. A new widget is added whole, a removed one
/// removed, any other gets the members its changes marked replaced (nothing is compared, and
/// `timeline.entries` is sent only when a new timeline arrived).
///
/// It reads nothing of the engine's but what it copied when made, so a second thread can
/// publish some of the widgets with its own copy.
struct WidgetPublication: Sendable {
    private var pass: WidgetRenderPass
    private let reloadsPerDay: Int
    private let now: Instant
    /// Widgets removed in the revision that the document showed.
    private let unpublished: Set<String>

    init(_ engine: Engine) {
        self.pass = WidgetRenderPass(engine)
        self.reloadsPerDay = engine.configuration.widgetReloadsPerDay
        self.now = engine.now
        self.unpublished = engine.changes.unpublishedWidgets
    }

    /// Renders `widget` if it needs it and appends its operations.
    mutating func publish(_ widget: inout Widget, into patch: inout EncodedPatch) {
        let path = JSONPointer(tokens: [DocumentSection.widgets.rawValue, widget.id])
        if widget.needsRender {
            let html = self.pass.html(for: widget)
            if html != widget.html { widget.dirty.insert(.render) }
            widget.html = html
            widget.needsRender = false
        }
        let context = WidgetJSONContext(
            device: self.pass.device(widget.device), reloadsPerDay: self.reloadsPerDay, now: self.now)
        if !widget.published {
            patch.append(.add(path, widget.document(context)))
        } else {
            for (name, member) in WidgetMembers.names where widget.dirty.contains(member) {
                patch.append(.replace(path.appending(name), widget.member(member, context)))
            }
        }
        widget.published = true
        widget.dirty = []
    }

    /// Appends the removal of a touched widget that is gone, if the document showed it.
    func unpublish(_ id: String, into patch: inout EncodedPatch) {
        guard self.unpublished.contains(id) else { return }
        patch.append(.remove(JSONPointer(tokens: [DocumentSection.widgets.rawValue, id])))
    }

    /// How many of the last touched widgets the second thread may help with (moved out of the
    /// table for it): twice the share that evens out two equally fast threads where one stack's
    /// publication (its ranking rows, rotations and stored entry) costs as much as eight
    /// widgets', as in the 24 h jump (BENCHMARKS.md, round 7). The room covers stacks cheaper
    /// than that, or a second core faster than the first (by up to widgets / (8 × stacks): 1.25×
    /// in the jump, where the second vCPU is more often the slower).
    static func secondThreadReach(widgets: Int, stacks: Int) -> Int {
        max(0, widgets - 8 * stacks)
    }
}

/// A touched widget the second thread publishes: moved out of its slot (`nil` when it is gone).
struct WidgetToPublish: Sendable {
    let id: String
    let slot: Int32?
    /// Optional only to be exchanged with the table's slot.
    var widget: Widget?
}

/// The touched widgets two threads share in a long step, each claiming a few at a time: the
/// loop thread from the front, the second thread from the back once it has published the
/// stacks. Either may be the faster (a shared 2-core VM's second vCPU runs at anything from
/// half the loop thread's pace to the same), so neither waits for a fixed share of the other.
///
/// The loop thread writes its widgets straight after the ones before them; the second thread
/// writes each claim into a buffer of its own, which the loop thread appends in order after its
/// own, then the stacks'. Each claimed widget is one thread's alone; the buffer outlives both
/// (the loop thread waits for the other before it goes on), and the wait orders their writes
/// before its reads.
final class SharedWidgetPublication: @unchecked Sendable {
    private let widgets: UnsafeMutableBufferPointer<WidgetToPublish>
    private let publication: WidgetPublication
    private let stacks: StackPublication
    /// The widgets neither thread has claimed: `front..<back`.
    private let unclaimed: Mutex<Range<Int>>
    private static let claim = 128

    /// What the second thread wrote: the stacks, and its claims of widgets, last first.
    struct SecondPart: Sendable {
        var stacks: EncodedPatch
        var widgets: [EncodedPatch] = []
    }

    init(widgets: UnsafeMutableBufferPointer<WidgetToPublish>, _ publication: WidgetPublication, _ stacks: StackPublication) {
        self.widgets = widgets
        self.publication = publication
        self.stacks = stacks
        self.unclaimed = Mutex(widgets.indices)
    }

    /// The loop thread's part: widgets from the front until none are left.
    func runFirst(_ publication: inout WidgetPublication, into patch: inout EncodedPatch) {
        while let claimed = self.claim(fromFront: true) {
            self.publish(claimed, &publication, into: &patch)
        }
    }

    /// The second thread's part: the stacks, then widgets from the back until none are left.
    func runSecond() -> (SecondPart, StackPublication.WriteBack) {
        var stacks = EncodedPatch(reservingCapacity: self.stacks.encodedSizeGuess)
        let writeBack = self.stacks.run(into: &stacks)
        var part = SecondPart(stacks: stacks)
        var publication = self.publication
        while let claimed = self.claim(fromFront: false) {
            var patch = EncodedPatch(reservingCapacity: 2_048 * claimed.count)
            self.publish(claimed, &publication, into: &patch)
            part.widgets.append(patch)
        }
        return (part, writeBack)
    }

    /// The next few unclaimed widgets at one end; `nil` when none are left.
    private func claim(fromFront: Bool) -> Range<Int>? {
        self.unclaimed.withLock { unclaimed in
            guard !unclaimed.isEmpty else { return nil }
            let count = min(Self.claim, unclaimed.count)
            let claimed = fromFront ? unclaimed.prefix(count) : unclaimed.suffix(count)
            unclaimed = fromFront ? claimed.upperBound..<unclaimed.upperBound : unclaimed.lowerBound..<claimed.lowerBound
            return claimed
        }
    }

    private func publish(_ claimed: Range<Int>, _ publication: inout WidgetPublication, into patch: inout EncodedPatch) {
        for index in claimed {
            // In place: read out of the optional, the widget would be copied.
            if self.widgets[index].slot != nil {
                publication.publish(&self.widgets[index].widget!, into: &patch)
            } else {
                publication.unpublish(self.widgets[index].id, into: &patch)
            }
        }
    }
}
