import IsletCore
import Testing

/// SS-1 … SS-6 on the virtual clock.
@Suite struct SmartStackRuleTests {
    /// A world with widgets `ids` (app coffee, the given kind) each with one entry of `score`
    /// now (nil: no relevance) and no reload policy.
    static func world(_ widgets: [(String, String, Double?)], weights: JSONValue? = nil) throws -> Simulation {
        var sim = try Simulation.widgets()
        if let weights { try sim.run(["type": "relevance.setWeights", "weights": weights]) }
        for (id, kind, score) in widgets {
            try sim.addWidget(id, kind: kind)
            try sim.setTimeline(id, [sim.entry(0, score: score)], policy: "never")
        }
        return sim
    }

    @Test(
        "SS-1 a stack holds at most 10 widgets, all of one system family and its device, none of another stack; no stacks on the Lock Screen"
    )
    func ss1Structure() throws {
        var sim = try Simulation.widgets()
        for index in 0..<11 { try sim.addWidget("w\(index)") }
        try sim.addWidget("medium", family: "systemMedium")
        try sim.addWidget("elsewhere", device: nil)
        let eleven = (0..<11).map { "w\($0)" }
        let tooMany = #expect(throws: APIError.self) { try sim.stack("s", eleven) }
        #expect(tooMany?.code == .limitExceeded)
        #expect(tooMany?.field == "/commands/0/widgets/10")
        let lock = #expect(throws: APIError.self) { try sim.stack("s", ["w0"], family: "accessoryRectangular") }
        #expect(lock?.message.hasPrefix("SS-1") == true)
        #expect(throws: APIError.self) { try sim.stack("s", ["w0", "medium"]) }
        #expect(throws: APIError.self) { try sim.stack("s", ["w0", "elsewhere"]) }
        try sim.stack("s", Array(eleven.prefix(10)))
        #expect(sim.get("/stacks/s/widgets")?.arrayValue?.count == 10)
        #expect(sim.get("/widgets/w3/stack") == "s")
        #expect(sim.get("/devices/d1/scene/home/stacks") == [["stack": "s", "top": "w0"]])
        #expect(sim.get("/devices/d1/scene/home/widgets") == ["w10", "medium"])
        let taken = #expect(throws: APIError.self) { try sim.stack("t", ["w3"]) }
        #expect(taken?.code == .conflict)
        #expect(throws: APIError.self) { try sim.run(["type": "widget.upsert", "id": "w3", "family": "systemLarge"]) }
        try sim.run(["type": "widget.delete", "id": "w0"])
        #expect(sim.get("/stacks/s/widgets")?.arrayValue?.first == "w1")
        try sim.run(["type": "stack.delete", "id": "s"])
        #expect(sim.get("/widgets/w3/stack") == .null)
        #expect(sim.get("/devices/d1/scene/home/stacks") == [])
        #expect(sim.get("/devices/d1/scene/home/widgets")?.arrayValue?.count == 11)
        try sim.expectPatchesReplay()
    }

    @Test(
        "SS-2 a widget whose entry scores 0 is never on top, however high its other features; a candidate only within its relevance window"
    )
    func ss2Eligibility() throws {
        var sim = try Self.world([("zero", "weather", 0), ("scored", "news", 10)])
        for day in 1...5 { try sim.use("zero", secondsAgo: Double(day) * 86_400 - 60) }
        try sim.run(["type": "relevance.setWeights", "weights": ["habit": 10]])
        try sim.stack("s", ["zero", "scored"])
        #expect(sim.top("s") == "scored")
        #expect(sim.rankingRow("s", "zero")?["eligible"] == false)
        #expect(sim.rankingRow("s", "zero")?["features"]?["habit"] == 1)
        #expect(
            (sim.rankingRow("s", "zero")?["score"]?.numberValue ?? 0)
                > (sim.rankingRow("s", "scored")?["score"]?.numberValue ?? 0))
        for _ in 0..<24 {
            try sim.advance(seconds: 3600)
            #expect(sim.top("s") == "scored")
        }
        // A relevance duration: eligible for 30 minutes from the entry's date, then not.
        try sim.setTimeline("scored", [sim.entry(0, score: 10, duration: 1800)], policy: "never")
        #expect(sim.rankingRow("s", "scored")?["eligible"] == true)
        try sim.advance(seconds: 1799)
        #expect(sim.rankingRow("s", "scored")?["eligible"] == true)
        try sim.advance(seconds: 1)
        #expect(sim.rankingRow("s", "scored")?["eligible"] == false)
        #expect(sim.rankingRow("s", "scored")?["features"]?["timeline"] == 0)
        #expect(sim.top("s") == "scored", "no eligible candidate: the top stays")
        try sim.expectPatchesReplay()
    }

    @Test(
        "SS-3 entry scores are normalized per app and kind by the highest score that kind ever sent, before comparing widgets"
    )
    func ss3Normalization() throws {
        var sim = try Self.world([("small", "weather", 10), ("large", "news", 1000)])
        try sim.stack("s", ["small", "large"])
        #expect(sim.rankingRow("s", "small")?["features"]?["timeline"] == 1)
        #expect(sim.rankingRow("s", "large")?["features"]?["timeline"] == 1)
        // A past entry of the kind raises its scale: 10 is now half of the 20 seen before.
        try sim.setTimeline("small", [sim.entry(0, score: 20), sim.entry(60, score: 10)], policy: "never")
        #expect(sim.rankingRow("s", "small")?["features"]?["timeline"] == 1)
        try sim.advance(seconds: 60)
        #expect(sim.rankingRow("s", "small")?["features"]?["timeline"] == 0.5)
        #expect(sim.rankingRow("s", "large")?["features"]?["timeline"] == 1)
        // Another widget of the same kind shares the scale.
        try sim.addWidget("other", kind: "weather")
        try sim.setTimeline("other", [sim.entry(0, score: 40)], policy: "never")
        #expect(sim.rankingRow("s", "small")?["features"]?["timeline"] == 0.25)
        try sim.expectPatchesReplay()
    }

    @Test("SS-4 a fork to a clock 2,880 half-lives before a use still ranks habits as ratios, finite")
    func habitsLongBeforeTheirUses() throws {
        var sim = try Self.world([("used", "weather", 50), ("other", "news", 50)], weights: ["habit": 1])
        try sim.run(["type": "config.set", "values": ["habitHalfLifeSeconds": 60]])
        try sim.use("used", secondsAgo: 0)
        try sim.stack("s", ["other", "used"])
        // Two days back, the same hour of day: 2^(2,880) overflows a Double.
        let earlier = Simulation.start.adding(seconds: -2 * 86_400)
        sim.engine = sim.engine.forked(
            clock: .virtual(now: earlier, rate: 0, atWall: sim.wall), atWall: sim.wall, tokenSalt: 1)
        try sim.run(["type": "relevance.setWeights", "weights": ["habit": 2]])
        #expect(sim.rankingRow("s", "used")?["features"]?["habit"] == 1)
        #expect(sim.rankingRow("s", "other")?["features"]?["habit"] == 0)
        #expect(sim.top("s") == "used")
    }

    @Test("SS-7 habits and tops of the hour follow the device's own time zone (Asia/Kolkata, +5:30)")
    func ss7TimeZones() throws {
        // Start is 08:00Z, 13:30 in Kolkata. Uses at 08:10Z on earlier days were at 13:40 there.
        var sim = try Self.world([("lunch", "weather", 50), ("other", "news", 50)], weights: ["habit": 1])
        let wrong = #expect(throws: APIError.self) {
            try sim.run(["type": "device.upsert", "id": "d1", "timeZone": "Asia/Atlantis"])
        }
        #expect(wrong?.field == "/commands/0/timeZone")
        try sim.run(["type": "device.upsert", "id": "d1", "timeZone": "Asia/Kolkata"])
        #expect(sim.get("/devices/d1/timeZone") == "Asia/Kolkata")
        for day in 1...3 { try sim.use("lunch", secondsAgo: Double(day) * 86_400 - 600) }
        try sim.stack("s", ["other", "lunch"])
        #expect(sim.rankingRow("s", "lunch")?["features"]?["habit"] == 1, "13:30 local: lunch hour")
        // The local hour ends at 08:30Z: the stack re-ranks there, not at 09:00Z.
        try sim.advance(seconds: 1799)
        #expect(sim.rankingRow("s", "lunch")?["features"]?["habit"] == 1)
        try sim.advance(seconds: 1)
        #expect(sim.rankingRow("s", "lunch")?["features"]?["habit"] == 0, "14:00 local")
        // Uses keep the local hour they happened in (13): in UTC it is now 8, an hour without uses.
        try sim.run(["type": "device.upsert", "id": "d1", "timeZone": "UTC"])
        #expect(sim.rankingRow("s", "lunch")?["features"]?["habit"] == 0, "re-ranked at once on the new grid")
        try sim.run(["type": "device.upsert", "id": "d1", "timeZone": "Asia/Kolkata"])
        let restored = try Engine(snapshot: sim.engine.snapshot(), renderer: TestRenderer())
        #expect(restored.value(at: "/devices/d1/timeZone") == "Asia/Kolkata")
        try sim.expectPatchesReplay()
    }

    @Test("SS-2 relevanceZeroDuration set to zero applies to the entry shown now (duration 0: no longer a candidate), and back again")
    func ss2ZeroDurationChange() throws {
        var sim = try Self.world([("a", "weather", 100), ("b", "news", 10)])
        try sim.stack("s", ["b", "a"])
        #expect(sim.rankingRow("s", "a")?["eligible"] == true, "duration 0 lasts until the next entry by default")
        try sim.run(["type": "config.set", "values": ["relevanceZeroDuration": "zero"]])
        #expect(sim.rankingRow("s", "a")?["eligible"] == false)
        try sim.run(["type": "config.set", "values": ["relevanceZeroDuration": "untilNextEntry"]])
        #expect(sim.rankingRow("s", "a")?["eligible"] == true)
        try sim.expectPatchesReplay()
    }

    @Test("SS-7 across a 30-minute change of offset (Australia/Lord_Howe) a stack re-ranks at each local top of the hour once, and its next re-ranking is always later")
    func ss7HalfHourChange() throws {
        var sim = try Self.world([("a", "weather", 50), ("b", "news", 50)])
        // 2026-04-05 02:00 +11 (15:00Z) becomes 01:30 +10:30: the tops move from :00 to :30 UTC.
        let before = try Instant(rfc3339: "2026-04-04T14:10:00Z")
        sim.engine = sim.engine.forked(
            clock: .virtual(now: before, rate: 0, atWall: sim.wall), atWall: sim.wall, tokenSalt: 1)
        try sim.run(["type": "device.upsert", "id": "d1", "timeZone": "Australia/Lord_Howe"])
        try sim.stack("s", ["a", "b"])
        var reached: [String] = []
        for _ in 0..<4 {
            let next = try #require(sim.engine.nextDeadline)
            #expect(next > sim.engine.now, "a deadline after now, not at it")
            try sim.advance(to: next)
            reached.append(next.rfc3339)
        }
        #expect(reached == ["2026-04-04T15:30:00Z", "2026-04-04T16:30:00Z", "2026-04-04T17:30:00Z", "2026-04-04T18:30:00Z"])
    }

    @Test(
        "SS-4 score = Σ weight × feature, features in [0, 1], contributions add up to the score exactly; habit follows use at this hour of day"
    )
    func ss4Model() throws {
        var sim = try Self.world([("morning", "weather", 30), ("nine", "news", 70), ("idle", "music", 50)])
        for day in 1...3 {
            try sim.use("morning", secondsAgo: Double(day) * 86_400 - 1800)
            try sim.use("nine", secondsAgo: Double(day) * 86_400 - 3600 - 600)
        }
        try sim.stack("s", ["morning", "nine", "idle"])
        try sim.run(["type": "relevance.setWeights", "weights": ["habit": 0.75, "freshness": 0.3]])
        let weights = try #require(sim.get("/stacks/s/relevance/weights"))
        #expect(weights == ["freshness": 0.3, "habit": 0.75, "rotationPenalty": -0.3, "timeline": 1])
        for hour in 0..<3 {
            for row in sim.get("/stacks/s/ranking")?.arrayValue ?? [] {
                let contributions = try #require(row["contributions"]?.objectValue)
                let features = try #require(row["features"]?.objectValue)
                // In key order, as a client adds the members up.
                let sum = contributions.members.reduce(0.0) { $0 + ($1.value.numberValue ?? .nan) }
                #expect(sum == row["score"]?.numberValue, "hour \(hour): \(row)")
                for member in features.members {
                    let value = try #require(member.value.numberValue)
                    #expect((0...1).contains(value))
                    #expect(
                        contributions[member.key]?.numberValue == value * (weights[member.key]?.numberValue ?? .nan))
                }
            }
            if hour == 0 {
                #expect(sim.rankingRow("s", "morning")?["features"]?["habit"] == 1)
                #expect(sim.rankingRow("s", "nine")?["features"]?["habit"] == 0)
            }
            if hour == 1 {
                #expect(sim.rankingRow("s", "morning")?["features"]?["habit"] == 0)
                #expect(sim.rankingRow("s", "nine")?["features"]?["habit"] == 1)
                #expect(sim.rankingRow("s", "nine")?["features"]?["freshness"] == 0.5)
                #expect(sim.rankingRow("s", "idle")?["features"]?["habit"] == 0)
            }
            try sim.advance(seconds: 3600)
        }
        try sim.expectPatchesReplay()
    }

    @Test(
        "SS-5 a better candidate within the dwell time waits until the top has stayed minDwellSeconds; the rotation is recorded with the winner's contributions"
    )
    func ss5Dwell() throws {
        var sim = try Self.world([("a", "weather", 50), ("b", "weather", 10)])
        try sim.stack("s", ["a", "b"])
        #expect(sim.get("/stacks/s/topSince") == "2026-11-22T08:00:00Z")
        try sim.advance(seconds: 300)
        try sim.setTimeline("b", [sim.entry(0, score: 100)], policy: "never")
        #expect(sim.top("s") == "a", "b is better but a has been on top for 5 minutes only")
        #expect(sim.rankingRow("s", "b")?["score"] == 1.1)
        try sim.advance(seconds: 599)
        try sim.advance(seconds: 1)
        #expect(sim.top("s") == "b")
        #expect(sim.get("/stacks/s/topSince") == "2026-11-22T08:15:00Z")
        let rotation = try #require(sim.get("/stacks/s/rotations")?.arrayValue?.last)
        #expect(rotation["at"] == "2026-11-22T08:15:00Z")
        #expect(rotation["from"] == "a")
        #expect(rotation["to"] == "b")
        #expect(rotation["score"] == 1.1)
        #expect(rotation["contributions"] == ["freshness": 0.1, "habit": 0, "rotationPenalty": 0, "timeline": 1])
        #expect(sim.rankingRow("s", "a")?["contributions"]?["rotationPenalty"] == -0.3, "a just lost the top")
        #expect(sim.get("/devices/d1/scene/home/stacks") == [["stack": "s", "top": "b"]])
        try sim.expectPatchesReplay()
    }

    @Test("SS-5 turning smart rotation off puts the first widget on top and ranks it as the top")
    func ss5OffRanksTheNewTop() throws {
        var sim = try Self.world([("a", "weather", 50), ("b", "weather", 10)])
        try sim.run(["type": "relevance.setWeights", "weights": [:], "minDwellSeconds": 0])
        try sim.stack("s", ["a", "b"])
        try sim.setTimeline("b", [sim.entry(0, score: 100)], policy: "never")
        #expect(sim.top("s") == "b")
        #expect(sim.rankingRow("s", "a")?["contributions"]?["rotationPenalty"] == -0.3, "a just lost the top")
        try sim.stack("s", ["a", "b"], extra: ["smartRotate": false])
        #expect(sim.top("s") == "a", "smart rotation off: the first widget")
        #expect(
            sim.rankingRow("s", "a")?["contributions"]?["rotationPenalty"] == 0,
            "the top carries no rotation penalty, whichever rule put it there")
        let ranking = sim.get("/stacks/s/ranking")
        try sim.run(["type": "relevance.setWeights", "weights": [:]])
        #expect(sim.get("/stacks/s/ranking") == ranking, "ranking again at the same instant changes nothing")
        try sim.expectPatchesReplay()
    }

    @Test("SS-5 a candidate must beat the top by more than the hysteresis")
    func ss5Hysteresis() throws {
        var sim = try Self.world([("a", "weather", 50), ("b", "weather", 10)])
        try sim.run([
            "type": "relevance.setWeights", "weights": ["freshness": 0], "hysteresis": 0.5, "minDwellSeconds": 0,
        ])
        try sim.stack("s", ["a", "b"])
        try sim.setTimeline("b", [sim.entry(0, score: 70)], policy: "never")
        #expect(sim.rankingRow("s", "b")?["score"] == 1)
        #expect(sim.rankingRow("s", "a")?["score"]?.numberValue.map { abs($0 - 50.0 / 70.0) < 1e-12 } == true)
        #expect(sim.top("s") == "a", "1 − 0.714 is less than 0.5")
        try sim.setTimeline("a", [sim.entry(0, score: 20)], policy: "never")
        #expect(sim.top("s") == "b", "1 − 0.286 beats the hysteresis")
        try sim.expectPatchesReplay()
    }

    @Test(
        "SS-5 rotations of one widget to the top are capped per rolling 24 h; smart rotation off keeps the first widget on top"
    )
    func ss5CapAndOff() throws {
        var configuration = SimulatorConfiguration()
        configuration.stackRotationsPerWidgetPerDay = 1
        var sim = Simulation(configuration: configuration)
        try sim.setUp(apps: ["coffee"])
        try sim.run([
            "type": "relevance.setWeights", "weights": ["rotationPenalty": 0], "hysteresis": 0, "minDwellSeconds": 0,
        ])
        for (id, score) in [("a", 50.0), ("b", 10.0)] {
            try sim.addWidget(id)
            try sim.setTimeline(id, [sim.entry(0, score: score)], policy: "never")
        }
        try sim.stack("s", ["a", "b"])
        try sim.advance(seconds: 3600)
        try sim.setTimeline("b", [sim.entry(0, score: 100)], policy: "never")
        #expect(sim.top("s") == "b")
        try sim.advance(seconds: 3600)
        try sim.setTimeline("a", [sim.entry(0, score: 200)], policy: "never")
        try sim.advance(seconds: 3600)
        try sim.setTimeline("b", [sim.entry(0, score: 400)], policy: "never")
        #expect(sim.top("s") == "a", "b already rotated to the top once in 24 h")
        let bRotated = Simulation.start.adding(seconds: 3600)
        try sim.advance(to: bRotated.adding(seconds: 86_400 - 1))
        try sim.advance(seconds: 1)
        #expect(sim.top("s") == "b", "its rotation of 24 h ago left the window")
        #expect(sim.get("/stacks/s/rotations")?.arrayValue?.count == 3)
        try sim.stack("s", ["a", "b"], extra: ["smartRotate": false])
        #expect(sim.top("s") == "a", "smart rotation off: the first widget")
        try sim.setTimeline("b", [sim.entry(0, score: 1000)], policy: "never")
        try sim.advance(seconds: 7200)
        try sim.expectPatchesReplay()
    }

    @Test("SS-5 the document keeps the last 50 rotations")
    func ss5RotationLog() throws {
        var sim = try Self.world([("a", "weather", 50), ("b", "weather", 10)])
        try sim.run(["type": "config.set", "values": ["stackRotationsPerWidgetPerDay": 1000]])
        try sim.run(["type": "relevance.setWeights", "weights": ["rotationPenalty": 0], "minDwellSeconds": 0])
        try sim.stack("s", ["a", "b"])
        var score = 100.0
        for round in 0..<60 {
            try sim.advance(seconds: 60)
            score *= 2
            try sim.setTimeline(round % 2 == 0 ? "b" : "a", [sim.entry(0, score: score)], policy: "never")
        }
        let rotations = try #require(sim.get("/stacks/s/rotations")?.arrayValue)
        #expect(rotations.count == 50)
        #expect(rotations.last?["at"] == .string(sim.engine.now.rfc3339))
        try sim.expectPatchesReplay()
    }

    @Test(
        "SS-5 the rotation log's operations: more rotations in one revision than the log keeps, a restored stack, and a stack deleted and created again in one batch"
    )
    func ss5RotationLogOperations() throws {
        var sim = try Self.world([("a", "weather", 50), ("b", "weather", 10)])
        try sim.run(["type": "config.set", "values": ["stackRotationsPerWidgetPerDay": 1000]])
        try sim.run(["type": "relevance.setWeights", "weights": ["rotationPenalty": 0], "minDwellSeconds": 0])
        try sim.stack("s", ["a", "b"])
        // Every minute the other widget is far more relevant: one rotation a minute.
        func flipping(_ odd: Bool) -> [JSONValue] {
            (1...70).map { sim.entry(Double($0) * 60, score: ($0 % 2 == 1) == odd ? 1000 : 1) }
        }
        try sim.setTimeline("a", flipping(true), policy: "never")
        try sim.setTimeline("b", flipping(false), policy: "never")
        try sim.advance(seconds: 20 * 60)
        let before = try #require(sim.get("/stacks/s/rotations")?.arrayValue)
        #expect(before.count == 19, "minute 1 leaves a on top; every later minute rotates")
        let jump = try sim.advance(seconds: 60 * 60)
        let rotations = try #require(sim.get("/stacks/s/rotations")?.arrayValue)
        #expect(rotations.count == 50)
        #expect(rotations.last?["at"] == sim.date(after: -10 * 60))
        let logOps = jump.ops.filter { $0.path.isWithin("/stacks/s/rotations") }
        #expect(logOps.filter { $0.kind == .remove }.count == before.count, "the published records leave")
        #expect(logOps.filter { $0.kind == .add }.count == 50, "the 50 kept of the 50 new ones arrive")
        try sim.expectPatchesReplay()

        let restored = try Engine(snapshot: try JSONParser().parse(sim.engine.snapshotBytes), renderer: TestRenderer())
        #expect(restored.documentValue == sim.engine.documentValue)
        #expect(restored.snapshotBytes == sim.engine.snapshotBytes)

        let recreated = try sim.run(
            ["type": "stack.delete", "id": "s"],
            ["type": "stack.upsert", "id": "s", "device": "d1", "family": "systemSmall", "widgets": ["a", "b"]])
        #expect(recreated.ops.contains { $0.kind == .replace && $0.path == "/stacks/s" })
        #expect(sim.get("/stacks/s/rotations") == [])
        try sim.setTimeline("a", flipping(true), policy: "never")
        try sim.setTimeline("b", flipping(false), policy: "never")
        try sim.advance(seconds: 5 * 60)
        #expect(sim.get("/stacks/s/rotations")?.arrayValue?.count == 5)
        try sim.expectPatchesReplay()
    }

    @Test(
        "SS-6 changing the global weights re-ranks every stack in the same revision; a stack's own weights override them"
    )
    func ss6Weights() throws {
        var sim = try Simulation.widgets()
        try sim.run(["type": "relevance.setWeights", "weights": ["habit": 0]])
        for stack in ["s1", "s2"] {
            for (widget, score) in [("a", 10.0), ("b", 5.0)] {
                try sim.addWidget(stack + widget)
                try sim.setTimeline(stack + widget, [sim.entry(0, score: score)], policy: "never")
            }
            for day in 1...3 { try sim.use(stack + "b", secondsAgo: Double(day) * 86_400) }
            try sim.stack(stack, [stack + "a", stack + "b"])
            #expect(sim.top(stack) == stack + "a")
        }
        try sim.advance(seconds: 900)
        let revision = try sim.run(["type": "relevance.setWeights", "weights": ["habit": 1]])
        #expect(sim.top("s1") == "s1b")
        #expect(sim.top("s2") == "s2b")
        let paths = Set(revision.ops.map(\.path.description))
        #expect(paths.contains("/stacks/s1/top"))
        #expect(paths.contains("/stacks/s2/top"))
        #expect(paths.contains("/relevance/weights/habit"))
        #expect(sim.get("/relevance/weights/habit") == 1)
        try sim.run(["type": "relevance.setWeights", "stack": "s2", "weights": ["habit": 0.25]])
        #expect(sim.get("/stacks/s2/relevance/weights/habit") == 0.25)
        #expect(sim.get("/stacks/s2/relevance/overrides") == ["weights": ["habit": 0.25]])
        #expect(sim.get("/stacks/s1/relevance/weights/habit") == 1)
        #expect(sim.rankingRow("s2", "s2b")?["contributions"]?["habit"] == 0.25)
        try sim.run(["type": "relevance.setWeights", "stack": "s2", "weights": ["habit": nil]])
        #expect(sim.get("/stacks/s2/relevance/overrides") == [:])
        let unknown = #expect(throws: APIError.self) {
            try sim.run(["type": "relevance.setWeights", "stack": "nope", "weights": ["habit": 1]])
        }
        #expect(unknown?.code == .notFound)
        try sim.expectPatchesReplay()
    }
}
