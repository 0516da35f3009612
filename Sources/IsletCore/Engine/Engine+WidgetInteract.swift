internal import HashTreeCollections

/// `widget.interact`: taps (WK-9), controls (a free reload) and the habit history (SS-4).
extension Engine {
    mutating func interact(_ interaction: WidgetInteract) throws(APIError) -> JSONValue {
        guard var widget = self.widgets[interaction.id] else {
            throw APIError(.notFound, "no widget \"\(interaction.id)\"", field: "/id")
        }
        let at = interaction.at ?? self.now
        guard at <= self.now else {
            throw APIError(
                .invalidArgument, "an interaction happens now or in the past, not after \(self.now)", field: "/at")
        }
        var result: JSONObject
        switch interaction.action {
        case .tap: result = try self.resolveTap(widget, target: interaction.target)
        case .view: result = [:]
        case .control:
            guard widget.family.allowsControls else {
                throw APIError(
                    .invalidArgument, "WK-9: \(widget.family.rawValue) widgets have no controls", field: "/target")
            }
            // Controls are inactive on a locked device until the person authenticates.
            if let device = widget.device.flatMap({ self.devices[$0] }), device.locked {
                return ["applied": false, "reason": "locked"]
            }
            result = [:]
        }
        widget.interactions += 1
        widget.lastInteractionAt = max(widget.lastInteractionAt ?? at, at)
        var habit = widget.habit ?? HabitHistory(reference: at)
        let zone = widget.device.flatMap { self.devices[$0]?.timeZone } ?? .utc
        habit.record(at, zone: zone, halfLifeMilliseconds: self.configuration.habitHalfLifeSeconds * 1000)
        widget.habit = habit
        widget.dirty.insert(.usage)
        self.commit(widget)
        if widget.stackSlot >= 0, let slot = self.widgets.slot(of: widget.id) {
            self.updateMember(slot, of: widget.stackSlot) { $0.habit = habit }
        }
        if interaction.action == .control {
            // WK-9: an interaction with a control guarantees a timeline reload, budget-free.
            result["reloadAt"] = date(self.requestReload(widget.id, reason: "intent", notBefore: self.now))
        }
        result["applied"] = true
        return .object(result)
    }

    /// WK-9: a `Link` target's URL, else the widget URL, else the app opens with the widget's
    /// kind and family. `accessoryInline` and `accessoryCircular` have the widget URL only.
    private func resolveTap(_ widget: Widget, target: String?) throws(APIError) -> JSONObject {
        if let target, !widget.family.hasSingleTapTarget {
            guard let url = widget.shownEntry?.links?[target]?.stringValue else {
                throw APIError(.invalidArgument, "the shown entry has no link \"\(target)\"", field: "/target")
            }
            return ["opens": "url", "target": .string(target), "url": .string(url)]
        }
        if let url = widget.url { return ["opens": "url", "target": .null, "url": .string(url)] }
        return [
            "opens": "app", "target": .null, "url": .null,
            "userActivity": ["family": .string(widget.family.rawValue), "kind": .string(widget.kind)],
        ]
    }
}
