import IsletCore
import Testing

/// LA-1 … LA-7: starting, updating, staleness and the 8-hour limit, on the virtual clock.
@Suite struct LiveActivityLifecycleTests {
    @Test("LA-1 attributes are fixed: an update cannot carry attributes, and content state changes")
    func la1StaticAttributes() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        let error = #expect(throws: APIError.invalidArgument) {
            try sim.run([
                "type": "activity.update", "id": "a1", "attributes": ["coffeeName": "Latte"], "content": ["state": [:]],
            ])
        }
        #expect(error?.field == "/commands/0/attributes")
        try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["status": "brewing"]]])
        #expect(sim.get("/activities/a1/attributes/coffeeName") == "Flat white")
        #expect(sim.get("/activities/a1/content/state/status") == "brewing")
        #expect(sim.get("/activities/a1/content/relevanceScore") == 0)
        #expect(sim.get("/activities/a1/content/staleDate") == .null)
    }

    @Test("LA-2 a 4097-byte state is rejected and nothing changes; 4096 bytes are accepted")
    func la2SizeLimit() throws {
        var sim = Simulation()
        try sim.setUp()
        // {"coffeeName":"Flat white"} is 27 bytes; {"p":"…"} is 8 bytes plus the string.
        let attributesBytes = 27
        func state(total: Int) -> JSONValue {
            ["p": .string(String(repeating: "x", count: total - attributesBytes - 8))]
        }
        let before = sim.engine.documentBytes
        let rev = sim.engine.rev
        let error = #expect(throws: APIError.self) { try sim.request("big", state: state(total: 4097)) }
        #expect(error?.code == .limitExceeded)
        #expect(error?.field == "/commands/0/content/state")
        #expect(error?.message.hasPrefix("attributesTooLarge") == true)
        #expect(sim.engine.documentBytes == before)
        #expect(sim.engine.rev == rev)
        try sim.request("fits", state: state(total: 4096))
        #expect(sim.state(of: "fits") == "active")
        let update: JSONValue = ["type": "activity.update", "id": "fits", "content": ["state": state(total: 4097)]]
        #expect(throws: APIError.self) { try sim.run(update) }
        #expect(sim.get("/activities/fits/content/state") == state(total: 4096))
    }

    @Test("LA-3 a background app cannot start an activity; intents and push-to-start can; disabled apps are denied")
    func la3Visibility() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.run(["type": "app.upsert", "id": "coffee", "foreground": false])
        let error = #expect(throws: APIError.self) { try sim.request("a1") }
        #expect(error?.code == .conflict)
        #expect(error?.message.hasPrefix("visibility") == true)
        #expect(error?.field == "/commands/0/source")
        try sim.request("a2", extra: ["source": "intent"])
        try sim.request("a3", extra: ["source": "push"])
        #expect(sim.state(of: "a2") == "active")
        #expect(sim.state(of: "a3") == "active")
        try sim.run(["type": "app.upsert", "id": "coffee", "foreground": true, "liveActivitiesEnabled": false])
        let denied = #expect(throws: APIError.self) { try sim.request("a4") }
        #expect(denied?.message.hasPrefix("denied") == true)
    }

    @Test("LA-4 the sixth activity of an app and the eleventh of the device are refused")
    func la4Limits() throws {
        var sim = Simulation()
        try sim.setUp(apps: ["coffee", "ride", "sports"])
        for index in 1...5 { try sim.request("c\(index)") }
        let perApp = #expect(throws: APIError.self) { try sim.request("c6") }
        #expect(perApp?.code == .limitExceeded)
        #expect(perApp?.message.hasPrefix("targetMaximumExceeded") == true)
        for index in 1...5 { try sim.request("r\(index)", app: "ride") }
        let global = #expect(throws: APIError.self) { try sim.request("s1", app: "sports") }
        #expect(global?.message.hasPrefix("globalMaximumExceeded") == true)
        // An ended activity no longer counts.
        try sim.run(["type": "activity.end", "id": "c1"])
        try sim.request("c6")
        #expect(sim.state(of: "c6") == "active")
    }

    @Test("LA-5 at its stale date an activity becomes stale; an update with a later stale date makes it active again")
    func la5Stale() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1", extra: ["content": ["state": ["status": "received"], "staleDate": sim.date(after: 600)]])
        try sim.advance(seconds: 599)
        #expect(sim.state(of: "a1") == "active")
        let revision = try sim.advance(seconds: 1)
        #expect(sim.state(of: "a1") == "stale")
        #expect(revision.ops.contains { $0.path == "/activities/a1/activityState" && $0.value == "stale" })
        try sim.run([
            "type": "activity.update", "id": "a1",
            "content": ["state": ["status": "brewing"], "staleDate": sim.date(after: 600)],
        ])
        #expect(sim.state(of: "a1") == "active")
        // The superseded stale deadline must not fire; the new one does.
        try sim.advance(seconds: 599)
        #expect(sim.state(of: "a1") == "active")
        try sim.advance(seconds: 1)
        #expect(sim.state(of: "a1") == "stale")
        try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["status": "onItsWay"]]])
        #expect(sim.state(of: "a1") == "active")
        try sim.advance(seconds: 3600)
        #expect(sim.state(of: "a1") == "active")
    }

    @Test("LA-6 an older timestamp is ignored with applied: false; updates to ended activities are ignored")
    func la6Ordering() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        let t1 = sim.date(after: 10)
        let t0 = sim.date(after: 5)
        let first = try sim.run([
            "type": "activity.update", "id": "a1", "timestamp": t1, "content": ["state": ["status": "brewing"]],
        ])
        #expect(first.results[0] == ["applied": true, "reason": nil])
        let older = try sim.run([
            "type": "activity.update", "id": "a1", "timestamp": t0, "content": ["state": ["status": "received"]],
        ])
        #expect(older.results[0] == ["applied": false, "reason": "stale_timestamp"])
        #expect(sim.get("/activities/a1/content/state/status") == "brewing")
        #expect(sim.get("/apps/coffee/deliveries/2/outcome") == "ignored")
        #expect(sim.get("/apps/coffee/deliveries/2/reason") == "stale_timestamp")
        try sim.run(["type": "activity.end", "id": "a1"])
        let late = try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["status": "late"]]])
        #expect(late.results[0] == ["applied": false, "reason": "activity_ended"])
        #expect(sim.get("/activities/a1/content/state/status") == "brewing")
    }

    @Test("LA-7 advancing 8 h ends an activity and removes it from the island in the same revision")
    func la7EightHours() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        try sim.advance(seconds: 8 * 3600 - 1)
        #expect(sim.state(of: "a1") == "active")
        #expect(sim.get("/devices/d1/scene/island/compact/activity") == "a1")
        let revision = try sim.advance(seconds: 1)
        #expect(sim.state(of: "a1") == "ended")
        #expect(sim.get("/activities/a1/endReason") == "system")
        #expect(sim.get("/activities/a1/endedAt") == "2026-11-22T16:00:00Z")
        #expect(sim.get("/devices/d1/scene/island/mode") == "none")
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == ["a1"])
        let paths = Set(revision.ops.map(\.path.description))
        #expect(paths.contains("/activities/a1/activityState"))
        #expect(paths.contains("/devices/d1/scene/island/mode"))
        #expect(revision.transitions == 1)
        try sim.expectPatchesReplay()
    }

    @Test("LA-18 an ActivityContent without a relevance score has score 0: local updates, push updates and final contents of ends")
    func la18OmittedScoreIsZero() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1", score: 80)
        try sim.request("a2", score: 60)
        try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["status": "brewing"]]])
        #expect(sim.get("/activities/a1/content/relevanceScore") == 0)
        try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["status": "x"], "relevanceScore": 75]])
        #expect(sim.get("/activities/a1/content/relevanceScore") == 75)
        // A push without relevance-score maps to content without relevanceScore.
        try sim.run([
            "type": "activity.update", "id": "a1", "content": ["state": ["status": "y"]],
            "delivery": ["source": "push", "priority": 5],
        ])
        #expect(sim.get("/activities/a1/content/relevanceScore") == 0)
        // An end with a final content without a score; an end without content keeps the score.
        try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["status": "z"], "relevanceScore": 30]])
        try sim.run(["type": "activity.end", "id": "a2"])
        #expect(sim.get("/activities/a2/content/relevanceScore") == 60)
        try sim.run(["type": "activity.end", "id": "a1", "content": ["state": ["status": "done"]]])
        #expect(sim.get("/activities/a1/content/relevanceScore") == 0)
        try sim.expectPatchesReplay()
    }
}
