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

    /// How many of the last touched widgets the second thread publishes before the stacks, so
    /// that both threads finish together: in the 24 h jump's publication one stack (its ranking
    /// rows, rotations and stored entry) took as long as eight widgets (BENCHMARKS.md, round 7).
    static func secondThreadShare(widgets: Int, stacks: Int) -> Int {
        max(0, (widgets - 8 * stacks) / 2)
    }
}

/// A touched widget the second thread publishes: moved out of its slot (`nil` when it is gone).
struct WidgetToPublish: Sendable {
    let id: String
    let slot: Int32?
    /// Optional only to be exchanged with the table's slot.
    var widget: Widget?
}

/// The second thread's part of a long step's publication: the last touched widgets, then the
/// stacks, into one buffer that follows the first thread's widgets.
///
/// The moved widgets are this thread's alone; their buffer outlives it (the starting thread
/// waits for it before it goes on), and the wait orders its writes before the starting thread's
/// reads.
final class SecondThreadPublication: @unchecked Sendable {
    private let widgets: UnsafeMutableBufferPointer<WidgetToPublish>
    private let publication: WidgetPublication
    private let stacks: StackPublication

    init(widgets: UnsafeMutableBufferPointer<WidgetToPublish>, _ publication: WidgetPublication, _ stacks: StackPublication) {
        self.widgets = widgets
        self.publication = publication
        self.stacks = stacks
    }

    func run() -> (EncodedPatch, StackPublication.WriteBack) {
        var patch = EncodedPatch(reservingCapacity: self.stacks.encodedSizeGuess + 2_048 * self.widgets.count)
        var publication = self.publication
        for index in self.widgets.indices {
            // In place: read out of the optional, the widget would be copied.
            if self.widgets[index].slot != nil {
                publication.publish(&self.widgets[index].widget!, into: &patch)
            } else {
                publication.unpublish(self.widgets[index].id, into: &patch)
            }
        }
        let writeBack = self.stacks.run(into: &patch)
        return (patch, writeBack)
    }
}
