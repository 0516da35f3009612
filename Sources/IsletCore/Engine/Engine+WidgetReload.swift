internal import HashTreeCollections

/// Reloads (WK-3 … WK-6, WK-9): when one may happen, the rolling budget, and what happening means.
///
/// A reload "happens" by marking the widget `reload.pending` (WK-6): Islet then waits for the
/// widget's timeline provider — whoever sends the next `widget.setTimeline`. A charged reload
/// (reasons `app`, `push`, and the timeline's policy) happens at or after the instant asked for,
/// at least `widgetMinReloadIntervalSeconds` after the widget's previous reload (WK-5), and only
/// while fewer than `widgetReloadsPerDay` charged reloads fall in the last 24 h (WK-4); a free
/// one happens at the instant asked for (at once when none is). One reload waits per widget: a
/// later request joins the earlier one.
extension Engine {
    /// WK-10: the reasons of the free reload that asks a new or reconfigured widget's provider.
    static let timelineRequestReasons: Set<String> = ["created", "configured"]

    /// `widget.reload` for one widget or every widget of a kind.
    mutating func reloadWidgets(_ request: WidgetReloadRequest) throws(APIError) -> JSONValue {
        let notBefore = max(request.at ?? self.now, self.now)
        if let id = request.id {
            guard self.widgets[id] != nil else { throw APIError(.notFound, "no widget \"\(id)\"", field: "/id") }
            let at = self.requestReload(id, reason: request.reason, notBefore: notBefore)
            return ["scheduledAt": date(at)]
        }
        let kind = request.kind!
        let keys = self.kindWidgets.keys.filter { key in
            key.hasSuffix("/" + kind) && (request.app.map { key == $0 + "/" + kind } ?? true)
        }
        let ids = keys.flatMap { self.kindWidgets[$0].map(Array.init) ?? [] }.sorted()
        guard !ids.isEmpty else {
            throw APIError(.notFound, "no widget of kind \"\(kind)\"", field: request.app == nil ? "/kind" : "/app")
        }
        var results: [JSONValue] = []
        var first: Instant?
        for id in ids {
            let at = self.requestReload(id, reason: request.reason, notBefore: notBefore)
            if let at { first = min(first ?? at, at) }
            results.append(["id": .string(id), "scheduledAt": date(at)])
        }
        return ["scheduledAt": date(first), "widgets": .array(results)]
    }

    /// Asks for a reload of a widget no earlier than `notBefore`.
    /// - Returns: the instant it happens or will happen; `nil` when a budget of 0 forbids it.
    mutating func requestReload(_ id: String, reason: String, notBefore: Instant) -> Instant? {
        guard let slot = self.widgets.slot(of: id), var widget = self.widgets[slot: slot] else { return nil }
        // WK-11: a reload asked for (not a timeline policy's) while the app is on its widget's
        // device's screen is free: it skips the spacing and the budget.
        let inForeground = widget.device.flatMap { self.devices[$0]?.foregroundApp } == widget.app
        let charged = WidgetReloadRequest.chargedReasons.contains(reason) && !(inForeground && reason != "policy")
        guard charged else {
            // WK-5: not before the instant asked for; a later request joins an earlier one.
            if notBefore > self.now {
                if let waiting = widget.reload.scheduled, waiting.at <= notBefore { return waiting.at }
                self.schedule(&widget.reload, slot: slot, at: notBefore, reason: reason, charged: false)
                widget.dirty.insert(.reload)
                self.commit(widget, slot: slot)
                return notBefore
            }
            // WK-4, WK-9: free reloads happen at once and satisfy any reload that was waiting.
            self.perform(&widget.reload, slot: slot, reason: reason, charged: false)
            widget.dirty.insert(.reload)
            self.commit(widget, slot: slot)
            return self.now
        }
        guard let earliest = self.earliestChargedReload(widget.reload, notBefore: notBefore) else { return nil }
        if let waiting = widget.reload.scheduled, waiting.at <= earliest { return waiting.at }
        if earliest <= self.now {
            self.perform(&widget.reload, slot: slot, reason: reason, charged: true)
            widget.dirty.insert(.reload)
        } else {
            self.schedule(&widget.reload, slot: slot, at: earliest, reason: reason, charged: true)
            widget.dirty.insert(.reload)
        }
        self.commit(widget, slot: slot)
        return earliest
    }

    /// WK-4, WK-5: the first instant from `notBefore` at which a charged reload may happen.
    func earliestChargedReload(_ reload: WidgetReload, notBefore: Instant) -> Instant? {
        let limit = self.configuration.widgetReloadsPerDay
        guard limit > 0 else { return nil }
        var earliest = notBefore
        // WK-10's first request for a timeline is not a refresh: the next one need not wait.
        if let last = reload.lastAt, !Self.timelineRequestReasons.contains(reload.lastReason ?? "") {
            earliest = max(earliest, last.adding(seconds: self.configuration.widgetMinReloadIntervalSeconds))
        }
        let charges = reload.charges.filter { $0.adding(milliseconds: millisecondsPerDay) > earliest }
        if charges.count >= limit {
            // The slot frees when the charge `limit` places from the end leaves the window.
            earliest = charges[charges.count - limit].adding(milliseconds: millisecondsPerDay)
        }
        return earliest
    }

    /// A widget's waiting reload falls due: it happens now, or waits again if a free reload in
    /// between moved the spacing or the budget on.
    ///
    /// Only the widget's reload state is taken out of the table and put back (a day's policy
    /// reloads fall for every widget: copying each widget out would retain all its parts).
    mutating func scheduledReloadFalls(due slot: Int32) {
        let taken = self.widgets.modify(slot: slot) { widget -> WidgetReload? in
            guard widget.reload.scheduled != nil else { return nil }
            // Moved out, so that its charges can grow without being copied.
            defer { widget.reload = WidgetReload() }
            return widget.reload
        }
        guard var reload = taken ?? nil, let waiting = reload.scheduled else { return }
        reload.scheduled = nil
        // A free reload waited only for its instant (WK-5); a charged one may wait again.
        if waiting.charged, let earliest = self.earliestChargedReload(reload, notBefore: self.now), earliest > self.now {
            self.schedule(&reload, slot: slot, at: earliest, reason: waiting.reason, charged: true)
        } else {
            self.perform(&reload, slot: slot, reason: waiting.reason, charged: waiting.charged)
        }
        self.widgets.modify(slot: slot) { $0.reload = reload }
        self.touchWidget(slot: slot, .reload, render: false)
    }

    /// The widget's one waiting reload is now this one, due at `at`.
    private mutating func schedule(_ reload: inout WidgetReload, slot: Int32, at: Instant, reason: String, charged: Bool) {
        let sequence = self.scheduler.schedule(.widgetReload(widget: slot), at: at)
        reload.scheduled = ScheduledReload(at: at, reason: reason, charged: charged, deadline: sequence)
    }

    /// WK-6: the reload happens: the widget waits for its provider (the caller marks the
    /// widget's `reload` member changed).
    private mutating func perform(_ reload: inout WidgetReload, slot: Int32, reason: String, charged: Bool) {
        reload.pending = true
        reload.pendingSince = reload.pendingSince ?? self.now
        reload.lastAt = self.now
        reload.lastReason = reason
        reload.count += 1
        reload.scheduled = nil
        if charged {
            reload.charges.append(self.now)
            if reload.chargeExpiryDeadline == nil { self.armChargeExpiry(&reload, slot: slot) }
        }
    }

    private mutating func armChargeExpiry(_ reload: inout WidgetReload, slot: Int32) {
        guard let oldest = reload.charges.first else {
            reload.chargeExpiryDeadline = nil
            return
        }
        reload.chargeExpiryDeadline = self.scheduler.schedule(
            .widgetChargeExpiry(widget: slot),
            at: oldest.adding(milliseconds: millisecondsPerDay))
    }

    /// WK-4: charges older than 24 h leave the window (and `budget.used`).
    mutating func expireCharges(of slot: Int32) {
        guard var widget = self.widgets[slot: slot] else { return }
        let cutoff = self.now.adding(milliseconds: -millisecondsPerDay)
        widget.reload.charges.removeAll { $0 <= cutoff }
        widget.dirty.insert(.reload)
        self.armChargeExpiry(&widget.reload, slot: slot)
        self.commit(widget, slot: slot)
    }

}
