internal import HashTreeCollections

/// The engine's state as one canonical JSON value, for the durable store and forecasts.
///
/// A snapshot holds the model, not the document: restoring rebuilds the document (renders
/// included) from the model with the same pure code, so a restored engine produces the same
/// document and the same later revisions. Collections are sorted by id and deadlines by
/// `(at, sequence)`; only live deadlines are kept, with their original sequences, so equal
/// instants still fire in the original order.
extension Engine {
    /// The snapshot format written by this version.
    public static let snapshotFormat = "islet.engine.v1"

    /// The whole engine state.
    /// - Complexity: O(n log n) in the number of entities.
    public func snapshot() -> JSONValue {
        var counters: JSONObject = [
            "activityNumber": number(self.counters.activityNumber),
            "tokenNumber": number(self.counters.tokenNumber), "startOrder": number(self.counters.startOrder),
            "nextSequence": number(self.scheduler.nextSequence),
        ]
        // Written only when set, so the default simulation's snapshots keep their bytes.
        if self.counters.tokenSalt != 0 { counters["tokenSalt"] = number(self.counters.tokenSalt) }
        if self.counters.channelNumber != 0 { counters["channelNumber"] = number(self.counters.channelNumber) }
        var object: JSONObject = [
            "format": .string(Self.snapshotFormat),
            "rev": .number(Double(self.rev)),
            "now": .string(self.now.rfc3339),
            "clock": [
                "mode": .string(self.clock.mode.rawValue), "rate": .number(self.clock.rate),
                "anchorWall": .string(self.clock.anchorWall.rfc3339),
                "anchorSimulated": .string(self.clock.anchorSimulated.rfc3339),
            ],
            "configuration": self.configuration.json,
            "counters": .object(counters),
            "devices": .array(self.devices.keys.sorted().map { snapshotJSON(self.devices[$0]!) }),
            "apps": .array(
                self.apps.keys.sorted().map { snapshotJSON(self.apps[$0]!, deliveries: self.deliveryLogs[$0] ?? []) }),
            "activities": .array(self.activities.keys.sorted().map { snapshotJSON(self.activities[$0]!) }),
            "templates": .array(
                self.templates.keys.sorted().map { key in
                    [
                        "app": .string(key.app), "target": .string(key.target), "slot": .string(key.slot),
                        "source": .string(self.templates[key]!.source),
                    ]
                }),
            "deadlines": .array(self.scheduler.liveDeadlines(self.isLive).map(self.deadlineSnapshot)),
            "widgets": .array(self.widgets.keys.sorted().map { snapshotJSON(self.widgets[$0]!) }),
            "stacks": .array(self.stacks.keys.sorted().map { snapshotJSON(self.stacks[$0]!) }),
            "relevance": .object(JSONObject(self.relevance.entries)),
            "kindMaxScores": .object(JSONObject(self.kindMaxScores.map { ($0.key, JSONValue.number($0.value)) })),
            "retiredTokens": .array(self.retiredTokensSnapshot()),
        ]
        if let keys = self.providerKeysSnapshot() { object["providerKeys"] = keys }
        return .object(object)
    }

    /// The retired push tokens (AP-4), sorted by token.
    private func retiredTokensSnapshot() -> [JSONValue] {
        self.tokens.keys.sorted().compactMap { token in
            guard case .retired(let activity, let app, let dismissedAt)? = self.tokens[token] else { return nil }
            return [
                "token": .string(token), "activity": .string(activity), "app": .string(app),
                "dismissedAt": .string(dismissedAt.rfc3339),
            ]
        }
    }

    /// The snapshot's canonical bytes.
    public var snapshotBytes: [UInt8] { self.snapshot().encoded }
}

func number(_ value: UInt64) -> JSONValue { .number(Double(value)) }

func snapshotJSON(_ device: Device) -> JSONValue {
    var object: JSONObject = [
        "id": .string(device.id), "model": .string(device.model.id), "appearance": .string(device.appearance.rawValue),
        "locked": .bool(device.locked), "standby": .bool(device.standby), "nightMode": .bool(device.nightMode),
        "alwaysOn": .bool(device.alwaysOn), "standbyView": .string(device.standbyView.rawValue),
        "expansion": device.expansion.map(snapshotJSON) ?? .null,
        "alertQueue": .array(device.alertQueue.elements.map(JSONValue.string)),
        "banner": device.banner.map(snapshotJSON) ?? .null,
        "bannerQueue": .array(device.bannerQueue.elements.map(JSONValue.string)),
        "tint": device.tint.map(JSONValue.string) ?? .null,
        "iosVersion": .string(device.iosVersion.description),
        "timeZone": .string(device.timeZone.identifier),
        "homeStacks": .array(device.homeStacks.map(JSONValue.string)),
        "homeWidgets": .array(device.homeWidgets.map(JSONValue.string)),
        "lockWidgets": .array(device.lockWidgets.map(JSONValue.string)),
    ]
    if let app = device.foregroundApp { object["foregroundApp"] = .string(app) }
    return .object(object)
}

func snapshotJSON(_ expansion: Expansion) -> JSONValue {
    [
        "activity": .string(expansion.activity), "reason": .string(expansion.reason.rawValue),
        "until": .string(expansion.until.rfc3339), "deadline": number(expansion.deadline),
    ]
}

func snapshotJSON(_ app: App, deliveries: [JSONValue]) -> JSONValue {
    let identity = [
        ("tint", app.identity.tint), ("background", app.identity.background),
        ("foreground", app.identity.foreground), ("keyline", app.identity.keyline),
    ].compactMap { name, color in color.map { (name, JSONValue.string($0)) } }
    var object: JSONObject = [
        "id": .string(app.id), "name": .string(app.name), "identity": .object(JSONObject(identity)),
        "liveActivitiesEnabled": .bool(app.liveActivitiesEnabled), "frequentUpdates": .bool(app.frequentUpdates),
        "foreground": .bool(app.foreground), "pushToStartToken": .string(app.pushToStartToken),
        "pushBudget": snapshotJSON(app.pushBudget), "pushToStartBudget": snapshotJSON(app.pushToStartBudget),
        "deliveries": .array(deliveries),
        "throttled": .array(app.throttled.map(snapshotJSON)), "deferred": .array(app.deferred.map(snapshotJSON)),
        "shortcuts": .array(app.shortcuts.map(\.json)), "nextShortcutOrder": .number(Double(app.nextShortcutOrder)),
    ]
    // Written only when there are some, so snapshots of worlds without channels keep their bytes.
    if !app.channels.isEmpty { object["channels"] = .array(app.channels.keys.sorted().map { snapshotJSON(app.channels[$0]!) }) }
    if !app.attributesTypes.isEmpty { object["attributesTypes"] = .array(app.attributesTypes.map(JSONValue.string)) }
    if !app.pushToStartTokens.isEmpty {
        object["pushToStartTokens"] = .array(
            app.pushToStartTokens.keys.sorted().map { key in
                let typed = app.pushToStartTokens[key]!
                return [
                    "device": .string(key.device), "attributesType": .string(key.attributesType),
                    "token": .string(typed.token), "generation": .number(Double(typed.generation)),
                ]
            })
    }
    return .object(object)
}

func snapshotJSON(_ channel: Channel) -> JSONValue {
    let last: JSONValue = channel.last.map { last in
        [
            "command": last.command, "event": .string(last.event), "at": .string(last.at.rfc3339),
            "priority": .number(Double(last.priority)), "apnsId": last.apnsId.map(JSONValue.string) ?? .null,
            "storedUntil": date(last.storedUntil),
        ]
    } ?? .null
    return [
        "id": .string(channel.id), "storagePolicy": .number(Double(channel.storagePolicy.rawValue)),
        "createdAt": .string(channel.createdAt.rfc3339), "broadcasts": .number(Double(channel.broadcasts)),
        "last": last,
    ]
}

func snapshotJSON(_ budget: Budget) -> JSONValue {
    [
        "windowStart": date(budget.windowStart), "used": .number(Double(budget.used)),
        "resetDeadline": budget.resetDeadline.map(number) ?? .null,
    ]
}

func snapshotJSON(_ pending: PendingDelivery) -> JSONValue {
    [
        "command": pending.command, "receivedAt": .string(pending.receivedAt.rfc3339),
        "deadline": number(pending.deadline),
    ]
}

func snapshotJSON(_ activity: Activity) -> JSONValue {
    let armed = [
        ("start", activity.armed.start), ("stale", activity.armed.stale), ("lifetime", activity.armed.lifetime),
        ("dismissal", activity.armed.dismissal), ("removal", activity.armed.removal),
    ].compactMap { name, sequence in sequence.map { (name, number($0)) } }
    var object: JSONObject = [
        "id": .string(activity.id), "app": .string(activity.app), "attributesType": .string(activity.attributesType),
        "attributes": .object(activity.attributes), "state": .object(activity.content.state),
        "staleDate": date(activity.content.staleDate), "relevanceScore": .number(activity.content.relevanceScore),
        "phase": .string(activity.phase.rawValue), "source": .string(activity.source.rawValue),
        "wantsPushToken": .bool(activity.wantsPushToken),
        "pushToken": activity.pushToken.map(JSONValue.string) ?? .null,
        "requestedAt": .string(activity.requestedAt.rfc3339), "scheduledStart": date(activity.scheduledStart),
        "startedAt": date(activity.startedAt), "endedAt": date(activity.endedAt),
        "endReason": activity.endReason.map(JSONValue.string) ?? .null, "dismissAt": date(activity.dismissAt),
        "dismissedAt": date(activity.dismissedAt), "startOrder": number(activity.startOrder),
        "alert": activity.alert?.json ?? .null, "lastTimestamp": date(activity.lastTimestamp),
        "armed": .object(JSONObject(armed)),
    ]
    if let channel = activity.channel { object["channel"] = .string(channel) }
    // Written only when set, so snapshots of device-less worlds keep their bytes.
    if let device = activity.device { object["device"] = .string(device) }
    return .object(object)
}

extension Engine {
    /// A deadline as snapshots hold it: widgets and stacks by id (slots are not kept).
    func deadlineSnapshot(_ deadline: Deadline) -> JSONValue {
        var json = snapshotJSON(deadline)
        switch deadline.kind {
        case .widgetEntry(let slot), .widgetReload(let slot), .widgetChargeExpiry(let slot):
            try? json.set(.string(self.widgets[slot: slot]?.id ?? ""), at: "/widget")
        case .stackEvaluation(let slot):
            try? json.set(.string(self.stacks[slot: slot]?.id ?? ""), at: "/stack")
        default: break
        }
        return json
    }
}

func snapshotJSON(_ deadline: Deadline) -> JSONValue {
    var object: JSONObject = [
        "at": .string(deadline.at.rfc3339), "sequence": number(deadline.sequence), "kind": .string(deadline.kind.name),
    ]
    switch deadline.kind {
    case .activityStart(let id), .activityStale(let id), .activityLifetime(let id), .activityDismissal(let id),
        .activityRemoval(let id):
        object["activity"] = .string(id)
    case .expansionEnd(let device), .bannerEnd(let device):
        object["device"] = .string(device)
    case .budgetReset(let app, let budget):
        object["app"] = .string(app)
        object["budget"] = .string(budget.rawValue)
    case .deferredDelivery(let app):
        object["app"] = .string(app)
    case .widgetEntry, .widgetReload, .widgetChargeExpiry, .stackEvaluation:
        break
    }
    return .object(object)
}
