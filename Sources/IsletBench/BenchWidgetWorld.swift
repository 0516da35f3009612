import IsletCore
import IsletServer

/// The widget scale world of `islet bench engine --widgets N`: N widgets of the seven demo
/// kinds, ten to a Home Screen Smart Stack, 24 hourly timeline entries each (realistic content,
/// relevance scores and durations, an `atEnd` policy), some habit history, spread over 100
/// devices of the three demo models.
enum BenchWidgetWorld {
    static let kinds = ["weather", "calendar", "music", "traffic", "news", "photos", "stocks"]
    static let devices = 100

    struct Options {
        var widgets: Int
        var entries: Int
        /// Each widget's entries start at its own minute of the hour instead of on the hour.
        var stagger: Bool
    }

    /// Adds the world to `engine` (devices, apps, widgets, timelines, stacks, interactions).
    /// - Returns: the number of command batches applied.
    @discardableResult
    static func add(to engine: inout Engine, _ options: Options) throws -> Int {
        let start = engine.now
        let models = ["iphone-15-pro", "iphone-16-pro-max", "iphone-se-3"]
        var fixtures: [JSONValue] = (0..<self.devices).map { index in
            ["type": "device.upsert", "id": .string("wd\(index)"), "model": .string(models[index % 3])]
        }
        fixtures += self.kinds.map {
            [
                "type": "app.upsert", "id": .string("com.example.\($0)"),
                "name": .string($0.prefix(1).uppercased() + $0.dropFirst()),
            ]
        }
        _ = try engine.apply(fixtures, at: start)
        var batches = 1
        let stacks = options.widgets / 10
        for first in stride(from: 0, to: stacks, by: 50) {
            var batch: [JSONValue] = []
            for stack in first..<min(stacks, first + 50) {
                let family = stack % 2 == 0 ? "systemSmall" : "systemMedium"
                let device = "wd\(stack % self.devices)"
                var ids: [JSONValue] = []
                for slot in 0..<10 {
                    let index = stack * 10 + slot
                    let kind = self.kinds[(stack + slot) % self.kinds.count]
                    ids.append(.string("w\(index)"))
                    batch.append([
                        "type": "widget.upsert", "id": .string("w\(index)"), "app": .string("com.example.\(kind)"),
                        "kind": .string(kind), "family": .string(family), "device": .string(device),
                    ])
                    batch.append(self.timeline(index: index, kind: kind, start: start, options))
                    if slot < 3 {
                        // Habit: this widget was used at "its" hour on each of the last three days.
                        let hour = Double((stack + slot * 5) % 24)
                        for day in 1...3 {
                            let at = start.adding(seconds: -Double(day) * 86_400 + hour * 3600)
                            batch.append([
                                "type": "widget.interact", "id": .string("w\(index)"), "action": "view",
                                "at": .string(at.rfc3339),
                            ])
                        }
                    }
                }
                batch.append([
                    "type": "stack.upsert", "id": .string("s\(stack)"), "device": .string(device),
                    "family": .string(family), "widgets": .array(ids),
                ])
            }
            _ = try engine.apply(batch, at: start)
            batches += 1
        }
        return batches
    }

    /// One widget's timeline: `entries` hourly entries with content of its kind, a relevance
    /// score from 0 to 100 (one in eight is 0: not a candidate) and a duration of 0 (until the
    /// next entry) or 30 or 60 minutes.
    static func timeline(index: Int, kind: String, start: Instant, _ options: Options) -> JSONValue {
        var random = UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15 | 1
        let offset = options.stagger ? Double(BenchWorld.next(&random) % 60) * 60 : 0
        let entries: [JSONValue] = (0..<options.entries).map { hour in
            let date = start.adding(seconds: Double(hour) * 3600 + offset)
            let roll = BenchWorld.next(&random)
            let score = roll % 8 == 0 ? 0 : Double(1 + roll % 100)
            let duration = [0, 1800, 3600][Int(roll / 8 % 3)]
            return [
                "date": .string(date.rfc3339), "content": self.content(kind: kind, index: index, hour: hour),
                "relevance": ["score": .number(score), "duration": .number(Double(duration))],
            ]
        }
        return [
            "type": "widget.setTimeline", "id": .string("w\(index)"), "entries": .array(entries), "policy": "atEnd",
        ]
    }

    static func content(kind: String, index: Int, hour: Int) -> JSONValue {
        switch kind {
        case "weather":
            let temperature = Double((index + hour * 3) % 35) - 5
            return [
                "location": .string(["Cupertino", "Tokyo", "Shanghai", "Paris"][index % 4]),
                "temperature": .number(temperature),
                "condition": .string(["Sunny", "Partly Cloudy", "Rain", "Cloudy"][(index + hour) % 4]),
                "high": .number(temperature + 4), "low": .number(temperature - 6),
            ]
        case "calendar":
            return [
                "weekday": "SUN", "day": 22,
                "event": [
                    "title": .string("Meeting \(index % 97)"), "time": .string("\((hour + 1) % 24):00"),
                    "location": "Room 4",
                ],
            ]
        case "music":
            return [
                "track": .string("Track \((index + hour) % 500)"), "artist": .string("Artist \(index % 300)"),
                "playing": true,
            ]
        case "traffic":
            return [
                "destination": "Home", "etaMinutes": .number(Double(15 + (index + hour) % 40)),
                "traffic": .string(["light", "moderate", "heavy"][hour % 3]),
            ]
        case "news":
            return [
                "headline": .string("Headline \(index % 1000)-\(hour)"), "source": "Islet News",
                "category": "Top Stories",
            ]
        case "photos":
            return [
                "caption": .string("Memory \(index % 200)"), "yearsAgo": .number(Double(1 + hour % 5)),
                "place": "Kyoto",
            ]
        default:
            return [
                "tickers": [
                    [
                        "symbol": "AAPL", "price": .number(180 + Double((index + hour) % 20)),
                        "change": .number(Double(hour % 7) - 3),
                    ],
                    ["symbol": "MSFT", "price": .number(410 + Double(hour)), "change": 1.25],
                ]
            ]
        }
    }
}
