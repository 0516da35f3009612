internal import HashTreeCollections

/// Broadcast channels (iOS 18) and WidgetKit pushes: the device side of APNs' broadcast and
/// widgets push types (reference §1.10, §2.1, §2.5 rule 9, §4.1).
///
/// A broadcast reaches the device once, however many of its activities subscribe: a
/// priority-10 broadcast draws the app's push budget once (LA-11) and is throttled as one
/// delivery (only the newest per channel waits, AP-9); priorities 5 and 1 wait
/// `lowPriorityDelaySeconds`. Each subscriber then applies it by the rules of a token push (LA-6
/// timestamps, ended activities ignore it, LA-2 size), and the app's `deliveries` gets one
/// record for the broadcast with the subscriber counts.
extension Engine {
    mutating func createChannel(_ create: ChannelCreate) throws(APIError) -> JSONValue {
        guard var app = self.apps[create.app] else { throw self.noApp(create.app) }
        guard app.channels.count < EngineLimits.channelsPerApp else {
            var error = APIError(
                .limitExceeded, "an app has at most \(EngineLimits.channelsPerApp) channels (TooManyChannels)",
                field: "/app")
            error.limit = "channels"
            throw error
        }
        let id = self.newChannelID(app: app.id)
        app.channels[id] = Channel(
            id: id, app: app.id, storagePolicy: Channel.StoragePolicy(rawValue: create.storagePolicy) ?? .noMessageStored,
            createdAt: self.now)
        self.apps[app.id] = app
        self.channelApps[id] = app.id
        self.noteChange(ofChannel: id, app: app.id)
        return ["id": .string(id)]
    }

    mutating func deleteChannel(_ delete: ChannelDelete) throws(APIError) -> JSONValue {
        guard var app = self.apps[delete.app] else { throw self.noApp(delete.app) }
        guard app.channels.removeValue(forKey: delete.id) != nil else {
            throw APIError(.notFound, "no channel \"\(delete.id)\" in \(delete.app)", field: "/id")
        }
        self.apps[app.id] = app
        self.channelApps[delete.id] = nil
        self.noteChange(ofChannel: delete.id, app: app.id)
        return [:]
    }

    /// `channel.broadcast`: counted and stored on the channel at once; applied by the
    /// subscribers now, or later when held by priority or budget.
    mutating func receiveBroadcast(_ broadcast: ChannelBroadcast) throws(APIError) -> JSONValue {
        guard var app = self.apps[broadcast.app] else { throw self.noApp(broadcast.app) }
        guard var channel = app.channels[broadcast.channel] else {
            throw APIError(.notFound, "no channel \"\(broadcast.channel)\" in \(broadcast.app)", field: "/channel")
        }
        let command = broadcast.json
        channel.broadcasts += 1
        channel.last = LastBroadcast(
            command: command, event: broadcast.event.rawValue, at: self.now, priority: broadcast.delivery.priority,
            apnsId: broadcast.delivery.apnsId, storedUntil: self.storedUntil(channel, broadcast))
        app.channels[channel.id] = channel
        self.apps[app.id] = app
        self.noteChange(ofChannel: channel.id, app: app.id)
        let delivery = broadcast.delivery
        let record = HeldRecord(event: broadcast.event.rawValue, activity: nil, channel: channel.id, delivery: delivery)
        if delivery.priority != 10, self.configuration.lowPriorityDelaySeconds > 0 {
            return self.deferPush(command, app: app.id, record)
        }
        if delivery.priority == 10, !self.charge(app.id, .push) {
            // AP-9: a newer broadcast on the channel replaces an older one waiting.
            return self.throttle(command, app: app.id, record)
        }
        return self.deliverBroadcast(broadcast)
    }

    /// The device applies a broadcast to every subscriber, in id order.
    mutating func deliverBroadcast(_ broadcast: ChannelBroadcast) -> JSONValue {
        let subscribers = self.channelSubscribers[broadcast.channel].map { $0.sorted() } ?? []
        var counts: [String: Int] = [:]
        for id in subscribers {
            counts[self.apply(broadcast, to: id).outcome, default: 0] += 1
        }
        let applied = counts["applied"] ?? 0
        let reason: String? = subscribers.isEmpty ? "no_subscribers" : (applied == 0 ? "no_subscriber_applied" : nil)
        self.recordDelivery(
            broadcast.app, event: broadcast.event.rawValue, activity: nil, broadcast.delivery,
            outcome: applied > 0 ? "applied" : "ignored", reason: reason, channel: broadcast.channel,
            subscribers: subscribers.count, applied: applied)
        return [
            "applied": .bool(applied > 0), "reason": reason.map(JSONValue.string) ?? .null,
            "subscribers": .number(Double(subscribers.count)), "appliedTo": .number(Double(applied)),
        ]
    }

    /// One subscriber applies a broadcast as it applies a token push (without a record of its own).
    private mutating func apply(_ broadcast: ChannelBroadcast, to id: String) -> DeliveryOutcome {
        let outcome: DeliveryOutcome?
        switch broadcast.event {
        case .update:
            let update = ActivityUpdate(
                id: id, content: broadcast.content ?? ContentInput(), alert: broadcast.alert,
                timestamp: broadcast.timestamp, delivery: broadcast.delivery)
            outcome = try? self.deliverUpdate(update, recording: false)
        case .end:
            let end = ActivityEnd(
                id: id, content: broadcast.content, alert: broadcast.alert, dismissalPolicy: broadcast.dismissalPolicy,
                timestamp: broadcast.timestamp, delivery: broadcast.delivery)
            outcome = try? self.deliverEnd(end, recording: false)
        }
        return outcome ?? .rejected("attributesTooLarge")
    }

    /// A new subscriber of a policy-1 channel receives the stored broadcast, if one is still kept.
    mutating func deliverStoredBroadcast(to id: String) {
        guard let activity = self.activities[id], let channelID = activity.channel,
            let last = self.apps[activity.app]?.channels[channelID]?.last,
            let until = last.storedUntil, until > self.now,
            case .channelBroadcast(let broadcast)? = try? Command(json: last.command)
        else { return }
        let outcome = self.apply(broadcast, to: id)
        self.recordDelivery(
            activity.app, event: broadcast.event.rawValue, activity: id, broadcast.delivery,
            outcome: outcome.outcome, reason: outcome.reason ?? "stored_message", channel: channelID)
    }

    /// Policy 1 keeps a broadcast for 8 h, or until `apns-expiration` when that is sooner (a
    /// past expiration, such as APNs' `0`, keeps nothing).
    private func storedUntil(_ channel: Channel, _ broadcast: ChannelBroadcast) -> Instant? {
        guard channel.storagePolicy == .mostRecentMessageStored else { return nil }
        let limit = self.now.adding(seconds: Channel.maxStorageSeconds)
        let until = broadcast.expiration.map { min($0, limit) } ?? limit
        return until > self.now ? until : nil
    }

    /// `widget.push`: a WidgetKit push asks for a reload of every widget of the app on the
    /// device (like `reloadAllTimelines()`), each charged to its own budget (WK-4, WK-5).
    mutating func receiveWidgetPush(_ push: WidgetPush) throws(APIError) -> JSONValue {
        guard let app = self.apps[push.app] else { throw self.noApp(push.app) }
        func refuse(_ reason: String) -> JSONValue {
            self.recordDelivery(app.id, event: "widgets", activity: nil, push.delivery, outcome: "ignored", reason: reason)
            return ["applied": false, "reason": .string(reason), "widgets": []]
        }
        guard push.contentChanged else { return refuse("content_changed_missing") }
        let ids = app.widgets.sorted()
        guard !ids.isEmpty else { return refuse("no_widgets") }
        var widgets: [JSONValue] = []
        var waiting = false
        var refused = false
        for id in ids {
            let at = self.requestReload(id, reason: "push", notBefore: self.now)
            if let at { waiting = waiting || at > self.now } else { refused = true }
            widgets.append(["id": .string(id), "scheduledAt": date(at)])
        }
        let reason: String? = refused ? "budget_zero" : (waiting ? "budget_spacing" : nil)
        self.recordDelivery(
            app.id, event: "widgets", activity: nil, push.delivery, outcome: reason == nil ? "applied" : "deferred",
            reason: reason)
        return ["applied": .bool(reason == nil), "reason": reason.map(JSONValue.string) ?? .null, "widgets": .array(widgets)]
    }

    /// A channel id as APNs hands them out: 16 bytes in base64, derived from a counter (so replay
    /// gives the same id, and a deleted id never comes back).
    private mutating func newChannelID(app: String) -> String {
        while true {
            self.counters.channelNumber += 1
            let seed = stableHash("channel:" + app) ^ self.counters.channelNumber
                ^ (self.counters.tokenSalt &* 0x9E37_79B9_7F4A_7C15)
            let id = base64(Array(hexToken(seed: seed).utf8.prefix(32)).hexBytes)
            if self.channelApps[id] == nil { return id }
        }
    }

    /// The app's entry and that one channel in it are rebuilt at the end of the revision.
    mutating func noteChange(ofChannel channel: String, app: String) {
        self.changes.apps.insert(app)
        self.changes.channels[app, default: []].insert(channel)
    }

    private func noApp(_ id: String) -> APIError {
        APIError(.notFound, "no app \"\(id)\"; create it with app.upsert", field: "/app")
    }

    /// Which app owns a channel id (for APNs routing across simulations).
    public func channelOwner(_ id: String) -> String? { self.channelApps[id] }
}

extension Array where Element == UInt8 {
    /// ASCII hex digits (pairs) as bytes.
    fileprivate var hexBytes: [UInt8] {
        func nibble(_ digit: UInt8) -> UInt8 { digit <= 0x39 ? digit - 0x30 : digit - 0x61 + 10 }
        return stride(from: 0, to: self.count - 1, by: 2).map { nibble(self[$0]) << 4 | nibble(self[$0 + 1]) }
    }
}

/// Standard base64 with padding.
func base64(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count + 2) / 3 * 4)
    var index = 0
    while index < bytes.count {
        let chunk = bytes[index..<Swift.min(index + 3, bytes.count)]
        var value: UInt32 = 0
        for (offset, byte) in chunk.enumerated() { value |= UInt32(byte) << (16 - 8 * UInt32(offset)) }
        for position in 0..<4 {
            out.append(position <= chunk.count ? alphabet[Int((value >> (18 - 6 * UInt32(position))) & 0x3F)] : 0x3D)
        }
        index += 3
    }
    return String(decoding: out, as: UTF8.self)
}
