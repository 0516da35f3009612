/// The demo's widgets: what each kind shows hour by hour, and how relevant it says it is.
///
/// The day of the seeds (seed 003): weather matters in the morning, music on the commute,
/// traffic late in the afternoon, news in the evening; the calendar through the working day,
/// photos at night, stocks while the market is open (and not at all otherwise: score 0).
/// Everything is a pure function of the instant, so timelines are the same on every run.
enum DemoContent {
    /// The demo's widget kinds, in the order of the Home Screen stack.
    static let stackKinds = ["weather", "music", "traffic", "news", "calendar", "photos", "stocks"]

    /// A kind's relevance score (0–100) for an entry at UTC hour `hour`.
    static func score(_ kind: String, hour: Int) -> Double {
        switch kind {
        case "weather": return (6...7).contains(hour) ? 90 : ((5...9).contains(hour) ? 60 : 15)
        case "music": return (8...9).contains(hour) ? 85 : ((17...18).contains(hour) ? 50 : 10)
        case "traffic": return (16...18).contains(hour) ? 95 : ((7...8).contains(hour) ? 30 : 5)
        case "news": return (19...21).contains(hour) ? 90 : (hour == 12 ? 40 : 15)
        case "calendar": return (10...15).contains(hour) ? 60 : 10
        case "photos": return (22...23).contains(hour) ? 50 : ((1...5).contains(hour) ? 0 : 5)
        case "stocks": return (14...16).contains(hour) ? 30 : 0
        default: return 0
        }
    }

    /// The minutes of the day at which the person habitually uses each kind (seeding habit).
    static let habits: [String: [Int]] = [
        "weather": [6 * 60 + 45, 7 * 60 + 20],
        "music": [8 * 60 + 10, 8 * 60 + 35, 9 * 60 + 15],
        "traffic": [16 * 60 + 40, 17 * 60 + 25],
        "news": [19 * 60 + 30, 20 * 60 + 45, 21 * 60 + 30],
        "calendar": [10 * 60 + 5, 13 * 60 + 55],
        "photos": [22 * 60 + 40],
    ]

    /// The content of an entry of `kind` at `instant`.
    static func content(_ kind: String, at instant: Instant) -> JSONValue {
        let hour = TimeZoneRule.utc.hourOfDay(instant)
        let day = Int(instant.millisecondsSinceEpoch.floorDivided(by: millisecondsPerDay))
        switch kind {
        case "weather": return self.weather(hour: hour, day: day)
        case "music": return self.music(hour: hour, day: day)
        case "traffic": return self.traffic(hour: hour)
        case "news": return self.news(hour: hour, day: day)
        case "calendar": return self.calendar(hour: hour, day: day)
        case "photos": return self.photos(hour: hour, day: day)
        default: return self.stocks(hour: hour, day: day)
        }
    }

    private static let temperatures = [
        9, 8, 8, 7, 7, 7, 8, 10, 12, 14, 16, 17, 18, 19, 19, 18, 17, 15, 13, 12, 11, 10, 10, 9,
    ]

    private static func weather(hour: Int, day: Int) -> JSONValue {
        let shift = day % 3 - 1
        let conditions = ["Clear", "Clear", "Partly Cloudy", "Partly Cloudy", "Cloudy", "Light Rain"]
        let condition = hour < 6 || hour >= 20 ? "Clear Night" : conditions[(hour / 3 + day) % conditions.count]
        return [
            "location": "Cupertino", "temperature": .number(Double(self.temperatures[hour] + shift)),
            "condition": .string(condition), "high": .number(Double(19 + shift)), "low": .number(Double(7 + shift)),
            "precipitation": .number(Double(condition == "Light Rain" ? 70 : (hour * 7 + day) % 30)),
        ]
    }

    private static let tracks: [(String, String, String)] = [
        ("Morning Commute", "The Islanders", "Smart Stack"), ("Dynamic Island", "Live Activity", "Compact"),
        ("Timeline", "The Providers", "Reload Policy"), ("After the Last Entry", "atEnd", "Policies"),
        ("Relevance", "The Scores", "Smart Rotate"), ("StandBy", "Night Mode", "Red Tint"),
    ]

    private static func music(hour: Int, day: Int) -> JSONValue {
        let (track, artist, album) = self.tracks[(hour + day) % self.tracks.count]
        return [
            "track": .string(track), "artist": .string(artist), "album": .string(album),
            "playing": .bool((7...9).contains(hour) || (17...18).contains(hour)),
            "progress": .number(Double(hour % 4) / 4),
        ]
    }

    private static func traffic(hour: Int) -> JSONValue {
        let heavy = (16...18).contains(hour)
        let moderate = (7...9).contains(hour)
        let eta = heavy ? 38 + hour % 3 * 4 : (moderate ? 27 : 19)
        let arrival = hour + (eta + 30) / 60
        return [
            "destination": .string(hour < 12 ? "Work" : "Home"), "etaMinutes": .number(Double(eta)),
            "traffic": .string(heavy ? "heavy" : (moderate ? "moderate" : "light")), "route": "I-280 N",
            "arrival": .string("\(arrival % 24):\(eta % 6)0"),
        ]
    }

    private static let headlines: [(String, String)] = [
        ("Smart Stacks learn the rhythm of the day", "Islet News"),
        ("Live Activities now end after eight hours", "Activity Weekly"),
        ("Widgets refresh about 72 times a day", "Timeline Times"),
        ("Dynamic Island adds a new minimal view", "The Notch"),
        ("StandBy turns red at night", "Bedside Daily"),
        ("App Shortcuts start timers from Siri", "Intent Post"),
    ]

    private static func news(hour: Int, day: Int) -> JSONValue {
        let first = (hour + day) % self.headlines.count
        let stories: [JSONValue] = (1...3).map { offset in
            let (headline, source) = self.headlines[(first + offset) % self.headlines.count]
            return ["headline": .string(headline), "source": .string(source), "link": .string("story\(offset)")]
        }
        let (headline, source) = self.headlines[first]
        return [
            "headline": .string(headline), "source": .string(source),
            "category": .string(hour >= 18 ? "Evening Briefing" : "Top Stories"), "stories": .array(stories),
        ]
    }

    private static let events: [(minute: Int, title: String, place: String)] = [
        (9 * 60 + 30, "Standup", "Room 4"), (11 * 60, "Design review", "Studio"), (13 * 60, "Lunch with Mia", "Café"),
        (15 * 60 + 30, "1:1 with Alex", "Room 2"), (17 * 60 + 30, "Gym", "Downtown"),
    ]

    private static func calendar(hour: Int, day: Int) -> JSONValue {
        let weekdays = ["THU", "FRI", "SAT", "SUN", "MON", "TUE", "WED"]
        let dayOfMonth = self.dayOfMonth(day)
        let upcoming = self.events.filter { $0.minute >= hour * 60 }
        var object: JSONObject = ["weekday": .string(weekdays[day % 7]), "day": .number(Double(dayOfMonth))]
        if let next = upcoming.first {
            object["event"] = [
                "title": .string(next.title), "location": .string(next.place),
                "time": .string("\(next.minute / 60):\(next.minute % 60 < 10 ? "0" : "")\(next.minute % 60)"),
            ]
        }
        object["later"] = .array(
            upcoming.dropFirst().prefix(2).map { event in
                [
                    "title": .string(event.title),
                    "time": .string("\(event.minute / 60):\(event.minute % 60 < 10 ? "0" : "")\(event.minute % 60)"),
                ]
            })
        return .object(object)
    }

    /// The day of the month of a day number since 1970-01-01 (proleptic Gregorian).
    static func dayOfMonth(_ days: Int) -> Int {
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        return doy - (153 * mp + 2) / 5 + 1
    }

    private static let memories = [
        ("Sunset at Half Moon Bay", "Half Moon Bay"), ("Kyoto in autumn", "Kyoto"),
        ("First day at the beach", "Santa Cruz"),
        ("Snow in Yosemite", "Yosemite"),
    ]

    private static func photos(hour: Int, day: Int) -> JSONValue {
        let (caption, place) = self.memories[(day + hour / 6) % self.memories.count]
        return ["caption": .string(caption), "place": .string(place), "yearsAgo": .number(Double(1 + day % 4))]
    }

    private static func stocks(hour: Int, day: Int) -> JSONValue {
        let symbols: [(String, Double)] = [("AAPL", 231.4), ("MSFT", 428.1), ("TSLA", 252.6), ("NVDA", 138.9)]
        let tickers: [JSONValue] = symbols.enumerated().map { index, pair in
            let wave = Double((hour * 7 + day * 3 + index * 5) % 21 - 10) / 4
            return [
                "symbol": .string(pair.0), "price": .number(((pair.1 + wave) * 100).rounded() / 100),
                "change": .number((wave * 100).rounded() / 100),
            ]
        }
        return ["tickers": .array(tickers)]
    }

    /// A demo timeline: hourly entries for 30 hours from the hour containing `now`, each a
    /// candidate for its hour (`duration` 3600), asking for the next timeline in 6 hours (so at
    /// any time at least a day lies ahead, for forecasts).
    static func timeline(widget id: String, kind: String, at now: Instant) -> JSONValue {
        let start = TimeZoneRule.utc.hourStart(now)
        let entries: [JSONValue] = (0..<30).map { offset in
            let date = start.adding(milliseconds: Int64(offset) * millisecondsPerHour)
            return [
                "date": .string(date.rfc3339), "content": self.content(kind, at: date),
                "relevance": ["score": .number(self.score(kind, hour: TimeZoneRule.utc.hourOfDay(date))), "duration": 3600],
            ]
        }
        return [
            "type": "widget.setTimeline", "id": .string(id), "entries": .array(entries),
            "policy": ["after": .string(start.adding(milliseconds: 6 * millisecondsPerHour).rfc3339)],
        ]
    }
}
