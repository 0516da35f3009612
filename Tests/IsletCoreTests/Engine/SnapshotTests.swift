import IsletCore
import Testing

/// Engine state → canonical bytes → engine: same document, same next revisions.
@Suite struct SnapshotTests {
    @Test(
        "a restored engine has the same document and produces the same revisions for the same later input",
        arguments: [11, 12, 13] as [UInt64])
    func roundTrip(seed: UInt64) throws {
        let start = PropertyTests.start
        var original = try PropertyTests.busyWorld(clock: .virtual(now: start, rate: 1, atWall: start))
        var generator = CommandGenerator(seed: seed)
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

    @Test("a malformed snapshot is refused with the member named")
    func malformed() throws {
        var snapshot = Simulation().engine.snapshot()
        try snapshot.apply(.replace("/clock/rate", "fast"))
        let error = #expect(throws: APIError.self) { try Engine(snapshot: snapshot, renderer: TestRenderer()) }
        #expect(error?.field == "/clock/rate")
        #expect(throws: APIError.self) { try Engine(snapshot: ["format": "other"], renderer: TestRenderer()) }
    }
}
