/// The built-in demo world that `islet serve` loads into an empty store (and `--demo` loads
/// explicitly): three iPhones each running its own Live Activities (LA-15; the Scores app on
/// two of them), the five Live Activity apps of the seeds, seven widgets in a Home
/// Screen Smart Stack on each phone whose habits make weather win the morning, music the
/// commute, traffic the late afternoon and news the evening, Lock Screen accessory widgets, and
/// App Shortcuts. ``DemoDriver`` keeps it moving on the wall clock.
///
/// Pure data: the same instant gives the same commands. The server applies them like any
/// other commands (through the command log, so a restart replays them).
public enum DemoScenario {
    /// The demo's devices: id and catalog model.
    public static let devices: [(id: String, model: String)] = [
        ("iphone-15-pro", "iphone-15-pro"), ("iphone-16-pro-max", "iphone-16-pro-max"), ("iphone-se", "iphone-se-3"),
    ]

    /// The attributes types of the activity apps (each gets a push-to-start token per phone).
    static let attributesTypes: [String: String] = [
        "com.example.coffee": "CoffeeDeliveryAttributes", "com.example.ride": "RideShareAttributes",
        "com.example.scores": "SportsScoreAttributes", "com.example.timer": "TimerAttributes",
        "com.example.workout": "WorkoutAttributes",
    ]

    /// The demo's apps: bundle id, name, identity colors.
    static let apps: [(id: String, name: String, tint: String, background: String)] = [
        ("com.example.coffee", "Coffee", "#C67C4E", "#2B1A12"), ("com.example.ride", "Ride", "#00B386", "#0B1F1A"),
        ("com.example.scores", "Scores", "#FF3B30", "#111111"), ("com.example.timer", "Timer", "#FF9F0A", "#1C1C1E"),
        ("com.example.workout", "Workout", "#A4F10B", "#0A0A0A"),
        ("com.example.weather", "Weather", "#4DA3FF", "#1E5FA8"),
        ("com.example.calendar", "Calendar", "#FF3B30", "#FFFFFF"),
        ("com.example.music", "Music", "#FA2D48", "#1C1C1E"),
        ("com.example.maps", "Maps", "#34C759", "#F2F2F7"), ("com.example.news", "News", "#FF2D55", "#FFFFFF"),
        ("com.example.photos", "Photos", "#FFCC00", "#FFFFFF"), ("com.example.stocks", "Stocks", "#30D158", "#000000"),
    ]

    /// The app of a widget kind.
    static func app(ofKind kind: String) -> String {
        kind == "traffic" ? "com.example.maps" : "com.example." + kind
    }

    /// The id of a demo widget: `<device>.<kind>` (stack), `<device>.lock.<kind>`, `<device>.news.medium`.
    static func widgetID(_ device: String, _ kind: String) -> String { device + "." + kind }

    /// Every demo widget: id, kind, family.
    static func widgets(on device: String) -> [(id: String, kind: String, family: String)] {
        var widgets = DemoContent.stackKinds.map { (self.widgetID(device, $0), $0, "systemSmall") }
        widgets += [
            (device + ".lock.weather", "weather", "accessoryCircular"),
            (device + ".lock.calendar", "calendar", "accessoryRectangular"),
            (device + ".lock.stocks", "stocks", "accessoryInline"),
        ]
        if device != "iphone-se" { widgets.append((device + ".news.medium", "news", "systemMedium")) }
        return widgets
    }

    /// The commands that build the demo world at simulated instant `now`, as batches to apply
    /// in order (each is valid on its own once the earlier ones are applied).
    public static func setupBatches(at now: Instant) -> [[JSONValue]] {
        [self.fixtures(), self.shortcuts(), self.widgetBatch(at: now), self.habitHistory(before: now)]
            + [DemoDriver.activityBatches(at: now, existing: { _ in nil }).flatMap { $0 }]
    }

    /// Whether the engine holds the demo world (its first device and widget exist).
    public static func isLoaded(in engine: Engine) -> Bool {
        engine.value(at: JSONPointer(tokens: ["widgets", self.widgetID(self.devices[0].id, "weather")])) != nil
    }

    private static func fixtures() -> [JSONValue] {
        var batch: [JSONValue] = [
            // Ended demo activities leave the document after 10 minutes instead of a day.
            ["type": "config.set", "values": ["dismissedRetentionSeconds": 600, "maxActivitiesPerDevice": 20]]
        ]
        batch += self.devices.map { ["type": "device.upsert", "id": .string($0.id), "model": .string($0.model)] }
        batch += self.apps.map { app in
            var upsert: JSONObject = [
                "type": "app.upsert", "id": .string(app.id), "name": .string(app.name),
                "identity": [
                    "tint": .string(app.tint), "background": .string(app.background), "keyline": .string(app.tint),
                ],
            ]
            if let type = self.attributesTypes[app.id] { upsert["attributesTypes"] = [.string(type)] }
            return .object(upsert)
        }
        return batch
    }

    private static func shortcuts() -> [JSONValue] {
        [
            [
                "type": "shortcut.upsert", "app": "com.example.coffee", "id": "order-usual", "title": "Order my usual",
                "phrases": ["Order my usual from ${applicationName}", "Get a ${drink} from ${applicationName}"],
                "parameter": ["name": "drink", "values": ["Flat white", "Latte", "Cold brew"]],
                "intent": [
                    "type": "liveActivity", "attributesType": "CoffeeDeliveryAttributes",
                    "attributes": ["coffeeName": "Flat white"], "content": ["state": ["currentStatus": "received"]],
                ],
            ],
            [
                "type": "shortcut.upsert", "app": "com.example.timer", "id": "start-timer", "title": "Start a timer",
                "phrases": ["Start a ${duration} timer with ${applicationName}"],
                "parameter": ["name": "duration", "values": ["3 minutes", "5 minutes", "10 minutes"]],
                "intent": [
                    "type": "liveActivity", "attributesType": "TimerAttributes", "attributes": ["name": "Tea"],
                    "content": ["state": ["remainingSeconds": 300, "paused": false]],
                ],
            ],
            [
                "type": "shortcut.upsert", "app": "com.example.timer", "id": "open", "title": "Open Timer",
                "phrases": ["Open ${applicationName}"], "intent": ["type": "openApp"],
            ],
            [
                "type": "shortcut.upsert", "app": "com.example.ride", "id": "ride-home", "title": "Ride home",
                "phrases": ["Get a ride home with ${applicationName}"],
                "intent": [
                    "type": "liveActivity", "attributesType": "RideShareAttributes",
                    "attributes": ["pickup": "Office", "destination": "Home"],
                    "content": ["state": ["status": "searching"]],
                ],
            ],
        ]
    }

    private static func widgetBatch(at now: Instant) -> [JSONValue] {
        var batch: [JSONValue] = []
        for device in self.devices {
            for widget in self.widgets(on: device.id) {
                batch.append([
                    "type": "widget.upsert", "id": .string(widget.id), "app": .string(self.app(ofKind: widget.kind)),
                    "kind": .string(widget.kind), "family": .string(widget.family), "device": .string(device.id),
                    "url": .string("\(widget.kind)://widget"),
                    "placeholder": DemoContent.content(widget.kind, at: TimeZoneRule.utc.hourStart(now)),
                ])
                batch.append(DemoContent.timeline(widget: widget.id, kind: widget.kind, at: now))
            }
            batch.append([
                "type": "stack.upsert", "id": .string(device.id + ".home"), "device": .string(device.id),
                "family": "systemSmall",
                "widgets": .array(DemoContent.stackKinds.map { .string(self.widgetID(device.id, $0)) }),
            ])
        }
        return batch
    }

    /// Two weeks of use at the habitual minutes (photos on weekends only).
    private static func habitHistory(before now: Instant) -> [JSONValue] {
        var batch: [JSONValue] = []
        let today = TimeZoneRule.utc.hourStart(now).adding(milliseconds: -Int64(TimeZoneRule.utc.hourOfDay(now)) * millisecondsPerHour)
        for device in self.devices {
            for day in 1...14 {
                let midnight = today.adding(milliseconds: -Int64(day) * millisecondsPerDay)
                let weekday = Int(midnight.millisecondsSinceEpoch.floorDivided(by: millisecondsPerDay) % 7)
                for kind in DemoContent.stackKinds {
                    for minute in DemoContent.habits[kind] ?? [] {
                        if kind == "photos", weekday != 2, weekday != 3 { continue }  // Saturdays and Sundays
                        let at = midnight.adding(milliseconds: Int64(minute) * 60_000)
                        batch.append([
                            "type": "widget.interact", "id": .string(self.widgetID(device.id, kind)), "action": "view",
                            "at": .string(at.rfc3339),
                        ])
                    }
                }
            }
        }
        return batch
    }
}
