internal import HashTreeCollections

/// The document form of widgets.
///
/// A widget's entry is not stored in the document: it is built from the model whenever it is
/// read (``widgetDocument(_:)``), and a revision replaces exactly the members its changes marked
/// (``WidgetMembers``). `timeline.entries`, the bulk of a widget, is therefore neither stored
/// twice nor compared: transitions replace `current`, `render` and `tap`, a new timeline
/// replaces `timeline`.
extension Engine {
    /// What a widget's JSON needs beyond the widget: its device, the budget, the instant.
    func widgetJSONContext(device: String?) -> WidgetJSONContext {
        WidgetJSONContext(
            device: device.flatMap { self.devices[$0] }, reloadsPerDay: self.configuration.widgetReloadsPerDay,
            now: self.now)
    }

    /// The whole document entry of a widget, timeline entries included.
    /// - Complexity: O(size of the widget's timeline).
    func widgetDocument(_ widget: Widget, withEntries: Bool = true) -> JSONValue {
        widget.document(self.widgetJSONContext(device: widget.device), withEntries: withEntries)
    }
}

/// What building a widget's JSON reads besides the widget.
struct WidgetJSONContext {
    var device: Device?
    var reloadsPerDay: Int
    var now: Instant
}

extension Widget {
    // Object literals below list their keys in sorted order: `JSONObject` then skips sorting.

    /// The widget's document entry.
    func document(_ context: WidgetJSONContext, withEntries: Bool = true) -> JSONValue {
        var members: [JSONObject.Member] = [
            .init(key: "app", value: .string(self.app)),
            .init(key: "configuration", value: .object(self.configuration)),
            .init(key: "current", value: self.member(.current, context)),
            .init(key: "device", value: self.member(.device, context)),
            .init(key: "family", value: .string(self.family.rawValue)),
            .init(key: "id", value: .string(self.id)),
            .init(key: "kind", value: .string(self.kind)),
            .init(key: "layout", value: Self.layout),
        ]
        for (name, member) in WidgetMembers.names where name > "layout" {
            let value = name == "timeline" ? self.timelineJSON(entries: withEntries) : self.member(member, context)
            members.append(.init(key: name, value: value))
        }
        return .object(JSONObject(sortedUniqueMembers: members))
    }

    /// One member of the widget's document entry.
    func member(_ member: WidgetMembers, _ context: WidgetJSONContext) -> JSONValue {
        switch member {
        case .configuration: return .object(self.configuration)
        case .current:
            let current: JSONObject = [
                "date": date(self.shownDate), "index": self.current.map { .number(Double($0)) } ?? .null,
                "placeholder": .bool(self.current == nil && self.held == nil),
                "previous": .bool(self.current == nil && self.held != nil),
            ]
            return .object(current)
        case .device: return self.device.map(JSONValue.string) ?? .null
        case .family: return .string(self.family.rawValue)
        case .placeholder: return .object(self.placeholder)
        case .presentation: return context.device.map(self.presentationJSON) ?? .null
        case .reload: return self.reloadJSON(context)
        case .render: return ["html": .string(self.html)]
        case .size: return context.device.map { $0.model.widgetSize(self.family).json } ?? .null
        case .stack: return self.stack.map(JSONValue.string) ?? .null
        case .tap: return self.tapJSON
        case .timeline: return self.timelineJSON(entries: true)
        case .url: return self.url.map(JSONValue.string) ?? .null
        case .usage:
            return ["interactions": .number(Double(self.interactions)), "lastAt": date(self.lastInteractionAt)]
        default: preconditionFailure("one member at a time")
        }
    }

    /// WK-7: content margins (16 pt, 11 pt for graphical layouts) and the logo's corner.
    static let layout: JSONValue = ["graphicalMargin": 11, "logo": "topRight", "margin": 16]

    private func timelineJSON(entries: Bool) -> JSONValue {
        var timeline: JSONObject = ["policy": self.timeline.policy.json, "setAt": date(self.timeline.setAt)]
        if entries { timeline["entries"] = self.timeline.entriesJSON }
        return .object(timeline)
    }

    /// `budget.used`: charged reloads in the 24 h before `now`.
    func chargesInWindow(at now: Instant) -> Int {
        let cutoff = now.adding(milliseconds: -millisecondsPerDay)
        return self.reload.charges.reduce(0) { $0 + ($1 > cutoff ? 1 : 0) }
    }

    private func reloadJSON(_ context: WidgetJSONContext) -> JSONValue {
        let reload = self.reload
        let limit = context.reloadsPerDay
        let used = self.chargesInWindow(at: context.now)
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
    private func presentationJSON(on device: Device) -> JSONValue {
        let standby: JSONValue =
            device.standby && self.family.showsInStandBy
            ? [
                "backgroundRemoved": true, "renderingMode": .string(device.nightMode ? "vibrant" : "fullColor"),
                "tint": device.nightMode ? "red" : .null,
            ] : .null
        if self.family.isAccessory {
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
    private var tapJSON: JSONValue {
        let links: [JSONValue] =
            self.family.hasSingleTapTarget
            ? [] : (self.shownLinks?.members ?? []).map { ["id": .string($0.key), "url": $0.value] }
        return [
            "links": .array(links), "targets": .string(self.family.hasSingleTapTarget ? "single" : "multiple"),
            "url": self.url.map(JSONValue.string) ?? .null,
        ]
    }
}
