import IsletCore
import IsletTransport

/// An APNs-style refusal: the status and Apple's `reason` (API.md "APNs-compatible ingress").
struct APNsFailure: Error, Equatable {
    var status: Int
    var reason: String
    /// For 410: when the token stopped being valid, in milliseconds since the epoch (as APNs).
    var timestamp: Int64? = nil

    static func bad(_ reason: String) -> APNsFailure { APNsFailure(status: 400, reason: reason) }
}

/// The push types Islet's device side receives, each with its topic suffix.
enum APNsPushType: String {
    case liveactivity, widgets

    var topicSuffix: String { ".push-type." + self.rawValue }
}

/// The headers of a push, checked (AP-1, AP-3, AP-4), before the token is looked up.
struct APNsHeaders: Equatable {
    var pushType: APNsPushType
    /// The bundle id named by `apns-topic` (`<bundleId>.push-type.liveactivity` or `.widgets`);
    /// for a broadcast, the one in the path.
    var bundleID: String
    var priority: Int
    var apnsID: String?
    /// `apns-expiration` in Unix seconds (`0`: deliver once, store nothing).
    var expiration: Int64?

    static let maxCollapseIDBytes = 64

    /// Reads and checks the `apns-*` headers of a token push, in the order APNs reports problems.
    static func read(_ headers: HTTPHeaders) -> Result<APNsHeaders, APNsFailure> {
        guard let pushType = headers["apns-push-type"].flatMap({ APNsPushType(rawValue: $0.lowercased()) }) else {
            return .failure(.bad("InvalidPushType"))
        }
        guard let topic = headers["apns-topic"], !topic.isEmpty else { return .failure(.bad("MissingTopic")) }
        let suffix = pushType.topicSuffix
        guard topic.hasSuffix(suffix), topic.count > suffix.count else {
            return .failure(.bad(topic.contains(".push-type.") ? "BadTopic" : "TopicDisallowed"))
        }
        return Self.readRest(headers, pushType: pushType, bundleID: String(topic.dropLast(suffix.count)), priorities: [5, 10])
    }

    /// Reads and checks the headers of a broadcast (`POST /4/broadcasts/apps/<bundleId>`): Live
    /// Activities only, no topic (the path names the app), priority 1, 5 or 10.
    static func readBroadcast(_ headers: HTTPHeaders, bundleID: String) -> Result<APNsHeaders, APNsFailure> {
        guard let name = headers["apns-push-type"] else { return .failure(.bad("MissingPushType")) }
        guard name.lowercased() == APNsPushType.liveactivity.rawValue else { return .failure(.bad("InvalidPushType")) }
        return Self.readRest(headers, pushType: .liveactivity, bundleID: bundleID, priorities: [1, 5, 10])
    }

    private static func readRest(
        _ headers: HTTPHeaders, pushType: APNsPushType, bundleID: String, priorities: Set<Int>
    ) -> Result<APNsHeaders, APNsFailure> {
        var priority = 10
        if let text = headers["apns-priority"] {
            // Apple's values as Apple writes them: "+10" or "010" are not a priority.
            guard let value = priorities.first(where: { String($0) == text }) else { return .failure(.bad("BadPriority")) }
            priority = value
        }
        if let collapse = headers["apns-collapse-id"], collapse.utf8.count > Self.maxCollapseIDBytes {
            return .failure(.bad("BadCollapseId"))
        }
        var expiration: Int64?
        if let text = headers["apns-expiration"] {
            guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let seconds = Int64(text),
                Instant(unixSeconds: Double(seconds)) != nil
            else {
                return .failure(.bad("BadExpirationDate"))
            }
            expiration = seconds
        }
        var apnsID: String?
        if let id = headers["apns-id"] {
            guard isCanonicalUUID(id) else { return .failure(.bad("BadMessageId")) }
            apnsID = id.lowercased()
        }
        return .success(
            APNsHeaders(
                pushType: pushType, bundleID: bundleID, priority: priority, apnsID: apnsID, expiration: expiration))
    }
}

/// What only the device judges about a push that APNs accepts (AP-8): the device ignores the
/// push, and APNs has already answered 200. `--apns-strict` answers `strictReason` instead.
struct DeviceProblem: Error, Equatable {
    /// The 400 reason Islet gave before AP-8.
    var strictReason: String
    /// Islet's reason in the deliveries (`timestamp_missing`, `event_invalid`, …).
    var reason: String
    /// What was wrong, in words.
    var detail: String
    /// The `event` the push named, when it named one as a string.
    var event: String?

    static func payload(_ detail: String, event: String?) -> DeviceProblem {
        DeviceProblem(strictReason: "BadPayload", reason: "payload_invalid", detail: detail, event: event)
    }
}

/// Why a payload is not delivered: APNs refuses it (not JSON), or the device ignores it.
enum PayloadProblem: Error {
    case apns(APNsFailure)
    case device(DeviceProblem)
}

/// The body's JSON object and its `aps` object. Text that is not JSON is APNs' `BadPayload`;
/// JSON that Islet's input parser refuses only for repeated keys or depth is the device's
/// problem, as is JSON without an `aps` object; its delivery record names `event` when the push
/// type says it (a widgets push), else none.
private func readAPS(_ body: [UInt8], event: String?) -> Result<JSONObject, PayloadProblem> {
    let root: JSONValue
    do throws(APIError) {
        root = try JSONParser(maxDepth: 32).parse(body)
    } catch {
        guard (try? JSONParser(maxDepth: JSONParser.storedDepth, duplicateKeys: .keepLast).parse(body)) != nil else {
            return .failure(.apns(.bad("BadPayload")))
        }
        return .failure(.device(.payload(error.message, event: event)))
    }
    guard case .object(let aps)? = root["aps"] else {
        return .failure(.device(.payload("the payload has no aps object", event: event)))
    }
    return .success(aps)
}

/// The `aps` dictionary of a WidgetKit push: `{"aps": {"content-changed": true}}`.
struct APNsWidgetPayload {
    let contentChanged: Bool

    static func read(_ body: [UInt8]) -> Result<APNsWidgetPayload, PayloadProblem> {
        readAPS(body, event: "widgets").flatMap { aps in
            switch aps["content-changed"] {
            case nil: return .success(APNsWidgetPayload(contentChanged: false))
            case .bool(let changed)?: return .success(APNsWidgetPayload(contentChanged: changed))
            default: return .failure(.device(.payload("aps.content-changed is not a boolean", event: "widgets")))
            }
        }
    }

    /// The `widget.push` command for the app's widgets.
    func command(app: String, headers: APNsHeaders, apnsID: String) -> JSONValue {
        [
            "type": "widget.push", "app": .string(app), "contentChanged": .bool(self.contentChanged),
            "delivery": ["priority": .number(Double(headers.priority)), "apnsId": .string(apnsID)],
        ]
    }
}

/// The `aps` dictionary of a Live Activity push, checked (AP-5) and mapped to an engine command
/// (docs/engine.md "Mapping for the APNs-style ingress").
struct APNsPayload {
    enum Event: String { case start, update, end }

    let event: Event
    let aps: JSONObject

    /// Reads a body: a JSON object with an `aps` object carrying `timestamp` and `event`.
    static func read(_ body: [UInt8]) -> Result<APNsPayload, PayloadProblem> {
        readAPS(body, event: nil).flatMap { aps in
            let named = aps["event"]?.stringValue
            func problem(_ strict: String, _ reason: String, _ detail: String) -> Result<APNsPayload, PayloadProblem> {
                .failure(.device(DeviceProblem(strictReason: strict, reason: reason, detail: detail, event: named)))
            }
            guard let timestamp = aps["timestamp"] else {
                return problem("MissingTimestamp", "timestamp_missing", "aps.timestamp is missing")
            }
            guard timestamp.numberValue.flatMap({ Instant(unixSeconds: $0) }) != nil else {
                return problem("BadTimestamp", "timestamp_invalid", "aps.timestamp is not a number of Unix seconds")
            }
            guard let event = named.flatMap(Event.init(rawValue:)) else {
                return problem("BadEvent", "event_invalid", "aps.event is not start, update or end")
            }
            let payload = APNsPayload(event: event, aps: aps)
            if let typeProblem = payload.typeProblem() { return .failure(.device(typeProblem)) }
            return .success(payload)
        }
    }

    /// The first key of a wrong type or a missing required key.
    private func typeProblem() -> DeviceProblem? {
        let event = self.event.rawValue
        for key in ["stale-date", "dismissal-date"] {
            if let value = self.aps[key], value.numberValue.flatMap({ Instant(unixSeconds: $0) }) == nil {
                return .payload("aps.\(key) is not a number of Unix seconds", event: event)
            }
        }
        if let score = self.aps["relevance-score"], score.numberValue == nil {
            return .payload("aps.relevance-score is not a number", event: event)
        }
        if let state = self.aps["content-state"], state.objectValue == nil {
            return DeviceProblem(
                strictReason: "BadPayload", reason: "content_state_invalid",
                detail: "aps.content-state is not an object", event: event)
        }
        if let alert = self.aps["alert"], alert.objectValue == nil && alert.stringValue == nil {
            return .payload("aps.alert is neither an object nor a string", event: event)
        }
        guard self.event == .start else { return nil }
        guard self.aps["attributes-type"]?.stringValue != nil, self.aps["attributes"]?.objectValue != nil,
            self.aps["content-state"] != nil, self.aps["alert"] != nil
        else {
            return DeviceProblem(
                strictReason: "MissingStartField", reason: "start_field_missing",
                detail: "a start needs attributes-type, attributes, content-state and alert", event: event)
        }
        if let input = self.aps["input-push-token"], input != .number(1) {
            return .payload("aps.input-push-token is not 1", event: event)
        }
        if let channel = self.aps["input-push-channel"] {
            // One push type per activity: a token or a channel.
            guard channel.stringValue != nil, self.aps["input-push-token"] == nil else {
                return .payload("aps.input-push-channel is not a string, or comes with input-push-token", event: event)
            }
        }
        return nil
    }

    /// The `channel.broadcast` command for this push on `channel` (an update or an end).
    func broadcastCommand(channel: String, headers: APNsHeaders, apnsID: String) -> JSONValue {
        var command: JSONObject = [
            "type": "channel.broadcast", "app": .string(headers.bundleID), "channel": .string(channel),
            "event": .string(self.event.rawValue),
            "delivery": ["priority": .number(Double(headers.priority)), "apnsId": .string(apnsID)],
        ]
        command["timestamp"] = self.date("timestamp")
        if let alert = self.alert { command["alert"] = alert }
        if self.event == .update || self.hasContent { command["content"] = self.content }
        if self.event == .end, let date = self.date("dismissal-date") { command["dismissalPolicy"] = ["after": date] }
        if let seconds = headers.expiration, let instant = Instant(unixSeconds: Double(seconds)) {
            command["expiration"] = .string(instant.rfc3339)
        }
        return .object(command)
    }

    /// The engine command for this push to `resolution`'s token.
    func command(for resolution: TokenResolution, headers: APNsHeaders, apnsID: String) -> JSONValue {
        var command = JSONObject()
        var delivery: JSONObject = ["priority": .number(Double(headers.priority)), "apnsId": .string(apnsID)]
        command["timestamp"] = self.date("timestamp")
        if let alert = self.alert { command["alert"] = alert }
        switch self.event {
        case .start:
            command["type"] = "activity.request"
            command["source"] = "push"
            command["app"] = .string(resolution.app)
            // LA-15: a device's token starts on that device; the app's revision-1 token on the
            // simulation's default device.
            if let device = resolution.device { command["device"] = .string(device) }
            command["attributesType"] = self.aps["attributes-type"]
            command["attributes"] = self.aps["attributes"]
            command["content"] = self.content
            if self.aps["input-push-token"] != nil { command["pushType"] = "token" }
            if let channel = self.aps["input-push-channel"] { command["pushType"] = ["channel": channel] }
        case .update, .end:
            command["type"] = self.event == .update ? "activity.update" : "activity.end"
            command["id"] = resolution.activity.map { .string($0) }
            delivery["source"] = "push"
            if self.event == .update || self.hasContent { command["content"] = self.content }
            if self.event == .end, let date = self.date("dismissal-date") {
                command["dismissalPolicy"] = ["after": date]
            }
        }
        command["delivery"] = .object(delivery)
        return .object(command)
    }

    private var hasContent: Bool {
        self.aps["content-state"] != nil || self.aps["stale-date"] != nil || self.aps["relevance-score"] != nil
    }

    private var content: JSONValue {
        var content = JSONObject()
        content["state"] = self.aps["content-state"]
        content["staleDate"] = self.date("stale-date")
        content["relevanceScore"] = self.aps["relevance-score"]
        return .object(content)
    }

    /// An `alert`: Apple's object (title, body, sound), or a string taken as the body.
    private var alert: JSONValue? {
        switch self.aps["alert"] {
        case .string(let body)?: return ["body": .string(body)]
        case .object(let object)?: return .object(object)
        default: return nil
        }
    }

    /// A Unix-seconds key as an RFC 3339 date.
    private func date(_ key: String) -> JSONValue? {
        guard let seconds = self.aps[key]?.numberValue, let instant = Instant(unixSeconds: seconds) else { return nil }
        return .string(instant.rfc3339)
    }
}

/// `8-4-4-4-12` hexadecimal digits, as APNs requires of `apns-id`.
func isCanonicalUUID(_ text: String) -> Bool {
    let groups = text.split(separator: "-", omittingEmptySubsequences: false)
    guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return false }
    return groups.allSatisfy { $0.utf8.allSatisfy(isASCIIHexDigit) }
}

/// A device token in a path: hexadecimal, of an even length between 2 and 200.
func isHexToken(_ text: String) -> Bool {
    let bytes = text.utf8
    return !bytes.isEmpty && bytes.count <= 200 && bytes.count % 2 == 0 && bytes.allSatisfy(isASCIIHexDigit)
}

/// 0-9, a-f, A-F: ASCII only (`Character.isHexDigit` also takes their fullwidth forms, which no
/// APNs token or `apns-id` holds).
func isASCIIHexDigit(_ byte: UInt8) -> Bool {
    (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
}

/// A random version-4 UUID in lowercase, for pushes that came without `apns-id`.
func randomUUID() -> String {
    var generator = SystemRandomNumberGenerator()
    var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    bytes[6] = (bytes[6] & 0x0F) | 0x40
    bytes[8] = (bytes[8] & 0x3F) | 0x80
    let hex = bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
    let text = hex.joined()
    let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
        String(
            text[
                text.index(
                    text.startIndex, offsetBy: range.lowerBound)..<text.index(
                        text.startIndex, offsetBy: range.upperBound)])
    }
    return parts.joined(separator: "-")
}

extension APNsFailure {
    /// The APNs-style reply: the status, `{"reason"}` (plus `timestamp` for 410), and the request's
    /// id under `idHeader` (`apns-id`, or `apns-request-id` for channel management).
    func httpResponse(idHeader: String, id: String) -> HTTPResponse {
        var body: JSONObject = ["reason": .string(self.reason)]
        if let timestamp = self.timestamp { body["timestamp"] = .number(Double(timestamp)) }
        var response = HTTPResponse.json(.object(body), status: self.status)
        response.headers.add(name: idHeader, value: id)
        return response
    }
}
