public import IsletCore

/// A small seeded generator (SplitMix64) so randomized tests replay exactly.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) {
        self.state = seed
    }

    public mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random command batches over a small world (3 devices, 3 apps, 8 activity ids, and with
/// `widgets` 8 widget ids and 2 stacks), from a seed, revision 2's device settings included.
/// Some commands are invalid on purpose (unknown ids, limits, ended activities, an iOS version
/// older than the model) so that rejected batches are exercised too.
///
/// Server tests keep the default `clockRates` of `[0]`: a running virtual clock would make
/// their outcome depend on the wall clock.
public struct RandomCommands {
    public var random: SplitMix64
    /// Draws for what DOMAIN revision 2 added (a device's foreground app, Always-On, StandBy
    /// view, time zone and iOS version; an activity's device; `standby.tap`), from a stream of
    /// their own so that each seed's other commands stay what they were.
    public var revision2: SplitMix64
    public let devices = ["d1", "d2", "d3"]
    public let models = ["iphone-15-pro", "iphone-16-pro-max", "iphone-se-3", "iphone-14-pro"]
    public let apps = ["coffee", "ride", "sports"]
    public let activities = (1...8).map { "x\($0)" }
    public let types = ["CoffeeDeliveryAttributes", "RideShareAttributes", "SportsScoreAttributes"]
    public let widgets = (1...8).map { "g\($0)" }
    public let kinds = ["weather", "news", "music"]
    public let families = ["systemSmall", "systemSmall", "systemMedium", "accessoryCircular"]
    public let stackIDs = ["st1", "st2"]

    /// Whether setUp makes widgets and a stack, and commands include widget, stack, relevance
    /// and shortcut commands.
    public let includesWidgets: Bool
    /// The rates `clock.set` picks from.
    public let clockRates: [Double]

    public init(seed: UInt64, widgets: Bool = false, clockRates: [Double] = [0]) {
        self.random = SplitMix64(seed: seed)
        self.revision2 = SplitMix64(seed: seed ^ 0x5245_5649_5349_4F4E)
        self.includesWidgets = widgets
        self.clockRates = clockRates
    }

    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self.random) }
    public mutating func chance(_ percent: Int) -> Bool { self.int(1...100) <= percent }
    public mutating func pick<T>(_ values: [T]) -> T { values[self.int(0...(values.count - 1))] }

    /// The world's fixtures: every device and app.
    public func setUp() -> [JSONValue] {
        let world: [JSONValue] =
            self.devices.enumerated().map { index, id in
                ["type": "device.upsert", "id": .string(id), "model": .string(self.models[index])]
            } + self.apps.map { ["type": "app.upsert", "id": .string($0), "foreground": true] }
        guard self.includesWidgets else { return world }
        return world
            + self.widgets.prefix(4).map { id in
                [
                    "type": "widget.upsert", "id": .string(id), "app": "coffee", "kind": "weather",
                    "family": "systemSmall", "device": "d1",
                ]
            }
            + [
                [
                    "type": "stack.upsert", "id": "st1", "device": "d1", "family": "systemSmall",
                    "widgets": ["g1", "g2", "g3"],
                ]
            ]
    }

    /// A draw from ``revision2``: whether a revision-2 field is added.
    private mutating func revision2Chance(_ percent: Int) -> Bool {
        Int.random(in: 1...100, using: &self.revision2) <= percent
    }

    private mutating func revision2Pick<T>(_ values: [T]) -> T { values.randomElement(using: &self.revision2)! }

    public mutating func batch(now: Instant) -> [JSONValue] {
        var batch = (0..<self.int(1...3)).map { _ in self.command(now: now) }
        if self.revision2Chance(4) {
            batch.append(["type": "standby.tap", "device": .string(self.revision2Pick(self.devices))])
        }
        return batch
    }

    public mutating func command(now: Instant) -> JSONValue {
        let roll = self.int(0...(self.includesWidgets ? 139 : 99))
        if roll >= 100 { return self.widgetCommand(now: now, roll - 100) }
        switch roll {
        case 0..<22: return self.request(now: now)
        case 22..<50: return self.update(now: now)
        case 50..<58: return self.end(now: now)
        case 58..<62: return ["type": "activity.dismiss", "id": .string(self.pick(self.activities))]
        case 62..<68: return self.deviceUpsert()
        case 68..<74: return self.appUpsert()
        case 74..<78: return ["type": "island.press", "device": .string(self.pick(self.devices))]
        case 78..<86: return ["type": "clock.advance", "seconds": .number(Double(self.int(0...5400)))]
        case 86..<90: return self.configSet()
        case 90..<94: return self.templatePut()
        default: return ["type": "clock.set", "rate": .number(self.pick(self.clockRates))]
        }
    }

    private mutating func content(now: Instant) -> JSONValue {
        var content: JSONObject = [
            "state": [
                "status": .string(self.pick(["received", "brewing", "onItsWay"])),
                "n": .number(Double(self.int(0...9))),
            ]
        ]
        if self.chance(50) { content["staleDate"] = .string(now.adding(seconds: Double(self.int(-60...7200))).rfc3339) }
        if self.chance(50) { content["relevanceScore"] = .number(Double(self.int(0...3) * 25)) }
        return .object(content)
    }

    private mutating func delivery() -> JSONValue? {
        guard self.chance(40) else { return nil }
        return [
            "source": "push", "priority": .number(self.chance(70) ? 10 : 5),
            "apnsId": .string("apns-\(self.int(0...999))"),
        ]
    }

    private mutating func request(now: Instant) -> JSONValue {
        var command: JSONObject = [
            "type": "activity.request", "id": .string(self.pick(self.activities)), "app": .string(self.pick(self.apps)),
            "attributesType": .string(self.pick(self.types)), "attributes": ["name": .string(self.pick(["A", "B"]))],
            "content": self.content(now: now),
        ]
        if self.chance(30) { command["pushType"] = "token" }
        if self.chance(30) { command["alert"] = ["title": "Hello", "body": "World"] }
        if self.chance(20) { command["source"] = .string(self.pick(["intent", "push"])) }
        if self.chance(10) {
            command["start"] = .string(now.adding(seconds: Double(self.int(60...3600))).rfc3339)
            command["alert"] = ["title": "Scheduled"]
        }
        if self.revision2Chance(30) { command["device"] = .string(self.revision2Pick(self.devices)) }
        return .object(command)
    }

    private mutating func update(now: Instant) -> JSONValue {
        var command: JSONObject = [
            "type": "activity.update", "id": .string(self.pick(self.activities)), "content": self.content(now: now),
        ]
        if self.chance(25) { command["alert"] = ["title": "Update", "sound": "default"] }
        if self.chance(30) { command["timestamp"] = .string(now.adding(seconds: Double(self.int(-600...600))).rfc3339) }
        if let delivery = self.delivery() { command["delivery"] = delivery }
        return .object(command)
    }

    private mutating func end(now: Instant) -> JSONValue {
        var command: JSONObject = ["type": "activity.end", "id": .string(self.pick(self.activities))]
        switch self.int(0...3) {
        case 0: command["dismissalPolicy"] = "immediate"
        case 1:
            command["dismissalPolicy"] = ["after": .string(now.adding(seconds: Double(self.int(-600...20000))).rfc3339)]
        default: break
        }
        if self.chance(50) { command["content"] = self.content(now: now) }
        if let delivery = self.delivery() { command["delivery"] = delivery }
        return .object(command)
    }

    private mutating func deviceUpsert() -> JSONValue {
        var command: JSONObject = ["type": "device.upsert", "id": .string(self.pick(self.devices))]
        for flag in ["locked", "standby", "nightMode"] where self.chance(40) { command[flag] = .bool(self.chance(50)) }
        if self.chance(20) { command["appearance"] = .string(self.pick(["light", "dark"])) }
        if self.chance(10) { command["model"] = .string(self.pick(self.models)) }
        if self.revision2Chance(25) { command["foregroundApp"] = .string(self.revision2Pick(self.apps + [""])) }
        if self.revision2Chance(15) { command["alwaysOn"] = .bool(self.revision2Chance(70)) }
        if self.revision2Chance(20) { command["standbyView"] = .string(self.revision2Pick(["fullScreen", "minimal"])) }
        if self.revision2Chance(10) {
            command["timeZone"] = .string(self.revision2Pick(["UTC", "America/New_York", "Asia/Tokyo"]))
        }
        if self.revision2Chance(8) {
            command["iosVersion"] = .string(self.revision2Pick(["16.0", "16.1", "17.2", "18.0", "26.0", "27.0"]))
        }
        return .object(command)
    }

    private mutating func appUpsert() -> JSONValue {
        var command: JSONObject = ["type": "app.upsert", "id": .string(self.pick(self.apps))]
        if self.chance(50) { command["foreground"] = .bool(self.chance(60)) }
        if self.chance(15) { command["frequentUpdates"] = .bool(self.chance(50)) }
        if self.chance(20) {
            command["identity"] = ["tint": .string(self.pick(["#112233", "orange"])), "keyline": "#AABBCC"]
        }
        if self.chance(10) { command["liveActivitiesEnabled"] = .bool(self.chance(80)) }
        return .object(command)
    }

    private mutating func configSet() -> JSONValue {
        switch self.int(0...4) {
        case 0:
            return [
                "type": "config.set", "values": ["lowPriorityDelaySeconds": .number(Double(self.pick([0, 5, 120])))],
            ]
        case 1: return ["type": "config.set", "values": ["pushBudgetPerHour": .number(Double(self.pick([2, 15])))]]
        case 2: return ["type": "config.set", "values": ["minimalPolicy": .string(self.pick(["score", "start"]))]]
        case 3:
            // Activities' `render.layout` follows these (a revision publishes them from the
            // configuration before it).
            return [
                "type": "config.set",
                "values": [
                    "defaultPresentationHeight": .number(Double(self.pick([100, 140, 170]))),
                    "shortBandMaxHeight": .number(Double(self.pick([110, 130]))),
                ],
            ]
        default:
            return ["type": "config.set", "values": ["alertExpandedSeconds": .number(Double(self.pick([1, 4, 30])))]]
        }
    }

    private mutating func templatePut() -> JSONValue {
        [
            "type": "template.put", "app": .string(self.pick(self.apps)),
            "target": .string("activity:" + self.pick(self.types)),
            "slot": .string(self.pick(["lockScreen", "compactTrailing", "expandedHeight"])),
            "html": .string(self.pick(["<b>{{state.status}}</b>", "{{state.n}}", "120"])),
        ]
    }
}

/// Widget, stack, relevance and shortcut commands (some invalid on purpose).
extension RandomCommands {
    private mutating func widgetCommand(now: Instant, _ roll: Int) -> JSONValue {
        switch roll {
        case 0..<6: return self.widgetUpsert()
        case 6..<16: return self.setTimeline(now: now)
        case 16..<20:
            return [
                "type": "widget.reload", "id": .string(self.pick(self.widgets)),
                "reason": .string(self.pick(["app", "push", "foreground", "intent"])),
            ]
        case 20..<26:
            return [
                "type": "widget.interact", "id": .string(self.pick(self.widgets)),
                "action": .string(self.pick(["view", "tap", "control"])), "target": "t",
                "at": .string(now.adding(seconds: -Double(self.int(0...200_000))).rfc3339),
            ]
        case 26..<28: return ["type": "widget.delete", "id": .string(self.pick(self.widgets))]
        case 28..<32:
            let members = (0..<self.int(0...4)).map { _ in JSONValue.string(self.pick(self.widgets)) }
            return [
                "type": "stack.upsert", "id": .string(self.pick(self.stackIDs)),
                "device": .string(self.pick(["d1", "d2"])),
                "family": "systemSmall", "widgets": .array(members), "smartRotate": .bool(self.chance(80)),
            ]
        case 32..<33: return ["type": "stack.delete", "id": .string(self.pick(self.stackIDs))]
        case 33..<37:
            let feature = self.pick(["habit", "timeline", "freshness", "rotationPenalty"])
            var command: JSONObject = [
                "type": "relevance.setWeights",
                "weights": .object(JSONObject([(feature, JSONValue.number(Double(self.int(-2...3))))])),
                "minDwellSeconds": .number(Double(self.pick([0, 300, 900]))),
            ]
            if self.chance(50) { command["stack"] = .string(self.pick(self.stackIDs)) }
            return .object(command)
        case 37..<38:
            return [
                "type": "shortcut.upsert", "app": .string(self.pick(self.apps)), "id": .string(self.pick(["a", "b"])),
                "phrases": ["Go with ${applicationName}"],
                "intent": [
                    "type": "liveActivity", "attributesType": "TimerAttributes", "content": ["state": ["n": 1]],
                ],
            ]
        default:
            return [
                "type": "shortcut.run", "app": .string(self.pick(self.apps)), "id": .string(self.pick(["a", "b"])),
            ]
        }
    }

    private mutating func widgetUpsert() -> JSONValue {
        var command: JSONObject = [
            "type": "widget.upsert", "id": .string(self.pick(self.widgets)), "app": .string(self.pick(self.apps)),
            "kind": .string(self.pick(self.kinds)),
        ]
        if self.chance(70) { command["family"] = .string(self.pick(self.families)) }
        if self.chance(60) { command["device"] = .string(self.pick(["d1", "d2", ""])) }
        if self.chance(20) { command["url"] = "app://x" }
        return .object(command)
    }

    private mutating func setTimeline(now: Instant) -> JSONValue {
        var offset = Double(self.int(-3600...600))
        let entries: [JSONValue] = (0..<self.int(0...6)).map { _ in
            offset += Double(self.int(0...2400))
            var entry: JSONObject = [
                "date": .string(now.adding(seconds: offset).rfc3339),
                "content": ["temperature": .number(Double(self.int(-5...30))), "headline": "News"],
            ]
            if self.chance(80) {
                entry["relevance"] = [
                    "score": .number(Double(self.int(0...100))),
                    "duration": .number(Double(self.pick([0, 600, 3600]))),
                ]
            }
            return .object(entry)
        }
        let policy: JSONValue =
            self.chance(70)
            ? "atEnd" : (self.chance(50) ? "never" : ["after": .string(now.adding(seconds: 1800).rfc3339)])
        return [
            "type": "widget.setTimeline", "id": .string(self.pick(self.widgets)), "entries": .array(entries),
            "policy": policy,
        ]
    }
}
