internal import HashTreeCollections

/// Push budgets (LA-11, LA-12), held pushes, and the `/apps/<id>/deliveries` log (AP-6, AP-8).
extension Engine {
    /// Holds a push update or end instead of delivering it now: a priority-5 push waits
    /// `lowPriorityDelaySeconds`; a priority-10 push over budget is throttled until the budget
    /// returns (AP-9: only the newest per activity waits). Returns the command result when held
    /// (or let go of), `nil` to deliver now (budget charged).
    mutating func holdPush(
        _ command: @autoclosure () -> JSONValue, activity: String, event: String, _ delivery: DeliveryInput
    ) -> JSONValue? {
        guard delivery.source == .push, let appID = self.activities[activity]?.app else { return nil }
        let record = HeldRecord(event: event, activity: activity, channel: nil, delivery: delivery)
        if delivery.priority == 5 {
            guard self.configuration.lowPriorityDelaySeconds > 0 else { return nil }
            return self.deferPush(command(), app: appID, record)
        }
        if self.charge(appID, .push) { return nil }
        return self.throttle(command(), app: appID, record)
    }

    /// Draws one unit of an app's budget; opens a window (and its reset deadline) if none is
    /// open. Returns `false`, drawing nothing, when the window's budget is used up.
    mutating func charge(_ appID: String, _ kind: BudgetKind) -> Bool {
        guard let app = self.apps[appID] else { return false }
        let limit = self.budgetLimit(app, kind)
        var budget = app.budget(kind)
        if budget.windowStart == nil {
            budget.windowStart = self.now
            budget.used = 0
            budget.resetDeadline = self.scheduler.schedule(
                .budgetReset(app: appID, budget: kind),
                at: self.now.adding(milliseconds: self.configuration.budgetWindowMilliseconds))
        }
        let allowed = budget.used < limit
        if allowed { budget.used += 1 }
        let stored = budget
        self.apps[appID]?.modifyBudget(kind) { $0 = stored }
        self.changes.apps.insert(appID)
        return allowed
    }

    /// The window of an app's budget closes: the budget returns, and throttled pushes are
    /// delivered in arrival order while it lasts (LA-11 "applied when budget returns").
    ///
    /// Under a limit of 0 no window opens: nothing could be drawn from it, and each window's
    /// reset would open the next, a deadline every `budgetWindowSeconds` for ever. The throttled
    /// pushes then wait for a `config.set` that raises the limit (``releaseThrottledPushes()``).
    mutating func resetBudget(_ appID: String, _ kind: BudgetKind) {
        self.apps[appID]?.modifyBudget(kind) { $0 = Budget() }
        self.changes.apps.insert(appID)
        guard kind == .push, let app = self.apps[appID], self.budgetLimit(app, .push) > 0 else { return }
        self.deliverThrottled(appID)
    }

    /// Delivers an app's throttled pushes, in arrival order, while its budget lasts.
    private mutating func deliverThrottled(_ appID: String) {
        while let first = self.apps[appID]?.throttled.first, self.charge(appID, .push) {
            self.apps[appID]?.throttled.removeFirst()
            self.deliverHeld(first)
        }
    }

    /// Delivers, after a `config.set`, throttled pushes that the new limit has budget for: at
    /// once, so a push arriving later does not overtake them (LA-11 "applied when budget
    /// returns", in arrival order). A budget with no open window (spent under a limit of 0)
    /// opens one with the first.
    mutating func releaseThrottledPushes() {
        for appID in self.apps.keys.sorted() {
            guard let app = self.apps[appID], !app.throttled.isEmpty, self.budgetLimit(app, .push) > 0 else { continue }
            self.deliverThrottled(appID)
        }
    }

    /// A deferred priority-5 push reaches the device.
    mutating func deliverDeferred(_ appID: String, sequence: UInt64) {
        guard let index = self.apps[appID]?.deferred.firstIndex(where: { $0.deadline == sequence }),
            let held = self.apps[appID]?.deferred.remove(at: index)
        else { return }
        self.changes.apps.insert(appID)
        self.deliverHeld(held)
    }

    private mutating func deliverHeld(_ held: PendingDelivery) {
        // Held commands were validated when received; pushes never throw (they get outcomes).
        switch try? Command(json: held.command) {
        case .activityUpdate(let update)?: _ = try? self.deliverUpdate(update)
        case .activityEnd(let end)?: _ = try? self.deliverEnd(end)
        case .channelBroadcast(let broadcast)?: _ = self.deliverBroadcast(broadcast)
        default: break
        }
    }

    /// Records the ignored push in the app's deliveries; nothing else changes (no budget is
    /// drawn: the device dropped the push before acting on it).
    mutating func recordIgnoredPush(_ push: IgnoredPush) throws(APIError) -> JSONValue {
        guard self.apps.contains(push.app) else { throw APIError(.notFound, "no app \"\(push.app)\"", field: "/app") }
        self.recordDelivery(
            push.app, event: push.event, activity: push.activity, push.delivery, outcome: "ignored",
            reason: push.reason, channel: push.channel, detail: push.detail)
        return ["applied": false, "reason": .string(push.reason)]
    }

    /// Appends a record to the app's `deliveries` (newest last, the last `deliveriesKept`).
    mutating func recordDelivery(
        _ appID: String, event: String, activity: String?, _ delivery: DeliveryInput, outcome: DeliveryOutcome
    ) {
        self.recordDelivery(
            appID, event: event, activity: activity, delivery, outcome: outcome.outcome, reason: outcome.reason)
    }

    /// Only the log changes (`changes.deliveryLogs`): a caller that changes the app too
    /// marks it in `changes.apps` itself.
    /// - Parameters: `channel`, `subscribers` and `applied` describe a broadcast (one record per
    ///   broadcast, with how many subscribers it reached and applied it); `detail` says in words
    ///   why a push was ignored (AP-8); `event` is `nil` for a push that named none.
    mutating func recordDelivery(
        _ appID: String, event: String?, activity: String?, _ delivery: DeliveryInput, outcome: String, reason: String?,
        channel: String? = nil, subscribers: Int? = nil, applied: Int? = nil, detail: String? = nil
    ) {
        guard self.apps.contains(appID) else { return }
        var record = JSONObject(sortedUniqueMembers: [
            .init(key: "activity", value: activity.map(JSONValue.string) ?? .null),
            .init(key: "apnsId", value: delivery.apnsId.map(JSONValue.string) ?? .null),
            .init(key: "at", value: .string(self.now.rfc3339)),
            .init(key: "event", value: event.map(JSONValue.string) ?? .null),
            .init(key: "outcome", value: .string(outcome)),
            .init(key: "priority", value: .number(Double(delivery.priority))),
            .init(key: "reason", value: reason.map(JSONValue.string) ?? .null),
            .init(key: "source", value: .string(delivery.source.rawValue)),
        ])
        if let channel {
            record["channel"] = .string(channel)
            if let subscribers { record["subscribers"] = .number(Double(subscribers)) }
            if let applied { record["appliedTo"] = .number(Double(applied)) }
        }
        if let detail { record["detail"] = .string(detail) }
        self.noteLogChange(of: appID, appending: 1)
        let kept = self.configuration.deliveriesKept
        self.deliveryLogs.updateValue(forKey: appID, default: []) { log in
            log.append(.object(record))
            if log.count > kept { log.removeFirst(log.count - kept) }
        }
    }

    /// Called before an app's log changes: the first time in a revision, remembers how many
    /// records the document shows, from which the log's operations follow.
    mutating func noteLogChange(of appID: String, appending records: Int = 0) {
        let published = self.deliveryLogs[appID]?.count ?? 0
        self.changes.deliveryLogs[appID, default: DeliveryLogChange(published: published)].appended += records
    }
}
