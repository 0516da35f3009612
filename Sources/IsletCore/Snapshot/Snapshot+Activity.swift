/// Restoring activities and deadlines.
func restoreActivity(_ reader: SnapshotReader) throws(APIError) -> Activity {
    guard let phase = ActivityPhase(rawValue: try reader.string("phase")) else { throw reader.fail("phase") }
    guard let source = ActivitySource(rawValue: try reader.string("source")) else { throw reader.fail("source") }
    var activity = Activity(
        id: try reader.string("id"), app: try reader.string("app"), attributesType: try reader.string("attributesType"),
        attributes: try reader.objectMember("attributes"),
        content: ActivityContent(
            state: try reader.objectMember("state"), staleDate: try reader.optionalInstant("staleDate"),
            relevanceScore: try reader.double("relevanceScore")),
        phase: phase, source: source, wantsPushToken: try reader.bool("wantsPushToken"),
        requestedAt: try reader.instant("requestedAt"), startOrder: try reader.count("startOrder"))
    activity.pushToken = try reader.optionalString("pushToken")
    activity.channel = try reader.optionalString("channel")
    activity.device = try reader.optionalString("device")
    activity.scheduledStart = try reader.optionalInstant("scheduledStart")
    activity.startedAt = try reader.optionalInstant("startedAt")
    activity.endedAt = try reader.optionalInstant("endedAt")
    activity.endReason = try reader.optionalString("endReason")
    activity.dismissAt = try reader.optionalInstant("dismissAt")
    activity.dismissedAt = try reader.optionalInstant("dismissedAt")
    activity.lastTimestamp = try reader.optionalInstant("lastTimestamp")
    if let alert = try reader.optionalNested("alert") {
        var fields = alert.object
        fields["at"] = nil
        activity.alert = ActivityAlert(fields: fields, at: try alert.instant("at"))
    }
    let armed = try reader.nested("armed")
    activity.armed = ArmedDeadlines(
        start: try armed.optionalCount("start"), stale: try armed.optionalCount("stale"),
        lifetime: try armed.optionalCount("lifetime"), dismissal: try armed.optionalCount("dismissal"),
        removal: try armed.optionalCount("removal"))
    return activity
}

/// Reads a deadline; `slots` turns the id of a widget (`true`) or stack (`false`) into its slot.
func restoreDeadline(_ reader: SnapshotReader, slots: (String, Bool) -> Int32?) throws(APIError) -> Deadline {
    func slot(_ key: String, widget: Bool) throws(APIError) -> Int32 {
        guard let slot = slots(try reader.string(key), widget) else { throw reader.fail(key) }
        return slot
    }
    let kind: DeadlineKind
    switch try reader.string("kind") {
    case "activityStart": kind = .activityStart(activity: try reader.string("activity"))
    case "activityStale": kind = .activityStale(activity: try reader.string("activity"))
    case "activityLifetime": kind = .activityLifetime(activity: try reader.string("activity"))
    case "activityDismissal": kind = .activityDismissal(activity: try reader.string("activity"))
    case "activityRemoval": kind = .activityRemoval(activity: try reader.string("activity"))
    case "expansionEnd": kind = .expansionEnd(device: try reader.string("device"))
    case "bannerEnd": kind = .bannerEnd(device: try reader.string("device"))
    case "budgetReset":
        guard let budget = BudgetKind(rawValue: try reader.string("budget")) else { throw reader.fail("budget") }
        kind = .budgetReset(app: try reader.string("app"), budget: budget)
    case "deferredDelivery": kind = .deferredDelivery(app: try reader.string("app"))
    case "widgetEntry": kind = .widgetEntry(widget: try slot("widget", widget: true))
    case "widgetReload": kind = .widgetReload(widget: try slot("widget", widget: true))
    case "widgetChargeExpiry": kind = .widgetChargeExpiry(widget: try slot("widget", widget: true))
    case "stackEvaluation": kind = .stackEvaluation(stack: try slot("stack", widget: false))
    default: throw reader.fail("kind")
    }
    return Deadline(at: try reader.instant("at"), sequence: try reader.count("sequence"), kind: kind)
}
