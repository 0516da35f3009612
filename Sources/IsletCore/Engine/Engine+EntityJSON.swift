internal import HashTreeCollections

/// The document form of activities and apps.
extension Engine {
    /// PR-5: a presentation's height, clamped to 84–160 pt; taller content is truncated, and a
    /// height between the short and tall bands is flagged.
    struct SlotLayout: Hashable {
        var height: Double
        var truncated: Bool
        var inBetweenBands: Bool

        var json: JSONValue {
            ["height": .number(self.height), "truncated": .bool(self.truncated), "inBetweenBands": .bool(self.inBetweenBands)]
        }
    }

    func layout(of activity: Activity) -> (expanded: SlotLayout, lockScreen: SlotLayout) {
        (self.slotLayout(activity.render?.expandedHeight), self.slotLayout(activity.render?.lockScreenHeight))
    }

    private func slotLayout(_ declared: Double?) -> SlotLayout {
        let range = DeviceModel.presentationHeightRange
        let wanted = declared ?? self.configuration.defaultPresentationHeight
        let height = min(range.upperBound, max(range.lowerBound, wanted))
        let between = height > self.configuration.shortBandMaxHeight && height < self.configuration.tallBandMinHeight
        return SlotLayout(height: height, truncated: wanted > range.upperBound, inBetweenBands: between)
    }

    func activityJSON(_ activity: Activity) -> JSONValue {
        var content: JSONObject = [
            "state": .object(activity.content.state), "relevanceScore": .number(activity.content.relevanceScore),
        ]
        content["staleDate"] = date(activity.content.staleDate)
        let object: JSONObject = [
            "id": .string(activity.id),
            "app": .string(activity.app),
            "attributesType": .string(activity.attributesType),
            "attributes": .object(activity.attributes),
            "content": .object(content),
            "activityState": .string(activity.phase.rawValue),
            "source": .string(activity.source.rawValue),
            "requestedAt": .string(activity.requestedAt.rfc3339),
            "scheduledStart": date(activity.scheduledStart),
            "startedAt": date(activity.startedAt),
            "endedAt": date(activity.endedAt),
            "endReason": activity.endReason.map(JSONValue.string) ?? .null,
            "dismissAt": date(activity.dismissAt),
            "dismissedAt": date(activity.dismissedAt),
            "pushToken": activity.pushToken.map(JSONValue.string) ?? .null,
            "lastTimestamp": date(activity.lastTimestamp),
            "alert": activity.alert?.json ?? .null,
            "render": self.renderJSON(activity),
        ]
        return .object(object)
    }

    private func renderJSON(_ activity: Activity) -> JSONValue {
        let render = activity.render ?? RenderedPresentation(fragments: [:])
        let layout = self.layout(of: activity)
        let object: JSONObject = [
            "compactLeading": .string(render[.compactLeading]),
            "compactTrailing": .string(render[.compactTrailing]),
            "minimal": .string(render[.minimal]),
            "expanded": [
                "leading": .string(render[.expandedLeading]), "trailing": .string(render[.expandedTrailing]),
                "center": .string(render[.expandedCenter]), "bottom": .string(render[.expandedBottom]),
            ],
            "lockScreen": .string(render[.lockScreen]),
            "layout": ["expanded": layout.expanded.json, "lockScreen": layout.lockScreen.json],
        ]
        return .object(object)
    }

    func appJSON(_ app: App) -> JSONValue {
        let identity: JSONObject = [
            "tint": app.identity.tint.map(JSONValue.string) ?? .null,
            "background": app.identity.background.map(JSONValue.string) ?? .null,
            "foreground": app.identity.foreground.map(JSONValue.string) ?? .null,
            "keyline": app.identity.keyline.map(JSONValue.string) ?? .null,
        ]
        let object: JSONObject = [
            "id": .string(app.id),
            "name": .string(app.name),
            "identity": .object(identity),
            "liveActivitiesEnabled": .bool(app.liveActivitiesEnabled),
            "frequentUpdates": .bool(app.frequentUpdates),
            "foreground": .bool(app.foreground),
            "pushToStartToken": .string(app.pushToStartToken),
            "budgets": ["push": self.budgetJSON(app, .push), "pushToStart": self.budgetJSON(app, .pushToStart)],
            "pending": ["throttled": .number(Double(app.throttled.count)), "deferred": .number(Double(app.deferred.count))],
            "deliveries": .array(app.deliveries),
        ]
        return .object(object)
    }

    private func budgetJSON(_ app: App, _ kind: BudgetKind) -> JSONValue {
        let budget = app.budget(kind)
        let window = self.configuration.budgetWindowSeconds
        return [
            "limit": .number(Double(self.budgetLimit(app, kind))),
            "used": .number(Double(budget.used)),
            "windowSeconds": .number(window),
            "windowStart": date(budget.windowStart),
            "resetsAt": date(budget.windowStart?.adding(seconds: window)),
        ]
    }

    func budgetLimit(_ app: App, _ kind: BudgetKind) -> Int {
        switch kind {
        case .push: self.configuration.pushBudgetLimit(frequentUpdates: app.frequentUpdates)
        case .pushToStart: self.configuration.pushToStartPerHour
        }
    }
}

/// A date member: RFC 3339 text, or `null`.
func date(_ instant: Instant?) -> JSONValue {
    instant.map { .string($0.rfc3339) } ?? .null
}
