internal import HashTreeCollections

/// The document form of widgets and stacks.
///
/// A widget's entry is not stored in the document: it is built from the model whenever it is
/// read (``widgetDocument(_:)``), and a revision replaces exactly the members its changes marked
/// (``WidgetMembers``). `timeline.entries`, the bulk of a widget, is therefore neither stored
/// twice nor compared: transitions replace `current`, `render` and `tap`, a new timeline
/// replaces `timeline`.
extension Engine {
    // Object literals below list their keys in sorted order: `JSONObject` then skips sorting.

    /// The whole document entry of a widget, timeline entries included.
    /// - Complexity: O(size of the widget's timeline).
    func widgetDocument(_ widget: Widget, withEntries: Bool = true) -> JSONValue {
        var members: [JSONObject.Member] = [
            .init(key: "app", value: .string(widget.app)),
            .init(key: "configuration", value: .object(widget.configuration)),
            .init(key: "current", value: self.widgetMember(.current, widget)),
            .init(key: "device", value: self.widgetMember(.device, widget)),
            .init(key: "family", value: .string(widget.family.rawValue)),
            .init(key: "id", value: .string(widget.id)),
            .init(key: "kind", value: .string(widget.kind)),
            .init(key: "layout", value: Self.widgetLayout),
        ]
        for (name, member) in WidgetMembers.names where name > "layout" {
            let value = name == "timeline" && !withEntries ? self.timelineJSON(widget, entries: false) : self.widgetMember(member, widget)
            members.append(.init(key: name, value: value))
        }
        return .object(JSONObject(sortedUniqueMembers: members))
    }

    /// One member of a widget's document entry.
    func widgetMember(_ member: WidgetMembers, _ widget: Widget) -> JSONValue {
        switch member {
        case .configuration: return .object(widget.configuration)
        case .current:
            let current: JSONObject = [
                "date": date(widget.shownDate), "index": widget.current.map { .number(Double($0)) } ?? .null,
                "placeholder": .bool(widget.current == nil && widget.held == nil),
                "previous": .bool(widget.current == nil && widget.held != nil),
            ]
            return .object(current)
        case .device: return widget.device.map(JSONValue.string) ?? .null
        case .family: return .string(widget.family.rawValue)
        case .placeholder: return .object(widget.placeholder)
        case .presentation: return widget.device.flatMap { self.devices[$0] }.map { self.presentationJSON(widget, on: $0) } ?? .null
        case .reload: return self.reloadJSON(widget)
        case .render: return ["html": .string(widget.html)]
        case .size: return widget.device.flatMap { self.devices[$0] }.map { $0.model.widgetSize(widget.family).json } ?? .null
        case .stack: return widget.stack.map(JSONValue.string) ?? .null
        case .tap: return self.tapJSON(widget)
        case .timeline: return self.timelineJSON(widget, entries: true)
        case .url: return widget.url.map(JSONValue.string) ?? .null
        case .usage:
            return ["interactions": .number(Double(widget.interactions)), "lastAt": date(widget.lastInteractionAt)]
        default: preconditionFailure("one member at a time")
        }
    }

    private func timelineJSON(_ widget: Widget, entries: Bool) -> JSONValue {
        var timeline: JSONObject = ["policy": widget.timeline.policy.json, "setAt": date(widget.timeline.setAt)]
        if entries { timeline["entries"] = widget.timeline.entriesJSON }
        return .object(timeline)
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
            : (widget.shownLinks?.members ?? []).map { ["id": .string($0.key), "url": $0.value] }
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
            "ranking": .array(stack.ranking.map { $0.json(widget: stack.widget($0)) }),
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
