/// Keeps the demo world alive: coffee orders progress, a game's score changes, a timer counts
/// down, a ride arrives, a workout runs, and the demo answers its widgets' reloads (WK-6: it is
/// their timeline provider).
///
/// Every activity follows a cycle fixed to absolute time (a coffee order every 20 minutes, a
/// game every 90…), so the driver needs no memory of its own: given the engine and the current
/// simulated instant it compares what the world shows with what the cycle says and returns the
/// commands that close the gap. Calling it late (after a restart, a paused clock) catches up at
/// once. Call it as often as you like; it returns nothing when all is in place.
public enum DemoDriver {
    /// How often the server should call the driver, in wall seconds.
    public static let intervalSeconds = 5.0

    /// The commands for `now` (a simulated instant: `engine.simulatedInstant(atWall:)`), as
    /// small independent batches: one failing (say, an operator used up an activity limit)
    /// does not hold back the others. Empty when the demo world is not loaded.
    public static func batches(for engine: Engine, at now: Instant) -> [[JSONValue]] {
        guard DemoScenario.isLoaded(in: engine) else { return [] }
        var batches = self.activityBatches(at: now) { id in engine.value(at: JSONPointer(tokens: ["activities", id])) }
        batches.append(self.foreground(at: now) { engine.value(at: JSONPointer(tokens: ["devices", $0, "foregroundApp"])) })
        batches += self.timelineAnswers(for: engine, at: now)
        return batches.filter { !$0.isEmpty }
    }

    /// LA-16 in the demo: at halftime of each game the person opens the Scores app on the
    /// iPhone 15 Pro for six minutes (26–32 minutes into the game); the game leaves that island
    /// (the other apps' activities take its place) and comes back. `current` reads a device's
    /// `foregroundApp`.
    static func foreground(at now: Instant, current: (String) -> JSONValue?) -> [JSONValue] {
        let device = "iphone-15-pro"
        let period = DemoCycle.minutes(90)
        let elapsed = now.millisecondsSinceEpoch - now.millisecondsSinceEpoch.floorDivided(by: period) * period
        let open = (DemoCycle.minutes(26)..<DemoCycle.minutes(32)).contains(elapsed)
        let wanted: JSONValue = open ? "com.example.scores" : .null
        guard (current(device) ?? .null) != wanted else { return [] }
        return [["type": "device.upsert", "id": .string(device), "foregroundApp": wanted]]
    }

    /// WK-6: a new timeline for every demo widget whose reload is pending.
    static func timelineAnswers(for engine: Engine, at now: Instant) -> [[JSONValue]] {
        var batch: [JSONValue] = []
        for device in DemoScenario.devices {
            for widget in DemoScenario.widgets(on: device.id) {
                let pending = engine.value(at: JSONPointer(tokens: ["widgets", widget.id, "reload", "pending"]))
                if pending == true { batch.append(DemoContent.timeline(widget: widget.id, kind: widget.kind, at: now)) }
            }
        }
        return [batch]
    }

    /// One batch per demo activity: what brings it to the state its cycle has at `now`.
    /// `existing` reads an activity's document entry (`nil`: none).
    static func activityBatches(at now: Instant, existing: (String) -> JSONValue?) -> [[JSONValue]] {
        DemoCycle.all.map { cycle in cycle.commands(at: now, existing: existing) }
    }
}

/// One demo activity's life, repeated every `period`.
struct DemoCycle: Sendable {
    /// What the activity is at a moment of its cycle.
    struct Phase {
        var state: JSONObject
        var alert: JSONValue?
    }

    var prefix: String
    var app: String
    /// LA-15: the phone it runs on.
    var device: String
    var period: Int64
    /// How long it runs in each cycle (it ends then).
    var runs: Int64
    /// The commands that start the activity `id` in `phase` on `device`.
    var start: @Sendable (_ id: String, _ cycle: Int64, _ phase: Phase, _ device: String) -> [JSONValue]
    var phase: @Sendable (_ elapsed: Int64, _ cycle: Int64) -> Phase

    /// The iPhone 15 Pro runs coffee, a game and a timer; the 16 Pro Max another game and a
    /// workout; the SE (no island: banners) a ride.
    static let all: [DemoCycle] = [
        .coffee, .game(prefix: "game", on: "iphone-15-pro"), .timer, .ride,
        .game(prefix: "game-max", on: "iphone-16-pro-max"), .workout,
    ]

    /// The commands that bring this cycle's activity (and its predecessors) in line at `now`.
    func commands(at now: Instant, existing: (String) -> JSONValue?) -> [JSONValue] {
        let cycle = now.millisecondsSinceEpoch.floorDivided(by: self.period)
        let elapsed = now.millisecondsSinceEpoch - cycle * self.period
        var commands: [JSONValue] = []
        // Earlier cycles end (normally they already have).
        for earlier in max(0, cycle - 3)..<cycle where Self.isOngoing(existing(self.id(earlier))) {
            commands.append(self.end(self.id(earlier), at: now))
        }
        let id = self.id(cycle)
        let current = existing(id)
        if elapsed < self.runs {
            let phase = self.phase(elapsed, cycle)
            if current == nil {
                commands += self.start(id, cycle, phase, self.device)
            } else if Self.isOngoing(current), current?["content"]?["state"] != .object(phase.state) {
                var update: JSONObject = [
                    "type": "activity.update", "id": .string(id), "content": ["state": .object(phase.state)],
                ]
                if let alert = phase.alert { update["alert"] = alert }
                commands.append(.object(update))
            }
        } else if Self.isOngoing(current) {
            commands.append(self.end(id, at: now))
        }
        return commands
    }

    func id(_ cycle: Int64) -> String { "\(self.prefix)-\(cycle)" }

    private func end(_ id: String, at now: Instant) -> JSONValue {
        [
            "type": "activity.end", "id": .string(id),
            "dismissalPolicy": ["after": .string(now.adding(seconds: 120).rfc3339)],
        ]
    }

    static func isOngoing(_ activity: JSONValue?) -> Bool {
        guard let state = activity?["activityState"]?.stringValue else { return false }
        return state == "active" || state == "stale" || state == "pending"
    }

    static func minutes(_ count: Int64) -> Int64 { count * 60_000 }

    /// A request with `source: intent` (LA-3 lets an App Intent start one in the background).
    static func request(
        _ id: String, app: String, device: String, type: String, attributes: JSONValue, phase: Phase, score: Double
    ) -> JSONValue {
        [
            "type": "activity.request", "id": .string(id), "app": .string(app), "device": .string(device),
            "attributesType": .string(type),
            "attributes": attributes, "source": "intent",
            "content": ["state": .object(phase.state), "relevanceScore": .number(score)],
        ]
    }
}
