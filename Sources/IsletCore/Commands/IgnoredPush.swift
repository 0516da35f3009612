/// `push.ignore`: a push that APNs accepted and the device ignored (AP-8).
///
/// APNs checks transport, headers, topic, token, size and that the payload is JSON; everything
/// else (a missing timestamp, an unknown event, a content state that does not decode) only the
/// device judges, after APNs has answered 200. The ingress logs such a push as this command, so
/// the delivery record it leaves replays from the log like every other change.
public struct IgnoredPush: Sendable, Hashable {
    public var app: String
    /// The activity whose token the push went to; `nil` for a push-to-start or app token.
    public var activity: String?
    /// The broadcast channel, for a broadcast.
    public var channel: String?
    /// The `event` the push named, as it named it (`nil` when it named none).
    public var event: String?
    /// Islet's reason (`timestamp_missing`, `event_invalid`, …; API.md "APNs-compatible ingress").
    public var reason: String
    /// What was wrong, in words, for the person reading the deliveries.
    public var detail: String?
    public var delivery: DeliveryInput
}

extension IgnoredPush {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "app", "activity", "channel", "event", "reason", "detail", "delivery"])
        self.app = try reader.required("app", reader.identifier)
        self.activity = try reader.identifier("activity")
        self.channel = try reader.channelID("channel")
        self.event = try reader.string("event", maxLength: 64)
        self.reason = try reader.required("reason", reader.identifier)
        self.detail = try reader.string("detail", maxLength: 1024)
        self.delivery = try DeliveryInput(
            reader.nested("delivery"), impliedSource: .push, priorities: DeliveryInput.broadcastPriorities)
    }
}
