/// The queues of held pushes (LA-11) and what keeps them bounded: AP-9's coalescing of
/// throttled pushes, and a cap per queue that lets go of the oldest update.
///
/// Ends are never let go of: a throttled update that finds an end waiting for its activity (or
/// channel) is dropped instead (the device would ignore it after the end anyway, LA-6), and a
/// full queue drops an end only when a later end for the same target waits too. So a queue
/// grows past its cap only by ends, at most one per activity or channel of the app.
extension Engine {
    /// AP-9: holds a priority-10 push over budget. Only the newest per activity or channel
    /// waits; the one it replaces is recorded as ignored (`coalesced`). Past the cap the oldest
    /// waiting update is dropped (`queue_full`). Returns the command result.
    /// - Complexity: O(n) in the app's throttled pushes.
    mutating func throttle(_ command: JSONValue, app: String, _ record: HeldRecord) -> JSONValue {
        guard var queue = self.apps[app]?.throttled else { return ["applied": false, "reason": "throttled"] }
        let target = HeldTarget(command)
        var dropped: (held: PendingDelivery, reason: String)?
        if let index = queue.firstIndex(where: { $0.target.key == target.key }) {
            // The newest waits (AP-9): an end over an update, else the later `timestamp` (LA-6
            // would refuse the older one once the newer is applied); of equal or absent
            // timestamps, the later arrival.
            let waiting = queue[index]
            let older = !target.isEnd && (waiting.target.isEnd || Self.timestamp(command) < Self.timestamp(waiting.command))
            guard !older else {
                return self.letGo(record, app: app, reason: "coalesced", from: .throttled)
            }
            dropped = (queue.remove(at: index), "coalesced")
        } else if queue.count >= self.bounds.throttledPerApp {
            if let index = Self.evictable(queue, arriving: target) {
                dropped = (queue.remove(at: index), "queue_full")
            } else if !target.isEnd {
                return self.letGo(record, app: app, reason: "queue_full", from: .throttled)
            }
        }
        queue.append(PendingDelivery(command: command, receivedAt: self.now, deadline: 0))
        self.apps[app]?.throttled = queue
        self.changes.apps.insert(app)
        if let dropped { self.recordDropped(dropped.held, app: app, reason: dropped.reason, from: .throttled) }
        self.recordHeld(record, app: app, outcome: "throttled", reason: "budget_exhausted")
        return ["applied": false, "reason": "throttled"]
    }

    /// A held update's `timestamp` (the push's), or the earliest instant when it has none.
    private static func timestamp(_ command: JSONValue) -> Instant {
        command["timestamp"]?.stringValue.flatMap { try? Instant(rfc3339: $0) } ?? .earliestWritable
    }

    /// Holds a low-priority push for `lowPriorityDelaySeconds` (LA-11). Past the cap the oldest
    /// waiting update is dropped (`queue_full`). Returns the command result.
    /// - Complexity: O(n) in the app's deferred pushes.
    mutating func deferPush(_ command: JSONValue, app: String, _ record: HeldRecord) -> JSONValue {
        guard var queue = self.apps[app]?.deferred else { return ["applied": false, "reason": "deferred"] }
        var dropped: PendingDelivery?
        if queue.count >= self.bounds.deferredPerApp {
            let target = HeldTarget(command)
            if let index = Self.evictable(queue, arriving: target) {
                dropped = queue.remove(at: index)
            } else if !target.isEnd {
                return self.letGo(record, app: app, reason: "queue_full", from: .deferred)
            }
        }
        let at = self.now.adding(seconds: self.configuration.lowPriorityDelaySeconds)
        let sequence = self.scheduler.schedule(.deferredDelivery(app: app), at: at)
        queue.append(PendingDelivery(command: command, receivedAt: self.now, deadline: sequence))
        self.apps[app]?.deferred = queue
        self.changes.apps.insert(app)
        if let dropped { self.recordDropped(dropped, app: app, reason: "queue_full", from: .deferred) }
        self.recordHeld(record, app: app, outcome: "deferred", reason: "low_priority")
        return ["applied": false, "reason": "deferred", "deliverAt": .string(at.rfc3339)]
    }

    /// The oldest held push a full queue may let go of: an update, or an end that a later end
    /// for the same target (waiting or arriving) repeats; `nil` when every one is an end that
    /// must stay.
    /// - Complexity: O(n).
    static func evictable(_ queue: [PendingDelivery], arriving: HeldTarget) -> Int? {
        var endsAfter: Set<String> = arriving.isEnd ? [arriving.key] : []
        var oldest: Int?
        for index in queue.indices.reversed() {
            let target = queue[index].target
            if !target.isEnd || endsAfter.contains(target.key) { oldest = index }
            if target.isEnd { endsAfter.insert(target.key) }
        }
        return oldest
    }

    /// The arriving push is not held: recorded as ignored with `reason`, which is its result.
    private mutating func letGo(_ record: HeldRecord, app: String, reason: String, from queue: HeldQueue) -> JSONValue {
        self.countDiscard(reason, from: queue)
        self.recordHeld(record, app: app, outcome: "ignored", reason: reason)
        return ["applied": false, "reason": .string(reason)]
    }

    /// A push that was waiting is let go of: recorded as ignored with `reason`.
    private mutating func recordDropped(_ held: PendingDelivery, app: String, reason: String, from queue: HeldQueue) {
        self.countDiscard(reason, from: queue)
        guard let record = HeldRecord(held.command) else { return }
        self.recordHeld(record, app: app, outcome: "ignored", reason: reason)
    }

    private mutating func countDiscard(_ reason: String, from queue: HeldQueue) {
        switch (reason, queue) {
        case ("coalesced", _): self.changes.discards.coalescedPushes += 1
        case (_, .throttled): self.changes.discards.droppedThrottled += 1
        case (_, .deferred): self.changes.discards.droppedDeferred += 1
        }
    }

    private mutating func recordHeld(_ record: HeldRecord, app: String, outcome: String, reason: String) {
        self.recordDelivery(
            app, event: record.event, activity: record.activity, record.delivery, outcome: outcome, reason: reason,
            channel: record.channel)
    }
}

/// What a held push is for, read from its command: its activity or channel, and whether it
/// ends it. Coalescing (AP-9) and the queue caps compare these.
struct HeldTarget: Sendable, Hashable {
    /// `activity:<id>` or `channel:<id>`.
    var key: String
    var isEnd: Bool

    init(_ command: JSONValue) {
        let type = command["type"]?.stringValue
        if type == "channel.broadcast" {
            self.key = "channel:" + (command["channel"]?.stringValue ?? "")
            self.isEnd = command["event"]?.stringValue == "end"
        } else {
            self.key = "activity:" + (command["id"]?.stringValue ?? "")
            self.isEnd = type == "activity.end"
        }
    }
}

/// How a held push appears in the app's `deliveries`.
struct HeldRecord: Sendable {
    var event: String
    var activity: String?
    var channel: String?
    var delivery: DeliveryInput

    init(event: String, activity: String?, channel: String?, delivery: DeliveryInput) {
        self.event = event
        self.activity = activity
        self.channel = channel
        self.delivery = delivery
    }

    /// The record of a held command (validated when it was received).
    init?(_ command: JSONValue) {
        switch try? Command(json: command) {
        case .activityUpdate(let update)?:
            self.init(event: "update", activity: update.id, channel: nil, delivery: update.delivery)
        case .activityEnd(let end)?:
            self.init(event: "end", activity: end.id, channel: nil, delivery: end.delivery)
        case .channelBroadcast(let broadcast)?:
            self.init(
                event: broadcast.event.rawValue, activity: nil, channel: broadcast.channel,
                delivery: broadcast.delivery)
        default:
            return nil
        }
    }
}

/// Which queue a held push waits in.
enum HeldQueue {
    case throttled
    case deferred
}
