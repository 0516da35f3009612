internal import HashTreeCollections

/// The document form of widgets and stacks.
///
/// A widget's `timeline.entries` is not stored in its JSON: the document keeps the compact
/// entries beside it and splices them in when read (``StateDocument``), and the patch replaces
/// `/widgets/<id>/timeline/entries` only when a new timeline arrives. Transitions therefore
/// change `current`, `render` and `reload`, never `entries`.
extension Engine {
    // Object literals below list their keys in sorted order: `JSONObject` then skips sorting.

    func widgetJSON(_ widget: Widget) -> JSONValue {
        let device = widget.device.flatMap { self.devices[$0] }
        let current: JSONObject = [
            "date": date(widget.shownEntry?.date), "index": widget.current.map { .number(Double($0)) } ?? .null,
            "placeholder": .bool(widget.shownEntry == nil), "previous": .bool(widget.current == nil && widget.held != nil),
        ]
        let timeline: JSONObject = ["policy": widget.timeline.policy.json, "setAt": date(widget.timeline.setAt)]
        let object: JSONObject = [
            "app": .string(widget.app),
            "configuration": .object(widget.configuration),
            "current": .object(current),
            "device": widget.device.map(JSONValue.string) ?? .null,
            "family": .string(widget.family.rawValue),
            "id": .string(widget.id),
            "kind": .string(widget.kind),
            "layout": Self.widgetLayout,
            "placeholder": .object(widget.placeholder),
            "presentation": device.map { self.presentationJSON(widget, on: $0) } ?? .null,
            "reload": self.reloadJSON(widget),
            "render": ["html": .string(widget.html)],
            "size": device.map { $0.model.widgetSize(widget.family).json } ?? .null,
            "stack": widget.stack.map(JSONValue.string) ?? .null,
            "tap": self.tapJSON(widget),
            "timeline": .object(timeline),
            "url": widget.url.map(JSONValue.string) ?? .null,
            "usage": [
                "interactions": .number(Double(widget.interactions)), "lastAt": date(widget.lastInteractionAt),
            ],
        ]
        return .object(object)
    }

    /// WK-7: content margins (16 pt, 11 pt for graphical layouts) and the logo's corner.
    static let widgetLayout: JSONValue = ["graphicalMargin": 11, "logo": "topRight", "margin": 16]

    private func reloadJSON(_ widget: Widget) -> JSONValue {
        let reload = widget.reload
        let limit = self.configuration.widgetReloadsPerDay
        let used = self.chargesInWindow(widget)
        // WK-4: when a slot frees if the budget is spent.
        let frees: Instant? =
            used >= limit && limit > 0
            ? reload.charges[reload.charges.count - limit].adding(milliseconds: millisecondsPerDay) : nil
        let budget: JSONObject = [
            "limit": .number(Double(limit)), "nextSlotAt": date(frees), "used": .number(Double(used)),
            "windowHours": 24,
        ]
        let object: JSONObject = [
            "budget": .object(budget),
            "count": .number(Double(reload.count)),
            "lastAt": date(reload.lastAt),
            "lastReason": reload.lastReason.map(JSONValue.string) ?? .null,
            "nextAt": date(reload.scheduled?.at),
            "nextReason": reload.scheduled.map { .string($0.reason) } ?? .null,
            "pending": .bool(reload.pending),
            "pendingSince": date(reload.pendingSince),
        ]
        return .object(object)
    }

    /// WK-8: how the widget is drawn where it is. Home Screen: full color, or accented under a
    /// tint; Lock Screen: vibrant with the background removed; StandBy (systemSmall): background
    /// removed, red in Night Mode.
    private func presentationJSON(_ widget: Widget, on device: Device) -> JSONValue {
        let standby: JSONValue =
            device.standby && widget.family.showsInStandBy
            ? [
                "backgroundRemoved": true, "renderingMode": .string(device.nightMode ? "vibrant" : "fullColor"),
                "tint": device.nightMode ? "red" : .null,
            ] : .null
        if widget.family.isAccessory {
            return [
                "backgroundRemoved": true, "place": "lockScreen", "renderingMode": "vibrant", "standby": standby,
                "tint": .null,
            ]
        }
        return [
            "backgroundRemoved": false, "place": "home",
            "renderingMode": .string(device.tint == nil ? "fullColor" : "accented"), "standby": standby,
            "tint": device.tint.map(JSONValue.string) ?? .null,
        ]
    }

    /// WK-9: the tap targets of the shown entry.
    private func tapJSON(_ widget: Widget) -> JSONValue {
        let links: [JSONValue] =
            widget.family.hasSingleTapTarget
            ? []
            : (widget.shownEntry?.links?.members ?? []).map { ["id": .string($0.key), "url": $0.value] }
        return [
            "links": .array(links), "targets": .string(widget.family.hasSingleTapTarget ? "single" : "multiple"),
            "url": widget.url.map(JSONValue.string) ?? .null,
        ]
    }

    func stackJSON(_ stack: Stack) -> JSONValue {
        let effective = self.relevance.applying(stack.overrides)
        let relevance: JSONObject = [
            "hysteresis": .number(effective.hysteresis), "minDwellSeconds": .number(effective.minDwellSeconds),
            "overrides": stack.overrides.json, "weights": effective.weights.json,
        ]
        let object: JSONObject = [
            "device": .string(stack.device),
            "family": .string(stack.family.rawValue),
            "id": .string(stack.id),
            "ranking": .array(stack.ranking.map(\.json)),
            "relevance": .object(relevance),
            "rotations": .array(stack.rotations),
            "smartRotate": .bool(stack.smartRotate),
            "suggestions": .bool(stack.suggestions),
            "top": stack.top.map(JSONValue.string) ?? .null,
            "topSince": date(stack.topSince),
            "widgets": .array(stack.members.map { .string($0.widget) }),
        ]
        return .object(object)
    }
}
