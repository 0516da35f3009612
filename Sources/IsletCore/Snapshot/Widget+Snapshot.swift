/// Widgets, stacks and shortcuts in snapshots, and back.
///
/// A snapshot holds what cannot be derived: timelines, reload state and budget, habit history,
/// each stack's top, rotations, stack-local rotation state and its last ranking (restoring
/// never re-ranks, so the restored document is the original one). A stack's member rows are
/// rebuilt from the widgets; HTML is rendered again.
func snapshotJSON(_ widget: Widget) -> JSONValue {
    let reload = widget.reload
    let scheduled: JSONValue =
        reload.scheduled.map {
            [
                "at": .string($0.at.rfc3339), "reason": .string($0.reason), "charged": .bool($0.charged),
                "deadline": number($0.deadline),
            ]
        } ?? .null
    let object: JSONObject = [
        "id": .string(widget.id), "app": .string(widget.app), "kind": .string(widget.kind),
        "family": .string(widget.family.rawValue), "device": widget.device.map(JSONValue.string) ?? .null,
        "configuration": .object(widget.configuration), "placeholder": .object(widget.placeholder),
        "url": widget.url.map(JSONValue.string) ?? .null, "stack": widget.stack.map(JSONValue.string) ?? .null,
        "timeline": [
            "entries": widget.timeline.entriesJSON, "policy": widget.timeline.policy.json,
            "setAt": date(widget.timeline.setAt),
        ],
        "current": widget.current.map { .number(Double($0)) } ?? .null, "held": widget.held?.json ?? .null,
        "changedAt": date(widget.changedAt),
        "reload": [
            "pending": .bool(reload.pending), "pendingSince": date(reload.pendingSince), "lastAt": date(reload.lastAt),
            "lastReason": reload.lastReason.map(JSONValue.string) ?? .null, "count": .number(Double(reload.count)),
            "charges": .array(reload.charges.map { .string($0.rfc3339) }),
            "chargeExpiryDeadline": reload.chargeExpiryDeadline.map(number) ?? .null, "scheduled": scheduled,
        ],
        "habit": widget.habit.map {
            ["reference": .string($0.reference.rfc3339), "sums": .array($0.sums.map(JSONValue.number))]
        }
            ?? .null,
        "interactions": .number(Double(widget.interactions)), "lastInteractionAt": date(widget.lastInteractionAt),
        "entryDeadline": widget.entryDeadline.map(number) ?? .null,
    ]
    return .object(object)
}

func snapshotJSON(_ stack: Stack) -> JSONValue {
    let members: [JSONValue] = stack.members.map { member in
        [
            "widget": .string(member.widget), "leftTopAt": date(member.leftTopAt),
            "rotationsToTop": .array(member.rotationsToTop.map { .string($0.rfc3339) }),
        ]
    }
    let ranking: [JSONValue] = stack.ranking.map { row in
        guard case .object(var object) = row.json(widget: stack.widget(row)) else { return .null }
        object["position"] = .number(Double(row.position))
        return .object(object)
    }
    let object: JSONObject = [
        "id": .string(stack.id), "device": .string(stack.device), "family": .string(stack.family.rawValue),
        "smartRotate": .bool(stack.smartRotate), "suggestions": .bool(stack.suggestions),
        "overrides": stack.overrides.json, "members": .array(members), "top": stack.top.map(JSONValue.string) ?? .null,
        "topSince": date(stack.topSince), "ranking": .array(ranking), "rotations": .array(stack.rotations.map(\.json)),
        "rotationCount": .number(Double(stack.rotationCount)), "evaluationAt": date(stack.evaluationAt),
        "evaluationDeadline": stack.evaluationDeadline.map(number) ?? .null,
    ]
    return .object(object)
}

func restoreWidget(_ reader: SnapshotReader) throws(APIError) -> Widget {
    guard let family = WidgetFamily(rawValue: try reader.string("family")) else { throw reader.fail("family") }
    var widget = Widget(
        id: try reader.string("id"), app: try reader.string("app"), kind: try reader.string("kind"), family: family)
    widget.device = try reader.optionalString("device")
    widget.configuration = try reader.objectMember("configuration")
    widget.placeholder = try reader.objectMember("placeholder")
    widget.url = try reader.optionalString("url")
    widget.stack = try reader.optionalString("stack")
    let timeline = try reader.nested("timeline")
    widget.timeline = Timeline(
        try timeline.array("entries", restoreEntry), policy: try restorePolicy(try timeline.value("policy"), timeline),
        setAt: try timeline.optionalInstant("setAt"))
    widget.current = try reader.optionalCount("current").map { Int($0) }
    if let index = widget.current, index >= widget.timeline.count { throw reader.fail("current") }
    widget.held = try reader.optionalNested("held").map(restoreEntry).map { input in
        ShownEntry(
            date: input.date, content: input.content, score: input.score ?? .nan, duration: input.duration,
            links: input.links)
    }
    widget.changedAt = try reader.optionalInstant("changedAt")
    let reload = try reader.nested("reload")
    widget.reload.pending = try reload.bool("pending")
    widget.reload.pendingSince = try reload.optionalInstant("pendingSince")
    widget.reload.lastAt = try reload.optionalInstant("lastAt")
    widget.reload.lastReason = try reload.optionalString("lastReason")
    widget.reload.count = Int(try reload.count("count"))
    widget.reload.charges = try reload.strings("charges").map { text throws(APIError) in
        guard let instant = Instant(recordedRFC3339: text) else { throw reload.fail("charges") }
        return instant
    }
    widget.reload.chargeExpiryDeadline = try reload.optionalCount("chargeExpiryDeadline")
    if let scheduled = try reload.optionalNested("scheduled") {
        widget.reload.scheduled = ScheduledReload(
            at: try scheduled.instant("at"), reason: try scheduled.string("reason"),
            charged: try scheduled.bool("charged"),
            deadline: try scheduled.count("deadline"))
    }
    if let habit = try reader.optionalNested("habit") {
        guard let sums = try habit.value("sums").arrayValue?.compactMap(\.numberValue), sums.count == 24 else {
            throw habit.fail("sums")
        }
        widget.habit = HabitHistory(reference: try habit.instant("reference"), sums: sums)
    }
    widget.interactions = Int(try reader.count("interactions"))
    widget.lastInteractionAt = try reader.optionalInstant("lastInteractionAt")
    widget.entryDeadline = try reader.optionalCount("entryDeadline")
    return widget
}

private func restoreEntry(_ reader: SnapshotReader) throws(APIError) -> TimelineEntryInput {
    var entry = TimelineEntryInput(
        date: try reader.instant("date"), content: try reader.objectMember("content"), score: nil, duration: 0,
        links: nil)
    if let relevance = try reader.optionalNested("relevance") {
        entry.score = try relevance.double("score")
        entry.duration = try relevance.double("duration")
    }
    if reader.object["links"] != nil { entry.links = try reader.objectMember("links") }
    return entry
}

private func restorePolicy(_ value: JSONValue, _ reader: SnapshotReader) throws(APIError) -> ReloadPolicy {
    switch value {
    case "atEnd": return .atEnd
    case "never": return .never
    default:
        guard let text = value["after"]?.stringValue, let date = Instant(recordedRFC3339: text) else {
            throw reader.fail("policy")
        }
        return .after(date)
    }
}

func restoreStack(_ reader: SnapshotReader) throws(APIError) -> Stack {
    guard let family = WidgetFamily(rawValue: try reader.string("family")) else { throw reader.fail("family") }
    var stack = Stack(id: try reader.string("id"), device: try reader.string("device"), family: family)
    stack.smartRotate = try reader.bool("smartRotate")
    stack.suggestions = try reader.bool("suggestions")
    stack.overrides = try restoreOverrides(try reader.nested("overrides"))
    stack.members = try reader.array("members") { member throws(APIError) in
        var row = StackMember(widget: try member.string("widget"), slot: -1)
        row.leftTopAt = try member.optionalInstant("leftTopAt")
        row.rotationsToTop = try member.strings("rotationsToTop").map { text throws(APIError) in
            guard let instant = Instant(recordedRFC3339: text) else { throw member.fail("rotationsToTop") }
            return instant
        }
        return row
    }
    stack.top = try reader.optionalString("top")
    stack.topSince = try reader.optionalInstant("topSince")
    stack.ranking = try reader.array("ranking") { row throws(APIError) in
        RankedMember(
            position: Int(try row.count("position")), eligible: try row.bool("eligible"),
            features: try restoreVector(try row.nested("features")),
            contributions: try restoreVector(try row.nested("contributions")), score: try row.double("score"))
    }
    stack.rotations = try reader.array("rotations") { record throws(APIError) in
        Rotation(
            at: try record.instant("at"), from: try record.string("from"), fromScore: try record.double("fromScore"),
            to: try record.string("to"), score: try record.double("score"),
            contributions: try restoreVector(try record.nested("contributions")))
    }
    stack.rotationCount = Int(try reader.count("rotationCount"))
    stack.evaluationAt = try reader.optionalInstant("evaluationAt")
    stack.evaluationDeadline = try reader.optionalCount("evaluationDeadline")
    return stack
}

private func restoreVector(_ reader: SnapshotReader) throws(APIError) -> FeatureVector {
    var vector = FeatureVector()
    for feature in RankingFeature.allCases { vector[feature] = try reader.double(feature.rawValue) }
    return vector
}

private func restoreOverrides(_ reader: SnapshotReader) throws(APIError) -> RelevanceOverrides {
    var overrides = RelevanceOverrides()
    if let weights = try reader.optionalNested("weights") {
        for member in weights.object.members {
            guard let feature = RankingFeature(rawValue: member.key), let weight = member.value.numberValue else {
                throw weights.fail(member.key)
            }
            overrides.weights[feature] = weight
        }
    }
    overrides.hysteresis = reader.object["hysteresis"]?.numberValue
    overrides.minDwellSeconds = reader.object["minDwellSeconds"]?.numberValue
    return overrides
}

/// The global relevance settings of a snapshot.
func restoreRelevance(_ reader: SnapshotReader) throws(APIError) -> RelevanceSettings {
    RelevanceSettings(
        weights: try restoreVector(try reader.nested("weights")), hysteresis: try reader.double("hysteresis"),
        minDwellSeconds: try reader.double("minDwellSeconds"))
}

func restoreShortcut(_ reader: SnapshotReader) throws(APIError) -> Shortcut {
    let intentReader = try reader.nested("intent")
    guard let kind = ShortcutIntent.Kind(rawValue: try intentReader.string("type")) else {
        throw intentReader.fail("type")
    }
    var intent = ShortcutIntent(kind: kind)
    intent.attributesType = try intentReader.optionalString("attributesType")
    if intent.attributesType != nil {
        intent.attributes = try intentReader.objectMember("attributes")
        let content = try intentReader.nested("content")
        intent.state = try content.objectMember("state")
        intent.relevanceScore = content.object["relevanceScore"]?.numberValue
    }
    var parameter: ShortcutParameter?
    if let reading = try reader.optionalNested("parameter") {
        parameter = ShortcutParameter(name: try reading.string("name"), values: try reading.strings("values"))
    }
    var shortcut = Shortcut(
        id: try reader.string("id"), title: try reader.string("title"), phrases: try reader.strings("phrases"),
        parameter: parameter, intent: intent, order: Int(try reader.count("order")))
    shortcut.runs = Int(try reader.count("runs"))
    shortcut.lastRunAt = try reader.optionalInstant("lastRunAt")
    return shortcut
}
