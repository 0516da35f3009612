import IsletCore
import Testing

/// LA-8 … LA-10, LA-13, LA-14: dismissal, a person's removal, alerts, the frequent-updates
/// switch and animations.
@Suite struct LiveActivityEndingTests {
    @Test("LA-8 policy default: dismissed 4 h after the end, on the Lock Screen until then")
    func la8Default() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        try sim.advance(seconds: 3600)
        try sim.run(["type": "activity.end", "id": "a1", "content": ["state": ["status": "delivered"]]])
        #expect(sim.state(of: "a1") == "ended")
        #expect(sim.get("/activities/a1/content/state/status") == "delivered")
        #expect(sim.get("/activities/a1/dismissAt") == "2026-11-22T13:00:00Z")
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == ["a1"])
        try sim.advance(seconds: 4 * 3600 - 1)
        #expect(sim.state(of: "a1") == "ended")
        try sim.advance(seconds: 1)
        #expect(sim.state(of: "a1") == "dismissed")
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == [])
    }

    @Test("LA-8 policy immediate: dismissed in the same revision")
    func la8Immediate() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        try sim.run(["type": "activity.end", "id": "a1", "dismissalPolicy": "immediate"])
        #expect(sim.state(of: "a1") == "dismissed")
        #expect(sim.get("/activities/a1/endedAt") == "2026-11-22T08:00:00Z")
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == [])
    }

    @Test(
        "LA-8 policy after(d): dismissed at min(d, end + 4 h); a past date dismisses at once",
        arguments: [(900.0, 900.0), (5 * 3600.0, 4 * 3600.0), (-60.0, 0.0)])
    func la8After(requested: Double, expected: Double) throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        let end = sim.engine.now
        try sim.run(["type": "activity.end", "id": "a1", "dismissalPolicy": ["after": sim.date(after: requested)]])
        #expect(sim.get("/activities/a1/dismissAt") == .string(end.adding(seconds: expected).rfc3339))
        if expected > 0 {
            try sim.advance(seconds: expected - 1)
            #expect(sim.state(of: "a1") == "ended")
            try sim.advance(seconds: 1)
        }
        #expect(sim.state(of: "a1") == "dismissed")
    }

    @Test("LA-8 never on the Lock Screen more than 12 h after the start")
    func la8TwelveHours() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        try sim.advance(seconds: 12 * 3600 - 1)
        #expect(sim.state(of: "a1") == "ended")
        try sim.advance(seconds: 1)
        #expect(sim.state(of: "a1") == "dismissed")
        #expect(sim.get("/activities/a1/dismissedAt") == "2026-11-22T20:00:00Z")
    }

    @Test("LA-9 a person dismissing an active activity ends and dismisses it at once")
    func la9PersonDismisses() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        try sim.request("a2")
        try sim.run(["type": "activity.dismiss", "id": "a1"])
        #expect(sim.state(of: "a1") == "dismissed")
        #expect(sim.get("/activities/a1/endReason") == "person")
        #expect(sim.get("/activities/a1/endedAt") == "2026-11-22T08:00:00Z")
        try sim.run(["type": "activity.end", "id": "a2"])
        try sim.run(["type": "activity.dismiss", "id": "a2"])
        #expect(sim.state(of: "a2") == "dismissed")
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == [])
        let missing = #expect(throws: APIError.notFound) { try sim.run(["type": "activity.dismiss", "id": "nope"]) }
        #expect(missing?.field == "/commands/0/id")
    }

    @Test("LA-10 an alert expands the island for 4 s, a device without an island shows a banner, and the alert is kept")
    func la10Alert() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-15-pro", "se": "iphone-se-3"])
        try sim.run(["type": "app.upsert", "id": "coffee", "foreground": false])
        try sim.request("a1", extra: ["source": "intent"])
        try sim.request("s1", extra: ["source": "intent", "device": "se"])
        let alert: JSONValue = ["title": "Brewing", "body": "Your cup is brewing", "sound": "default"]
        for id in ["a1", "s1"] {
            try sim.run([
                "type": "activity.update", "id": .string(id), "content": ["state": ["status": "brewing"]], "alert": alert,
            ])
        }
        #expect(sim.get("/devices/d1/scene/island/mode") == "expanded")
        #expect(
            sim.get("/devices/d1/scene/island/expanded") == [
                "activity": "a1", "reason": "alert", "until": "2026-11-22T08:00:04Z",
            ])
        #expect(sim.get("/devices/d1/scene/island/width") == 371)
        #expect(sim.get("/devices/se/scene/banner") == ["activity": "s1", "until": "2026-11-22T08:00:04Z"])
        #expect(sim.get("/activities/a1/alert/title") == "Brewing")
        #expect(sim.get("/activities/a1/alert/at") == "2026-11-22T08:00:00Z")
        try sim.advance(seconds: 4)
        #expect(sim.get("/devices/d1/scene/island/mode") == "compact")
        #expect(sim.get("/devices/se/scene/banner") == .null)
        // A locked device without an island shows no banner.
        try sim.run(["type": "device.upsert", "id": "se", "locked": true])
        try sim.run([
            "type": "activity.update", "id": "s1", "content": ["state": ["status": "onItsWay"]], "alert": alert,
        ])
        #expect(sim.get("/devices/se/scene/banner") == .null)
    }

    @Test("LA-10 a second alert for the activity already shown gets its full 4 s from its arrival, on the island and in a banner; a longer press is not cut short")
    func la10AlertWhileShown() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-15-pro", "se": "iphone-se-3"])
        try sim.run(["type": "app.upsert", "id": "coffee", "foreground": false])
        try sim.request("a1", extra: ["source": "intent", "device": "d1"])
        try sim.request("s1", extra: ["source": "intent", "device": "se"])
        func alert(_ id: String) throws {
            try sim.run([
                "type": "activity.update", "id": .string(id), "content": ["state": ["status": "brewing"]],
                "alert": ["title": "Brewing"],
            ])
        }
        try alert("a1")
        try alert("s1")
        try sim.advance(seconds: 3)
        try alert("a1")
        try alert("s1")
        #expect(sim.get("/devices/d1/scene/island/expanded/until") == "2026-11-22T08:00:07Z")
        #expect(sim.get("/devices/se/scene/banner/until") == "2026-11-22T08:00:07Z")
        try sim.advance(seconds: 3.999)
        #expect(sim.get("/devices/d1/scene/island/mode") == "expanded", "the second alert's 4 s")
        try sim.advance(seconds: 0.001)
        #expect(sim.get("/devices/d1/scene/island/mode") == "compact")
        #expect(sim.get("/devices/se/scene/banner") == .null)
        // A press expands for 8 s; an alert 1 s in does not cut it to 4 s.
        try sim.run(["type": "island.press", "device": "d1", "activity": "a1"])
        try sim.advance(seconds: 1)
        try alert("a1")
        #expect(sim.get("/devices/d1/scene/island/expanded") == ["activity": "a1", "reason": "press", "until": "2026-11-22T08:00:15Z"])
        try sim.expectPatchesReplay()
    }

    @Test("LA-13 turning frequentUpdates on ends all the app's ongoing activities, not other apps'")
    func la13FrequentUpdates() throws {
        var sim = Simulation()
        try sim.setUp(apps: ["coffee", "ride"])
        try sim.request("a1")
        try sim.request("a2")
        try sim.request("r1", app: "ride")
        try sim.run(["type": "app.upsert", "id": "coffee", "frequentUpdates": true])
        #expect(sim.state(of: "a1") == "ended")
        #expect(sim.state(of: "a2") == "ended")
        #expect(sim.get("/activities/a1/endReason") == "frequentUpdates")
        #expect(sim.state(of: "r1") == "active")
        #expect(sim.get("/apps/coffee/budgets/push/limit") == 60)
        try sim.request("a3")
        try sim.run(["type": "app.upsert", "id": "coffee", "frequentUpdates": true])
        #expect(sim.state(of: "a3") == "active")
        try sim.run(["type": "app.upsert", "id": "coffee", "frequentUpdates": false])
        #expect(sim.state(of: "a3") == "ended")
    }

    @Test("LA-14 animations last at most 2 s and stop in Always-On (LA-17: locked and dimmed), not in Night Mode")
    func la14Animations() throws {
        var sim = Simulation()
        try sim.setUp()
        #expect(sim.get("/devices/d1/scene/animations") == ["enabled": true, "maxSeconds": 2])
        try sim.run(["type": "device.upsert", "id": "d1", "locked": true, "standby": true, "nightMode": true])
        #expect(sim.get("/devices/d1/scene/animations/enabled") == true)
        try sim.run(["type": "device.upsert", "id": "d1", "standby": false, "alwaysOn": true])
        #expect(sim.get("/devices/d1/scene/animations/enabled") == false)
        try sim.run(["type": "config.set", "values": ["maxAnimationSeconds": 1.5]])
        #expect(sim.get("/devices/d1/scene/animations/maxSeconds") == 1.5)
    }
}
