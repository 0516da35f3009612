/// Decoding the three activity commands and their shared parts.
extension ActivityRequest {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown([
            "type", "id", "app", "device", "attributesType", "attributes", "content", "pushType", "alert", "source",
            "start", "timestamp", "delivery",
        ])
        self.id = try reader.identifier("id")
        self.app = try reader.required("app", reader.identifier)
        self.device = try reader.identifier("device")
        self.attributesType = try reader.required("attributesType", reader.identifier)
        self.attributes = try reader.object("attributes") ?? JSONObject()
        let content = try reader.required("content", reader.nested)
        self.content = try ContentInput(content, stateRequired: true)
        self.channel = nil
        switch reader.value("pushType") {
        case nil, .null?: self.wantsPushToken = false
        case .string("token")?: self.wantsPushToken = true
        case .object?:
            let pushType = try reader.required("pushType", reader.nested)
            try pushType.rejectUnknown(["channel"])
            self.wantsPushToken = false
            self.channel = try pushType.required("channel", pushType.channelID)
        default: throw reader.fail("pushType", "expected null, \"token\" or {\"channel\": id}")
        }
        self.alert = try reader.nested("alert").map { reader throws(APIError) in try AlertInput(reader) }
        self.source = try reader.choice("source", ActivitySource.self)?.rawValue ?? "app"
        self.start = try reader.instant("start")
        self.timestamp = try reader.instant("timestamp")
        let isPush = self.source == "push"
        self.delivery = try DeliveryInput(reader.nested("delivery"), impliedSource: isPush ? .push : .api)
        if self.start != nil, self.alert == nil {
            throw reader.fail("alert", "a scheduled start (\"start\") needs an alert")
        }
    }
}

extension ActivityUpdate {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "id", "content", "alert", "timestamp", "delivery"])
        self.id = try reader.required("id", reader.identifier)
        self.delivery = try DeliveryInput(reader.nested("delivery"), impliedSource: nil)
        let content = try reader.required("content", reader.nested)
        self.content = try ContentInput(content, stateRequired: self.delivery.source == .api)
        self.alert = try reader.nested("alert").map { reader throws(APIError) in try AlertInput(reader) }
        self.timestamp = try reader.instant("timestamp")
    }
}

extension ActivityEnd {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "id", "content", "alert", "dismissalPolicy", "timestamp", "delivery"])
        self.id = try reader.required("id", reader.identifier)
        self.delivery = try DeliveryInput(reader.nested("delivery"), impliedSource: nil)
        self.content = try reader.nested("content").map { content throws(APIError) in
            try ContentInput(content, stateRequired: false)
        }
        self.alert = try reader.nested("alert").map { reader throws(APIError) in try AlertInput(reader) }
        if self.alert != nil, self.delivery.source != .push {
            throw reader.fail("alert", "ActivityKit's end takes no alert; only an end sent as a push carries one")
        }
        self.timestamp = try reader.instant("timestamp")
        self.dismissalPolicy = try Policy(reader)
    }
}

extension ActivityEnd.Policy {
    /// Reads `dismissalPolicy`: `"default"` (also when absent), `"immediate"` or `{"after": date}`.
    init(_ reader: FieldReader) throws(APIError) {
        switch reader.value("dismissalPolicy") {
        case nil, .string("default")?: self = .default
        case .string("immediate")?: self = .immediate
        case .object?:
            let policy = try reader.required("dismissalPolicy", reader.nested)
            try policy.rejectUnknown(["after"])
            self = .after(try policy.required("after", policy.instant))
        default:
            throw reader.fail("dismissalPolicy", "expected \"default\", \"immediate\" or {\"after\": date}")
        }
    }

    var json: JSONValue {
        switch self {
        case .default: "default"
        case .immediate: "immediate"
        case .after(let date): ["after": .string(date.rfc3339)]
        }
    }
}

extension ContentInput {
    init(_ reader: FieldReader, stateRequired: Bool) throws(APIError) {
        try reader.rejectUnknown(["state", "staleDate", "relevanceScore"])
        self.state = stateRequired ? try reader.required("state", reader.object) : try reader.object("state")
        self.staleDate = try reader.instant("staleDate")
        self.relevanceScore = try reader.number("relevanceScore")
    }

    var json: JSONValue {
        var object = JSONObject()
        if let state = self.state { object["state"] = .object(state) }
        if let staleDate = self.staleDate { object["staleDate"] = .string(staleDate.rfc3339) }
        if let score = self.relevanceScore { object["relevanceScore"] = .number(score) }
        return .object(object)
    }
}

extension AlertInput {
    /// Strings or `{"loc-key", "loc-args"}`.
    private static let textKeys = ["title", "subtitle", "body"]
    /// Strings.
    private static let stringKeys = ["title-loc-key", "subtitle-loc-key", "loc-key", "launch-image"]
    /// Arrays of strings.
    private static let argumentKeys = ["title-loc-args", "subtitle-loc-args", "loc-args"]

    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(Self.textKeys + Self.stringKeys + Self.argumentKeys + ["sound"])
        var fields: JSONObject = ["title": .null, "body": .null, "sound": .null]
        for key in Self.textKeys {
            if let text = try Self.text(reader, key) { fields[key] = text }
        }
        for key in Self.stringKeys {
            if let text = try reader.string(key, maxLength: 1024) { fields[key] = .string(text) }
        }
        for key in Self.argumentKeys {
            if let arguments = try Self.strings(reader, key) { fields[key] = arguments }
        }
        if let sound = try Self.sound(reader) { fields["sound"] = sound }
        self.fields = fields
    }

    /// A string, or APNs' localizable `{"loc-key": string, "loc-args": [string]}`.
    private static func text(_ reader: FieldReader, _ key: String) throws(APIError) -> JSONValue? {
        guard let value = reader.value(key) else { return nil }
        if let text = value.stringValue, text.utf8.count <= 1024 { return value }
        guard let nested = try reader.nested(key) else { return nil }
        try nested.rejectUnknown(["loc-key", "loc-args"])
        _ = try nested.required("loc-key", nested.string)
        _ = try Self.strings(nested, "loc-args")
        return value
    }

    /// An array of strings (`loc-args`).
    private static func strings(_ reader: FieldReader, _ key: String) throws(APIError) -> JSONValue? {
        guard let value = reader.value(key) else { return nil }
        guard let elements = value.arrayValue, elements.allSatisfy({ $0.stringValue != nil }) else {
            throw reader.fail(key, "expected an array of strings")
        }
        return value
    }

    /// A sound file name, `"default"`, or `{"critical": 0|1, "name": string, "volume": 0…1}`.
    private static func sound(_ reader: FieldReader) throws(APIError) -> JSONValue? {
        switch reader.value("sound") {
        case nil: return nil
        case .string(let name)? where name.utf8.count <= 256: return .string(name)
        case .object?:
            let sound = try reader.required("sound", reader.nested)
            try sound.rejectUnknown(["critical", "name", "volume"])
            if let critical = try sound.number("critical"), critical != 0, critical != 1 {
                throw sound.fail("critical", "expected 0 or 1")
            }
            _ = try sound.string("name", maxLength: 256)
            if let volume = try sound.number("volume"), !(0...1).contains(volume) {
                throw sound.fail("volume", "expected a volume from 0 to 1")
            }
            return reader.value("sound")
        default:
            throw reader.fail("sound", #"expected a sound file name, "default" or {"critical", "name", "volume"}"#)
        }
    }

    var json: JSONValue { .object(self.fields) }
}

extension DeliveryInput {
    /// Reads `delivery`; `impliedSource` is set for requests, whose `source` already says it.
    /// Broadcasts also take APNs priority 1 (delivered like 5: opportunistically, in bursts).
    static let broadcastPriorities: [Int] = [1, 5, 10]

    init(_ reader: FieldReader?, impliedSource: Source?, priorities: [Int] = [5, 10]) throws(APIError) {
        self.init(source: impliedSource ?? .api)
        guard let reader else { return }
        try reader.rejectUnknown(impliedSource == nil ? ["source", "priority", "apnsId"] : ["priority", "apnsId"])
        if let source = try reader.choice("source", Source.self) { self.source = source }
        if let priority = try reader.number("priority") {
            guard let allowed = priorities.first(where: { Double($0) == priority }) else {
                let names = priorities.map(String.init).joined(separator: ", ")
                throw reader.fail("priority", "an APNs priority here is one of \(names)")
            }
            self.priority = allowed
        }
        self.apnsId = try reader.string("apnsId", maxLength: 64)
    }

    var json: JSONValue {
        var object: JSONObject = ["source": .string(self.source.rawValue), "priority": .number(Double(self.priority))]
        if let apnsId = self.apnsId { object["apnsId"] = .string(apnsId) }
        return .object(object)
    }
}

extension ActivityUpdate {
    /// The command object again (kept by throttled and deferred deliveries).
    var json: JSONValue {
        var object: JSONObject = [
            "type": "activity.update", "id": .string(self.id), "content": self.content.json,
            "delivery": self.delivery.json,
        ]
        if let alert = self.alert { object["alert"] = alert.json }
        if let timestamp = self.timestamp { object["timestamp"] = .string(timestamp.rfc3339) }
        return .object(object)
    }
}

extension ActivityEnd {
    var json: JSONValue {
        var object: JSONObject = ["type": "activity.end", "id": .string(self.id), "delivery": self.delivery.json]
        if let content = self.content { object["content"] = content.json }
        if let alert = self.alert { object["alert"] = alert.json }
        if let timestamp = self.timestamp { object["timestamp"] = .string(timestamp.rfc3339) }
        object["dismissalPolicy"] = self.dismissalPolicy.json
        return .object(object)
    }
}
