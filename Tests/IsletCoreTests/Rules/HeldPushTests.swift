@testable import IsletCore
import Testing

/// AP-9 and the caps on held pushes (issue 18): over budget only the newest throttled push per
/// activity or channel waits, ends are never lost, and both queues stay bounded.
@Suite struct HeldPushTests {
    static func push(_ id: String, _ status: String, event: String = "update", priority: Int = 10) -> JSONValue {
        var command: JSONObject = [
            "type": .string("activity.\(event)"), "id": .string(id),
            "delivery": ["source": "push", "priority": .number(Double(priority)), "apnsId": .string("\(id)-\(status)")],
        ]
        command["content"] = ["state": ["status": .string(status)]]
        return .object(command)
    }

    /// Activities `ids` of app `coffee` on a budget of one push per hour, already drawn.
    static func overBudget(_ ids: [String], configure: (inout Simulation) -> Void = { _ in }) throws -> Simulation {
        var sim = Simulation()
        configure(&sim)
        try sim.setUp()
        try sim.run(["type": "config.set", "values": ["pushBudgetPerHour": 1, "maxActivitiesPerApp": 10]])
        for id in ids { try sim.request(id, extra: ["pushType": "token"]) }
        let first = try sim.run(Self.push(ids[0], "budget"))
        #expect(first.results[0]["applied"] == true)
        return sim
    }

    /// The app's delivery records with `reason`, as `(activity or channel, apnsId)`.
    static func records(_ sim: Simulation, reason: String) -> [[JSONValue?]] {
        (sim.get("/apps/coffee/deliveries")?.arrayValue ?? []).filter { $0["reason"] == .string(reason) }.map {
            [$0["outcome"], $0["activity"] == .null ? $0["channel"] : $0["activity"], $0["apnsId"]]
        }
    }

    @Test("AP-9 over budget only the newest throttled update per activity waits; the older is recorded as coalesced")
    func ap9CoalescesUpdates() throws {
        var sim = try Self.overBudget(["a1", "a2"])
        #expect(try sim.run(Self.push("a1", "s2")).results[0] == ["applied": false, "reason": "throttled"])
        try sim.run(Self.push("a2", "t1"))
        let newer = try sim.run(Self.push("a1", "s3"))
        #expect(newer.results[0] == ["applied": false, "reason": "throttled"])
        #expect(newer.discards.coalescedPushes == 1)
        #expect(sim.get("/apps/coffee/pending/throttled") == 2)
        #expect(Self.records(sim, reason: "coalesced") == [["ignored", "a1", "a1-s2"]])
        // Arrival order: a2's update waited first, a1's newest came after it.
        try sim.advance(seconds: 3600)
        #expect(sim.get("/activities/a2/content/state/status") == "t1")
        #expect(sim.get("/activities/a1/content/state/status") == "budget")
        try sim.advance(seconds: 3600)
        #expect(sim.get("/activities/a1/content/state/status") == "s3")
        #expect(sim.get("/apps/coffee/pending/throttled") == 0)
        try sim.expectPatchesReplay()
    }

    @Test("AP-9 the newest is the later timestamp: an older push arriving after a newer one waiting is the one coalesced (LA-6 would refuse it after the newer)")
    func ap9NewestByTimestamp() throws {
        var sim = try Self.overBudget(["a1"])
        func push(_ status: String, _ seconds: Double) -> JSONValue {
            guard case .object(var command) = Self.push("a1", status) else { return .null }
            command["timestamp"] = sim.date(after: seconds)
            return .object(command)
        }
        try sim.run(push("t30", 30))
        let older = try sim.run(push("t20", 20))
        #expect(older.results[0] == ["applied": false, "reason": "coalesced"], "the older is let go at once")
        #expect(Self.records(sim, reason: "coalesced") == [["ignored", "a1", "a1-t20"]])
        try sim.run(push("t40", 40))
        #expect(Self.records(sim, reason: "coalesced") == [["ignored", "a1", "a1-t20"], ["ignored", "a1", "a1-t30"]])
        try sim.advance(seconds: 3600)
        #expect(sim.get("/activities/a1/content/state/status") == "t40")
        try sim.expectPatchesReplay()
    }

    @Test("LA-11 under a budget of 0 a throttled push waits without a reset every window, and goes when config.set raises it")
    func zeroBudgetWaitsForConfig() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.run(["type": "config.set", "values": ["pushBudgetPerHour": 0, "budgetWindowSeconds": 1]])
        try sim.request("a1", extra: ["pushType": "token"])
        #expect(try sim.run(Self.push("a1", "s1")).results[0] == ["applied": false, "reason": "throttled"])
        // One window's reset, and no window after it: an hour is not 3,600 transitions.
        let hour = try sim.advance(seconds: 3600)
        #expect(hour.transitions == 1, "\(hour.transitions) transitions")
        #expect(sim.get("/apps/coffee/pending/throttled") == 1)
        let raised = try sim.run(["type": "config.set", "values": ["pushBudgetPerHour": 5]])
        #expect(raised.ops.contains { $0.path == "/activities/a1/content/state/status" })
        #expect(sim.get("/activities/a1/content/state/status") == "s1")
        #expect(sim.get("/apps/coffee/pending/throttled") == 0)
        try sim.expectPatchesReplay()
    }

    @Test("LA-11 a config.set that raises the budget mid-window delivers the throttled push at once, so a later push does not overtake it and is not replaced by it at the window's end")
    func raisedBudgetKeepsArrivalOrder() throws {
        var sim = try Self.overBudget(["a1"])
        #expect(try sim.run(Self.push("a1", "held")).results[0] == ["applied": false, "reason": "throttled"])
        let raised = try sim.run(["type": "config.set", "values": ["pushBudgetPerHour": 5]])
        #expect(raised.ops.contains { $0.path == "/activities/a1/content/state/status" })
        #expect(sim.get("/activities/a1/content/state/status") == "held")
        #expect(sim.get("/apps/coffee/pending/throttled") == 0)
        #expect(try sim.run(Self.push("a1", "newer")).results[0]["applied"] == true)
        try sim.advance(seconds: 3600)
        #expect(sim.get("/activities/a1/content/state/status") == "newer")
        try sim.expectPatchesReplay()
    }

    @Test("AP-9 an end is never lost: it replaces a waiting update, and a later update does not replace it")
    func ap9KeepsEnds() throws {
        var sim = try Self.overBudget(["a1"])
        try sim.run(Self.push("a1", "s2"))
        let end = try sim.run(Self.push("a1", "final", event: "end"))
        #expect(end.results[0] == ["applied": false, "reason": "throttled"])
        #expect(end.discards.coalescedPushes == 1)
        let late = try sim.run(Self.push("a1", "late"))
        #expect(late.results[0] == ["applied": false, "reason": "coalesced"])
        #expect(late.discards.coalescedPushes == 1)
        #expect(sim.get("/apps/coffee/pending/throttled") == 1)
        #expect(Self.records(sim, reason: "coalesced") == [["ignored", "a1", "a1-s2"], ["ignored", "a1", "a1-late"]])
        try sim.advance(seconds: 3600)
        #expect(sim.state(of: "a1") == "ended")
        #expect(sim.get("/activities/a1/content/state/status") == "final")
        try sim.expectPatchesReplay()
    }

    @Test("AP-9 a newer broadcast replaces an older one waiting on its channel; another channel keeps its own")
    func ap9CoalescesBroadcasts() throws {
        var sim = try Self.overBudget(["a1"])
        var channels: [String] = []
        for _ in 0..<2 {
            let created = try sim.run(["type": "channel.create", "app": "coffee"])
            channels.append(try #require(created.results[0]["id"]?.stringValue))
        }
        for (channel, subscriber) in zip(channels, ["c1", "c2"]) {
            try sim.request(subscriber, extra: ["pushType": ["channel": .string(channel)]])
        }
        func broadcast(_ channel: String, _ status: String) -> JSONValue {
            [
                "type": "channel.broadcast", "app": "coffee", "channel": .string(channel),
                "content": ["state": ["status": .string(status)]], "delivery": ["apnsId": .string(status)],
            ]
        }
        try sim.run(broadcast(channels[0], "old"), broadcast(channels[1], "other"))
        let newer = try sim.run(broadcast(channels[0], "new"))
        #expect(newer.results[0] == ["applied": false, "reason": "throttled"])
        #expect(newer.discards.coalescedPushes == 1)
        #expect(Self.records(sim, reason: "coalesced") == [["ignored", .string(channels[0]), "old"]])
        try sim.run(["type": "config.set", "values": ["pushBudgetPerHour": 5]])
        try sim.advance(seconds: 3600)
        #expect(sim.get("/activities/c1/content/state/status") == "new")
        #expect(sim.get("/activities/c2/content/state/status") == "other")
    }

    @Test("AP-9 past the per-app cap the oldest throttled update is dropped, never an end")
    func throttledCap() throws {
        var sim = try Self.overBudget(["a1", "a2", "a3", "a4", "a5"]) {
            $0.engine.bounds.throttledPerApp = 3
        }
        try sim.run(Self.push("a1", "end", event: "end"), Self.push("a2", "u"), Self.push("a3", "u"))
        let full = try sim.run(Self.push("a4", "u"))
        #expect(full.results[0] == ["applied": false, "reason": "throttled"])
        #expect(full.discards.droppedThrottled == 1)
        #expect(Self.records(sim, reason: "queue_full") == [["ignored", "a2", "a2-u"]])
        // a3's end coalesces its update; a5's end then pushes out a4's update, the last one.
        try sim.run(Self.push("a3", "end", event: "end"), Self.push("a5", "end", event: "end"))
        #expect(sim.get("/apps/coffee/pending/throttled") == 3)
        let update = try sim.run(Self.push("a2", "again"))
        #expect(update.results[0] == ["applied": false, "reason": "queue_full"])
        let end = try sim.run(Self.push("a2", "end", event: "end"))
        #expect(end.results[0] == ["applied": false, "reason": "throttled"])
        #expect(sim.get("/apps/coffee/pending/throttled") == 4)
        #expect(Self.records(sim, reason: "queue_full").map { $0[1] } == ["a2", "a4", "a2"])
        try sim.run(["type": "config.set", "values": ["pushBudgetPerHour": 10]])
        try sim.advance(seconds: 3600)
        for id in ["a1", "a2", "a3", "a5"] { #expect(sim.state(of: id) == "ended", "\(id)") }
        #expect(sim.state(of: "a4") == "active")
        try sim.expectPatchesReplay()
    }

    @Test("LA-11 past the per-app cap the oldest deferred update is dropped; an end goes only for a later end")
    func deferredCap() throws {
        var sim = Simulation()
        sim.engine.bounds.deferredPerApp = 2
        try sim.setUp()
        try sim.run(["type": "config.set", "values": ["lowPriorityDelaySeconds": 30]])
        try sim.request("a1")
        try sim.run(Self.push("a1", "x1", priority: 5), Self.push("a1", "x2", priority: 5))
        let third = try sim.run(Self.push("a1", "x3", priority: 5))
        #expect(third.results[0]["reason"] == "deferred")
        #expect(third.discards.droppedDeferred == 1)
        try sim.run(Self.push("a1", "e1", event: "end", priority: 5), Self.push("a1", "e2", event: "end", priority: 5))
        // The updates went first; now e1 goes, as e2 repeats it.
        try sim.run(Self.push("a1", "e3", event: "end", priority: 5))
        #expect(Self.records(sim, reason: "queue_full").map { $0[2] } == ["a1-x1", "a1-x2", "a1-x3", "a1-e1"])
        #expect(sim.get("/apps/coffee/pending/deferred") == 2)
        try sim.advance(seconds: 30)
        #expect(sim.state(of: "a1") == "ended")
        #expect(sim.get("/activities/a1/content/state/status") == "e2")
        #expect(sim.get("/apps/coffee/pending/deferred") == 0)
    }

    @Test("AP-9 held queues survive a snapshot: the restored engine coalesces and delivers as the original")
    func snapshotRoundTrip() throws {
        var sim = try Self.overBudget(["a1", "a2"])
        try sim.run(["type": "config.set", "values": ["lowPriorityDelaySeconds": 60]])
        try sim.run(Self.push("a1", "s2"), Self.push("a2", "end", event: "end"), Self.push("a1", "low", priority: 5))
        #expect(sim.get("/apps/coffee/pending") == ["throttled": 2, "deferred": 1])
        let bytes = sim.engine.snapshotBytes
        var restored = try Engine(snapshot: try JSONParser().parse(bytes), renderer: TestRenderer())
        #expect(restored.snapshotBytes == bytes)
        let batch = [Self.push("a1", "s3"), Self.push("a2", "late")]
        let expected = try sim.run(batch: batch)
        #expect(try restored.apply(batch, at: sim.wall) == expected)
        #expect(expected.discards.coalescedPushes == 2)
        let step: [JSONValue] = [["type": "clock.advance", "seconds": 3600]]
        #expect(try restored.apply(step, at: sim.wall) == (try sim.run(batch: step)))
        #expect(restored.snapshotBytes == sim.engine.snapshotBytes)
    }
}
