import IsletCore
import Testing

/// The built-in demo world and its driver, on a virtual clock.
@Suite struct DemoScenarioTests {
    static let midnight = try! Instant(rfc3339: "2026-11-22T00:00:00Z")

    /// The demo loaded at `start`, on a paused virtual clock.
    static func demo(at start: Instant = midnight) throws -> Engine {
        var engine = Engine(renderer: TestRenderer(), at: start, clock: .virtual(now: start, rate: 0, atWall: start))
        for batch in DemoScenario.setupBatches(at: start) { _ = try engine.apply(batch, at: start) }
        return engine
    }

    /// Runs the driver every `step` seconds for `hours`, calling `observe` after each step.
    static func drive(_ engine: inout Engine, hours: Double, step: Double = 300, observe: (Engine) -> Void) throws {
        let wall = engine.clock.anchorWall
        for _ in 0..<Int(hours * 3600 / step) {
            for batch in DemoDriver.batches(for: engine, at: engine.now) { _ = try engine.apply(batch, at: wall) }
            _ = try engine.apply([["type": "clock.advance", "seconds": .number(step)]] as [JSONValue], at: wall)
            observe(engine)
        }
    }

    @Test("a fork of the driven demo a day later is the demo run forward: every activity it had has ended (LA-7), whatever the driver did at any minute of an hour")
    func forkADayLater() throws {
        for minute in stride(from: 0.0, to: 60, by: 7) {
            let start = Self.midnight.adding(seconds: 9 * 3600 + minute * 60)
            var engine = try Self.demo(at: start)
            try Self.drive(&engine, hours: 0.5, step: 60) { _ in }
            let later = engine.now.adding(seconds: 23 * 3600)
            let fork = engine.forked(clock: .virtual(now: later, rate: 0, atWall: later), atWall: later, tokenSalt: 1)
            let active = fork.value(at: "/activities")?.objectValue?.members.filter {
                $0.value["activityState"] != "dismissed" && $0.value["activityState"] != "ended"
            }.map(\.key)
            #expect(active == [], "demo loaded at minute \(minute): \(active ?? [])")
        }
    }

    @Test(
        "the demo world: three iPhones, the five activity apps running, seven widgets in a Smart Stack, Lock Screen accessories"
    )
    func world() throws {
        let engine = try Self.demo()
        #expect(DemoScenario.isLoaded(in: engine))
        #expect(engine.value(at: "/devices")?.objectValue?.keys == ["iphone-15-pro", "iphone-16-pro-max", "iphone-se"])
        #expect(engine.value(at: "/devices/iphone-se/dynamicIsland") == false)
        let stack = try #require(engine.value(at: "/stacks/iphone-15-pro.home"))
        #expect(stack["widgets"]?.arrayValue?.count == 7)
        #expect(engine.value(at: "/devices/iphone-15-pro/scene/lockScreen/widgets")?.arrayValue?.count == 3)
        #expect(engine.value(at: "/devices/iphone-15-pro/scene/home/widgets") == ["iphone-15-pro.news.medium"])
        let running = engine.value(at: "/activities")?.objectValue?.members.filter {
            $0.value["activityState"] == "active"
        }
        #expect(
            Set(running?.map { String($0.key.split(separator: "-")[0]) } ?? []) == [
                "coffee", "game", "timer", "ride", "workout",
            ])
        #expect(engine.value(at: "/apps/com.example.timer/shortcuts")?.arrayValue?.count == 2)
        #expect(engine.value(at: "/widgets/iphone-15-pro.weather/timeline/entries")?.arrayValue?.count == 30)
        let pending = DemoDriver.batches(for: engine, at: engine.now)
        #expect(pending.isEmpty, "everything is in place: \(pending)")
    }

    @Test(
        "advancing the demo through a virtual day rotates the stack through weather (morning), music, traffic and news (evening)"
    )
    func dayOfRotations() throws {
        var engine = try Self.demo()
        var tops: [String: String] = [:]
        try Self.drive(&engine, hours: 24) { engine in
            let time = String(engine.now.rfc3339.dropFirst(11).prefix(5))
            tops[time] = engine.value(at: "/stacks/iphone-15-pro.home/top")?.stringValue
        }
        for time in ["05:30", "06:00", "07:00", "07:55"] { #expect(tops[time] == "iphone-15-pro.weather", "\(time)") }
        for time in ["08:00", "08:30", "09:55"] { #expect(tops[time] == "iphone-15-pro.music", "\(time)") }
        for time in ["16:00", "17:00", "18:55"] { #expect(tops[time] == "iphone-15-pro.traffic", "\(time)") }
        for time in ["19:00", "20:30", "21:55"] { #expect(tops[time] == "iphone-15-pro.news", "\(time)") }
        let rotations = engine.value(at: "/stacks/iphone-15-pro.home/rotations")?.arrayValue ?? []
        let moments = rotations.map { rotation in
            (
                String(rotation["at"]?.stringValue?.dropFirst(11).prefix(5) ?? ""),
                rotation["to"]?.stringValue?.split(separator: ".").last.map(String.init) ?? ""
            )
        }
        let sequence = moments.map(\.1)
        var wanted = ["music", "traffic", "news"][...]
        for kind in sequence where kind == wanted.first { wanted.removeFirst() }
        #expect(wanted.isEmpty, "rotations: \(moments)")
        #expect(moments.contains { $0 == ("08:00", "music") })
        #expect(moments.contains { $0 == ("16:00", "traffic") })
        #expect(moments.contains { $0 == ("19:00", "news") })
        for rotation in rotations
        where ["music", "traffic", "news"].contains(where: { rotation["to"]?.stringValue?.hasSuffix($0) == true }) {
            #expect(rotation["contributions"]?["habit"]?.numberValue ?? 0 > 0, "habit drives the day: \(rotation)")
        }
        for device in DemoScenario.devices {
            #expect(engine.value(at: JSONPointer(tokens: ["stacks", device.id + ".home", "top"])) != nil)
        }
    }

    @Test("the driver keeps things moving: orders progress, scores change, timers count down, reloads get answered")
    func driver() throws {
        var engine = try Self.demo()
        var coffeeStates: Set<String> = []
        var scores: Set<String> = []
        var remaining: Set<Double> = []
        try Self.drive(&engine, hours: 8, step: 60) { engine in
            for member in engine.value(at: "/activities")?.objectValue?.members ?? []
            where member.value["activityState"] == "active" {
                let state = member.value["content"]?["state"]
                if member.key.hasPrefix("coffee") { coffeeStates.insert(state?["currentStatus"]?.stringValue ?? "") }
                if member.key.hasPrefix("game") { scores.insert("\(state?["homeScore"] ?? .null)") }
                if member.key.hasPrefix("timer") { remaining.insert(state?["remainingSeconds"]?.numberValue ?? -1) }
            }
        }
        #expect(coffeeStates == ["received", "brewing", "outForDelivery"])
        #expect(scores.count > 10)
        #expect(remaining.count >= 5)
        // Timelines asked for a reload after 6 hours; the driver answered.
        #expect(engine.value(at: "/widgets/iphone-se.weather/reload/pending") == false)
        #expect(engine.value(at: "/widgets/iphone-se.weather/reload/count") == 2, "WK-10's first request, then policy")
        #expect(engine.value(at: "/widgets/iphone-se.weather/timeline/setAt") == "2026-11-22T06:00:00Z")
    }

    @Test("LA-15 the demo's phones show different activities; Scores runs on two, each activity with its own push token")
    func phonesDiffer() throws {
        let engine = try Self.demo()
        func lockScreen(_ device: String) -> Set<String> {
            Set(
                engine.value(at: JSONPointer(tokens: ["devices", device, "scene", "lockScreen", "activities"]))?
                    .arrayValue?.compactMap { $0.stringValue?.split(separator: "-").dropLast().joined(separator: "-") } ?? [])
        }
        #expect(lockScreen("iphone-15-pro") == ["coffee", "game", "timer"])
        #expect(lockScreen("iphone-16-pro-max") == ["game-max", "workout"])
        #expect(lockScreen("iphone-se") == ["ride"])
        let games = engine.value(at: "/activities")?.objectValue?.members.filter {
            $0.value["app"] == "com.example.scores" && $0.value["activityState"] == "active"
        } ?? []
        #expect(Set(games.compactMap { $0.value["device"]?.stringValue }) == ["iphone-15-pro", "iphone-16-pro-max"])
        let tokens = Set(games.compactMap { $0.value["pushToken"]?.stringValue })
        #expect(tokens.count == 2)
        #expect(engine.value(at: "/apps/com.example.scores/pushToStartTokens")?.objectValue?.keys.count == 3)
    }

    @Test("LA-16 in the demo: at halftime the Scores app is open on the iPhone 15 Pro; the game leaves that island and comes back")
    func scoresInForeground() throws {
        var engine = try Self.demo()
        var shown: [String: Bool] = [:]
        try Self.drive(&engine, hours: 0.75, step: 60) { engine in
            let minute = String(engine.now.rfc3339.dropFirst(14).prefix(2))
            let island = engine.value(at: "/devices/iphone-15-pro/scene/island")
            let ids = [island?["compact"]?["activity"]] + (island?["minimal"]?.arrayValue ?? []).map { $0["activity"] }
            shown[minute] = ids.contains { $0?.stringValue?.hasPrefix("game-") == true }
            let lockScreen = engine.value(at: "/devices/iphone-15-pro/scene/lockScreen/activities")?.arrayValue ?? []
            #expect(lockScreen.contains { $0.stringValue?.hasPrefix("game-") == true }, "LA-16 keeps it at \(minute)")
        }
        // The driver runs before each step, so what it sets at minute m shows from m + 1.
        for minute in ["20", "25", "26", "33", "40"] { #expect(shown[minute] == true, "\(minute)") }
        for minute in ["27", "30", "32"] { #expect(shown[minute] == false, "\(minute)") }
        #expect(engine.value(at: "/devices/iphone-16-pro-max/foregroundApp") == .null)
    }

    @Test("the demo is deterministic: the same instants give the same bytes; a forecast of its stack has a day ahead")
    func deterministic() throws {
        var first = try Self.demo(at: Self.midnight.adding(seconds: 1234))
        var second = try Self.demo(at: Self.midnight.adding(seconds: 1234))
        try Self.drive(&first, hours: 3) { _ in }
        try Self.drive(&second, hours: 3) { _ in }
        #expect(first.documentBytes == second.documentBytes)
        let forecast = try first.forecast(stack: "iphone-16-pro-max.home")
        #expect(forecast.points.count == 96)
        #expect(Set(forecast.points.compactMap(\.top)).count >= 4)
    }
}
