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
            [
                "height": .number(self.height), "inBetweenBands": .bool(self.inBetweenBands),
                "truncated": .bool(self.truncated),
            ]
        }
    }

    func layout(of activity: Activity) -> (expanded: SlotLayout, lockScreen: SlotLayout) {
        Self.layout(of: activity, self.configuration)
    }

    static func layout(
        of activity: Activity, _ configuration: SimulatorConfiguration
    ) -> (expanded: SlotLayout, lockScreen: SlotLayout) {
        (
            self.slotLayout(activity.render?.expandedHeight, configuration),
            self.slotLayout(activity.render?.lockScreenHeight, configuration)
        )
    }

    private static func slotLayout(_ declared: Double?, _ configuration: SimulatorConfiguration) -> SlotLayout {
        let range = DeviceModel.presentationHeightRange
        let wanted = declared ?? configuration.defaultPresentationHeight
        let height = min(range.upperBound, max(range.lowerBound, wanted))
        let between = height > configuration.shortBandMaxHeight && height < configuration.tallBandMinHeight
        return SlotLayout(height: height, truncated: wanted > range.upperBound, inBetweenBands: between)
    }

    // Object literals below list their keys in sorted order: `JSONObject` then skips sorting.

    /// An activity's entry, under the configuration its layouts follow.
    static func activityJSON(_ activity: Activity, _ configuration: SimulatorConfiguration) -> JSONValue {
        let content: JSONObject = [
            "relevanceScore": .number(activity.content.relevanceScore), "staleDate": date(activity.content.staleDate),
            "state": .object(activity.content.state),
        ]
        let object: JSONObject = [
            "activityState": .string(activity.phase.rawValue),
            "alert": activity.alert?.json ?? .null,
            "app": .string(activity.app),
            "attributes": .object(activity.attributes),
            "attributesType": .string(activity.attributesType),
            "content": .object(content),
            "device": activity.device.map(JSONValue.string) ?? .null,
            "dismissAt": date(activity.dismissAt),
            "dismissedAt": date(activity.dismissedAt),
            "endReason": activity.endReason.map(JSONValue.string) ?? .null,
            "endedAt": date(activity.endedAt),
            "id": .string(activity.id),
            "lastTimestamp": date(activity.lastTimestamp),
            "pushChannel": activity.channel.map(JSONValue.string) ?? .null,
            "pushToken": activity.pushToken.map(JSONValue.string) ?? .null,
            "render": self.renderJSON(activity, configuration),
            "requestedAt": .string(activity.requestedAt.rfc3339),
            "scheduledStart": date(activity.scheduledStart),
            "source": .string(activity.source.rawValue),
            "startedAt": date(activity.startedAt),
        ]
        return .object(object)
    }

    static func renderJSON(_ activity: Activity, _ configuration: SimulatorConfiguration) -> JSONValue {
        guard case .object(var object) = activity.renderedFragments else { return .null }
        let layout = self.layout(of: activity, configuration)
        object["layout"] = ["expanded": layout.expanded.json, "lockScreen": layout.lockScreen.json]
        return .object(object)
    }

    /// The fragment part of `render`, built once per rendering and reused (so unchanged
    /// fragments compare in O(1) when the activity's JSON is diffed).
    static func fragmentsJSON(_ render: RenderedPresentation) -> JSONValue {
        // Members in key order (no dictionary literal to sort and hash, once per rendering).
        let expanded = JSONObject(sortedUniqueMembers: [
            .init(key: "bottom", value: .string(render[.expandedBottom])),
            .init(key: "center", value: .string(render[.expandedCenter])),
            .init(key: "leading", value: .string(render[.expandedLeading])),
            .init(key: "trailing", value: .string(render[.expandedTrailing])),
        ])
        return .object(
            JSONObject(sortedUniqueMembers: [
                .init(key: "compactLeading", value: .string(render[.compactLeading])),
                .init(key: "compactTrailing", value: .string(render[.compactTrailing])),
                .init(key: "expanded", value: .object(expanded)),
                .init(key: "lockScreen", value: .string(render[.lockScreen])),
                .init(key: "minimal", value: .string(render[.minimal])),
            ]))
    }

    /// The app's whole entry.
    func appJSON(_ app: App) -> JSONValue {
        self.appJSON(app, channels: .object(JSONObject(app.channels.values.map { ($0.id, self.channelJSON($0)) })))
    }

    /// The app's entry with `channels` as given: a revision patches an app's channels one by one
    /// (an app may hold 10,000), so it passes the ones the document already has.
    func appJSON(_ app: App, channels: JSONValue) -> JSONValue {
        let identity: JSONObject = [
            "background": app.identity.background.map(JSONValue.string) ?? .null,
            "foreground": app.identity.foreground.map(JSONValue.string) ?? .null,
            "keyline": app.identity.keyline.map(JSONValue.string) ?? .null,
            "tint": app.identity.tint.map(JSONValue.string) ?? .null,
        ]
        let object: JSONObject = [
            "attributesTypes": .array(app.attributesTypes.map(JSONValue.string)),
            "budgets": ["push": self.budgetJSON(app, .push), "pushToStart": self.budgetJSON(app, .pushToStart)],
            "channels": channels,
            "deliveries": .null,
            "foreground": .bool(app.foreground),
            "frequentUpdates": .bool(app.frequentUpdates),
            "id": .string(app.id),
            "identity": .object(identity),
            "liveActivitiesEnabled": .bool(app.liveActivitiesEnabled),
            "name": .string(app.name),
            "pending": [
                "deferred": .number(Double(app.deferred.count)), "throttled": .number(Double(app.throttled.count)),
            ],
            "pushToStartToken": .string(app.pushToStartToken),
            "pushToStartTokens": self.pushToStartTokensJSON(app),
            "shortcuts": .array(app.shortcuts.sorted(by: Shortcut.precedes).map(\.json)),
            "widgetPushToken": .string(app.widgetPushToken),
        ]
        return .object(object)
    }

    /// `/apps/<id>/channels/<channel>`: the policy, the broadcasts so far, the latest one and
    /// how many activities subscribe.
    func channelJSON(_ channel: Channel) -> JSONValue {
        let last: JSONValue = channel.last.map { last in
            [
                "apnsId": last.apnsId.map(JSONValue.string) ?? .null, "at": .string(last.at.rfc3339),
                "event": .string(last.event), "priority": .number(Double(last.priority)),
                "storedUntil": date(last.storedUntil),
            ]
        } ?? .null
        return [
            "broadcasts": .number(Double(channel.broadcasts)), "createdAt": .string(channel.createdAt.rfc3339),
            "id": .string(channel.id), "lastBroadcast": last,
            "storagePolicy": .number(Double(channel.storagePolicy.rawValue)),
            "subscribers": .number(Double(self.channelSubscribers[channel.id]?.count ?? 0)),
        ]
    }

    private func budgetJSON(_ app: App, _ kind: BudgetKind) -> JSONValue {
        let budget = app.budget(kind)
        let window = self.configuration.budgetWindowSeconds
        return [
            "limit": .number(Double(self.budgetLimit(app, kind))),
            "resetsAt": date(budget.windowStart?.adding(seconds: window)),
            "used": .number(Double(budget.used)),
            "windowSeconds": .number(window),
            "windowStart": date(budget.windowStart),
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
