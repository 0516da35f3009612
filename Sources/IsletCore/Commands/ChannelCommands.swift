/// `channel.create`: APNs channel management creates a broadcast channel for an app.
public struct ChannelCreate: Sendable, Hashable {
    public var app: String
    /// `0` (no message stored) or `1` (most recent message stored).
    public var storagePolicy: Int
}

/// `channel.delete`: the channel stops existing; its id is never handed out again.
public struct ChannelDelete: Sendable, Hashable {
    public var app: String
    public var id: String
}

/// `channel.broadcast`: one APNs broadcast, applied by every activity subscribed to the channel.
public struct ChannelBroadcast: Sendable, Hashable {
    public enum Event: String, Sendable, Hashable, CaseIterable {
        case update, end
    }

    public var app: String
    public var channel: String
    public var event: Event
    /// Required for `update`; optional for `end`.
    public var content: ContentInput?
    public var alert: AlertInput?
    public var timestamp: Instant?
    public var dismissalPolicy: ActivityEnd.Policy
    /// `apns-expiration`: under storage policy 1, storage ends then (at most 8 h); `nil` = 8 h.
    public var expiration: Instant?
    public var delivery: DeliveryInput
}

/// `widget.push`: a WidgetKit push (`apns-push-type: widgets`) reaches the device.
public struct WidgetPush: Sendable, Hashable {
    public var app: String
    /// `aps.content-changed`: without it the device does nothing.
    public var contentChanged: Bool
    public var delivery: DeliveryInput
}

extension ChannelCreate {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "app", "storagePolicy"])
        self.app = try reader.required("app", reader.identifier)
        let policy = try reader.number("storagePolicy") ?? 0
        guard policy == 0 || policy == 1 else {
            throw reader.fail("storagePolicy", "a message storage policy is 0 (none) or 1 (most recent message)")
        }
        self.storagePolicy = Int(policy)
    }
}

extension ChannelDelete {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "app", "id"])
        self.app = try reader.required("app", reader.identifier)
        self.id = try reader.required("id", reader.channelID)
    }
}

extension ChannelBroadcast {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown([
            "type", "app", "channel", "event", "content", "alert", "timestamp", "dismissalPolicy", "expiration",
            "delivery",
        ])
        self.app = try reader.required("app", reader.identifier)
        self.channel = try reader.required("channel", reader.channelID)
        self.event = try reader.choice("event", Event.self) ?? .update
        self.delivery = try DeliveryInput(
            reader.nested("delivery"), impliedSource: .push, priorities: DeliveryInput.broadcastPriorities)
        self.content = try reader.nested("content").map { content throws(APIError) in
            try ContentInput(content, stateRequired: false)
        }
        if self.event == .update, self.content == nil { throw reader.fail("content", "an update carries content") }
        self.alert = try reader.nested("alert").map { reader throws(APIError) in try AlertInput(reader) }
        self.timestamp = try reader.instant("timestamp")
        self.expiration = try reader.instant("expiration")
        self.dismissalPolicy = try ActivityEnd.Policy(reader)
        if self.event == .update, reader.value("dismissalPolicy") != nil {
            throw reader.fail("dismissalPolicy", "a dismissal policy goes with an end")
        }
    }

    /// `delivery` without `source`: a broadcast always comes from APNs.
    private var deliveryJSON: JSONValue {
        var object: JSONObject = ["priority": .number(Double(self.delivery.priority))]
        if let apnsId = self.delivery.apnsId { object["apnsId"] = .string(apnsId) }
        return .object(object)
    }

    /// The command object again (stored under policy 1, held while throttled or deferred).
    var json: JSONValue {
        var object: JSONObject = [
            "type": "channel.broadcast", "app": .string(self.app), "channel": .string(self.channel),
            "event": .string(self.event.rawValue), "delivery": self.deliveryJSON,
        ]
        if let content = self.content { object["content"] = content.json }
        if let alert = self.alert { object["alert"] = alert.json }
        if let timestamp = self.timestamp { object["timestamp"] = .string(timestamp.rfc3339) }
        if let expiration = self.expiration { object["expiration"] = .string(expiration.rfc3339) }
        if self.event == .end { object["dismissalPolicy"] = self.dismissalPolicy.json }
        return .object(object)
    }
}

extension WidgetPush {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "app", "contentChanged", "delivery"])
        self.app = try reader.required("app", reader.identifier)
        self.contentChanged = try reader.bool("contentChanged") ?? true
        self.delivery = try DeliveryInput(reader.nested("delivery"), impliedSource: .push)
    }
}

extension FieldReader {
    /// A channel id: 1-128 characters of base64 (`A-Z a-z 0-9 + / = - _`).
    func channelID(_ key: String) throws(APIError) -> String? {
        guard let text = try self.string(key, maxLength: 128) else { return nil }
        guard isChannelID(text) else { throw self.fail(key, "a channel id is base64 text, got \"\(text)\"") }
        return text
    }
}

/// Base64 (standard or URL-safe alphabet, with padding), 1-128 characters.
public func isChannelID(_ text: String) -> Bool {
    let bytes = text.utf8
    return !bytes.isEmpty && bytes.count <= 128
        && bytes.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == 0x2B || byte == 0x2F || byte == 0x3D || byte == 0x2D || byte == 0x5F
        }
}
