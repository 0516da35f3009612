import IsletCore
import IsletTestSupport
import Testing

/// Engine state → canonical bytes → engine: same document, same next revisions.
@Suite struct SnapshotTests {
    @Test(
        "a restored engine has the same document and produces the same revisions for the same later input",
        arguments: [11, 12, 13] as [UInt64])
    func roundTrip(seed: UInt64) throws {
        let start = PropertyTests.start
        var original = try PropertyTests.busyWorld(clock: .virtual(now: start, rate: 1, atWall: start))
        var generator = RandomCommands(seed: seed, widgets: true, clockRates: [0, 1, 10])
        var wall = start
        for _ in 0..<60 {
            wall = wall.adding(seconds: Double(generator.int(1...900)))
            _ = try? original.apply(generator.batch(now: original.simulatedInstant(atWall: wall)), at: wall)
        }
        let bytes = original.snapshotBytes
        var restored = try Engine(snapshot: try JSONParser().parse(bytes), renderer: TestRenderer())
        #expect(restored.documentBytes == original.documentBytes)
        #expect(restored.snapshotBytes == bytes)
        #expect(restored.rev == original.rev)
        #expect(restored.nextDeadline == original.nextDeadline)
        for step in 0..<120 {
            wall = wall.adding(seconds: Double(generator.int(1...1800)))
            if step % 4 == 0 {
                #expect(restored.advance(to: wall) == original.advance(to: wall))
                continue
            }
            let batch = generator.batch(now: original.simulatedInstant(atWall: wall))
            let a = Result { () throws(APIError) in try original.apply(batch, at: wall) }
            let b = Result { () throws(APIError) in try restored.apply(batch, at: wall) }
            #expect(a == b)
        }
        #expect(restored.documentBytes == original.documentBytes)
        #expect(restored.snapshotBytes == original.snapshotBytes)
    }

    @Test("templates, queues, held pushes and budgets survive a snapshot")
    func richState() throws {
        var sim = Simulation()
        try sim.setUp(apps: ["coffee", "ride"])
        try sim.run(["type": "config.set", "values": ["pushBudgetPerHour": 1, "lowPriorityDelaySeconds": 60]])
        try sim.run([
            "type": "template.put", "app": "coffee", "target": "activity:CoffeeDeliveryAttributes",
            "slot": "lockScreen", "html": "<p>{{state.status}}</p>",
        ])
        try sim.request("a1", extra: ["alert": ["title": "One"]])
        try sim.request("r1", app: "ride", extra: ["alert": ["title": "Two"]])
        let push: JSONValue = [
            "type": "activity.update", "id": "a1", "content": ["state": ["status": "p"]],
            "delivery": ["source": "push"],
        ]
        try sim.run(push, push)
        try sim.run([
            "type": "activity.update", "id": "a1", "content": ["state": ["status": "low"]],
            "delivery": ["source": "push", "priority": 5],
        ])
        #expect(sim.get("/apps/coffee/pending") == ["throttled": 1, "deferred": 1])
        #expect(sim.get("/activities/a1/render/lockScreen") == "<p>p</p>")
        var restored = try Engine(snapshot: sim.engine.snapshot(), renderer: TestRenderer())
        #expect(restored.documentBytes == sim.engine.documentBytes)
        let next = try restored.apply([["type": "clock.advance", "seconds": 3600]] as [JSONValue], at: sim.wall)
        let expected = try sim.advance(seconds: 3600)
        #expect(next == expected)
        #expect(restored.value(at: "/activities/a1/content/state/status") == "p")
    }

    @Test(
        "widgets, timelines, held content, reload budgets, habits, stacks, rotations, weights and shortcuts survive a snapshot"
    )
    func widgetState() throws {
        var sim = try Simulation.widgets()
        try sim.run(["type": "relevance.setWeights", "weights": ["habit": 2], "minDwellSeconds": 0])
        try sim.run([
            "type": "shortcut.upsert", "app": "coffee", "id": "order", "phrases": ["Order with ${applicationName}"],
            "intent": [
                "type": "liveActivity", "attributesType": "CoffeeDeliveryAttributes", "content": ["state": [:]],
            ],
        ])
        try sim.run(["type": "shortcut.run", "app": "coffee", "id": "order"])
        for (index, id) in ["a", "b", "c"].enumerated() {
            try sim.addWidget(id, kind: ["weather", "news", "music"][index], extra: ["placeholder": ["x": 1]])
            let entries = (0..<6).map {
                sim.entry(Double($0 * 1800 + index * 300), score: Double(($0 + index) % 4) * 10, duration: 900)
            }
            try sim.setTimeline(id, entries)
            try sim.use(id, secondsAgo: Double(index + 1) * 3600)
        }
        try sim.addWidget("lock", family: "accessoryInline")
        try sim.stack("s", ["a", "b", "c"])
        try sim.run(["type": "relevance.setWeights", "stack": "s", "weights": ["freshness": 0.5]])
        try sim.run(["type": "widget.reload", "id": "a", "reason": "app"])
        try sim.run(["type": "widget.reload", "id": "a", "reason": "app"])
        try sim.advance(seconds: 5000)
        try sim.setTimeline("b", [sim.entry(4000, score: 90)])
        #expect(sim.get("/widgets/b/current/previous") == true)
        #expect((sim.get("/stacks/s/rotations")?.arrayValue?.count ?? 0) > 0)
        let bytes = sim.engine.snapshotBytes
        var restored = try Engine(snapshot: try JSONParser().parse(bytes), renderer: TestRenderer())
        #expect(restored.documentBytes == sim.engine.documentBytes)
        #expect(restored.snapshotBytes == bytes)
        for step in 0..<12 {
            let expected = try sim.advance(seconds: 1700)
            let next = try restored.apply([["type": "clock.advance", "seconds": 1700]] as [JSONValue], at: sim.wall)
            #expect(next == expected, "step \(step)")
        }
        #expect(restored.documentBytes == sim.engine.documentBytes)
        #expect(
            try restored.forecast(stack: "s", ForecastRequest(hours: 4))
                == sim.engine.forecast(stack: "s", ForecastRequest(hours: 4)))
    }

    @Test("a malformed snapshot is refused with the member named")
    func malformed() throws {
        var snapshot = Simulation().engine.snapshot()
        try snapshot.apply(.replace("/clock/rate", "fast"))
        let error = #expect(throws: APIError.self) { try Engine(snapshot: snapshot, renderer: TestRenderer()) }
        #expect(error?.field == "/clock/rate")
        #expect(throws: APIError.self) { try Engine(snapshot: ["format": "other"], renderer: TestRenderer()) }
        // A stack that holds a widget twice (no command makes one) is refused, not ranked.
        var sim = Simulation()
        try sim.setUp()
        try sim.addWidget("a")
        try sim.addWidget("b")
        try sim.stack("s", ["a", "b"])
        var twice = sim.engine.snapshot()
        let first = try #require(twice[try JSONPointer(parsing: "/stacks/0/members/0")])
        try twice.apply(.replace("/stacks/0/members/1", first))
        let refused = #expect(throws: APIError.self) { try Engine(snapshot: twice, renderer: TestRenderer()) }
        #expect(refused?.message.contains("holds a widget twice") == true)
    }

    @Test("a fork publishes what its first revisions touch, though its source touched the same in revisions of the same numbers")
    func forkPublishesItsRevisions() throws {
        var sim = Simulation()
        let widgets: [JSONValue] = ["a", "b"].enumerated().flatMap { index, id -> [JSONValue] in
            [
                [
                    "type": "widget.upsert", "id": .string(id), "app": "coffee", "kind": "weather",
                    "family": "systemSmall", "device": "d1",
                ],
                [
                    "type": "widget.setTimeline", "id": .string(id), "policy": "never",
                    "entries": .array((1...40).map { sim.entry(Double($0) * 60, score: $0 % 2 == index ? 1000 : 1) }),
                ],
            ]
        }
        // Revision 1 touches both widgets and the stack (their mark is 1); revision 2 neither.
        try sim.run(
            batch: [
                ["type": "device.upsert", "id": "d1"], ["type": "app.upsert", "id": "coffee"],
                ["type": "config.set", "values": ["stackRotationsPerWidgetPerDay": 1000]],
                ["type": "relevance.setWeights", "weights": ["rotationPenalty": 0], "minDwellSeconds": 0],
            ] + widgets + [["type": "stack.upsert", "id": "s", "device": "d1", "family": "systemSmall", "widgets": ["a", "b"]]])
        try sim.run(["type": "device.upsert", "id": "d2"])
        var fork = sim.engine.forked(clock: nil, atWall: sim.wall, tokenSalt: 5)
        var mirror = fork.documentValue
        let steps: [JSONValue] = [
            ["type": "widget.upsert", "id": "a", "configuration": ["fork": 1]],
            ["type": "clock.advance", "seconds": 150],
            ["type": "clock.advance", "seconds": 60],
        ]
        for command in steps {
            let revision = try fork.apply([command], at: sim.wall)
            mirror = try JSONPatch.apply(revision.ops, to: mirror)
            #expect(mirror == fork.documentValue, "the fork's revision \(revision.rev)")
        }
        #expect(fork.value(at: "/widgets/a/configuration") == ["fork": 1])
        #expect(fork.value(at: "/stacks/s/rotations")?.arrayValue?.isEmpty == false)
    }

    @Test("a fork that starts later is its source run forward: LA-7's end happens 8 hours after the start, not at the fork's start, and the fork equals its source advanced to that instant")
    func forkLaterRunsForward() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        let later = Simulation.start.adding(seconds: 10.5 * 3600)
        let fork = sim.engine.forked(
            clock: .virtual(now: later, rate: 0, atWall: sim.wall), atWall: sim.wall, tokenSalt: 0)
        #expect(fork.rev == 0)
        #expect(fork.value(at: "/activities/a1/activityState") == "ended")
        #expect(fork.value(at: "/activities/a1/endedAt") == .string(Simulation.start.adding(seconds: 8 * 3600).rfc3339))
        #expect(fork.value(at: "/clock/now") == .string(later.rfc3339))
        // The same world as the source stepped to that instant.
        try sim.advance(to: later)
        #expect(fork.value(at: "/activities") == sim.get("/activities"))
        #expect(fork.value(at: "/devices") == sim.get("/devices"))
        // Published from revision 0 on like any fork: a command's patch applies to its document.
        var forkSim = fork
        var mirror = forkSim.documentValue
        let revision = try forkSim.apply([["type": "device.upsert", "id": "d2"]], at: sim.wall)
        mirror = try JSONPatch.apply(revision.ops, to: mirror)
        #expect(mirror == forkSim.documentValue)
    }

    @Test(
        "a fork's token salt survives a snapshot across its whole 53-bit range",
        arguments: [1, 8_999_999_999_999_999, 9_007_199_254_740_991] as [UInt64])
    func tokenSalt(salt: UInt64) throws {
        var sim = Simulation()
        try sim.setUp()
        let fork = sim.engine.forked(clock: nil, atWall: sim.wall, tokenSalt: salt)
        let restored = try Engine(snapshot: try JSONParser().parse(fork.snapshotBytes), renderer: TestRenderer())
        #expect(restored.snapshotBytes == fork.snapshotBytes)
    }
}
