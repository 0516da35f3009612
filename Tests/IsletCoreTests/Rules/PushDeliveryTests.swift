import IsletCore
import Testing

/// LA-11, LA-12 and the device-side outcomes of pushes (AP-6, AP-7, AP-8), recorded in
/// `/apps/<id>/deliveries`.
@Suite struct PushDeliveryTests {
    static func pushUpdate(_ id: String, _ status: String, priority: Int = 10, apnsId: String? = nil) -> JSONValue {
        var delivery: JSONObject = ["source": "push", "priority": .number(Double(priority))]
        if let apnsId { delivery["apnsId"] = .string(apnsId) }
        return [
            "type": "activity.update", "id": .string(id), "content": ["state": ["status": .string(status)]],
            "delivery": .object(delivery),
        ]
    }

    @Test("LA-11 the 16th priority-10 push in an hour is throttled and applied when the budget returns")
    func la11Throttle() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1", extra: ["pushType": "token"])
        for index in 1...15 {
            let revision = try sim.run(Self.pushUpdate("a1", "s\(index)"))
            #expect(revision.results[0]["applied"] == true)
        }
        #expect(sim.get("/apps/coffee/budgets/push/used") == 15)
        let throttled = try sim.run(Self.pushUpdate("a1", "s16", apnsId: "apns-16"))
        #expect(throttled.results[0] == ["applied": false, "reason": "throttled"])
        #expect(sim.get("/activities/a1/content/state/status") == "s15")
        #expect(sim.get("/apps/coffee/pending/throttled") == 1)
        let last = try #require(sim.get("/apps/coffee/deliveries")?.arrayValue?.last)
        #expect(last["outcome"] == "throttled")
        #expect(last["apnsId"] == "apns-16")
        #expect(sim.get("/apps/coffee/budgets/push/resetsAt") == "2026-11-22T09:00:00Z")
        try sim.advance(seconds: 3599)
        #expect(sim.get("/activities/a1/content/state/status") == "s15")
        try sim.advance(seconds: 1)
        #expect(sim.get("/activities/a1/content/state/status") == "s16")
        #expect(sim.get("/apps/coffee/budgets/push/used") == 1)
        #expect(sim.get("/apps/coffee/pending/throttled") == 0)
        let applied = try #require(sim.get("/apps/coffee/deliveries")?.arrayValue?.last)
        #expect(applied["outcome"] == "applied")
        #expect(applied["at"] == "2026-11-22T09:00:00Z")
    }

    @Test("LA-11 frequentUpdates raises the budget to 60; API updates never draw it")
    func la11Frequent() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.run(["type": "app.upsert", "id": "coffee", "frequentUpdates": true])
        try sim.request("a1")
        for index in 1...20 {
            try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["n": .number(Double(index))]]])
        }
        #expect(sim.get("/apps/coffee/budgets/push/used") == 0)
        for index in 1...60 { try sim.run(Self.pushUpdate("a1", "p\(index)")) }
        let over = try sim.run(Self.pushUpdate("a1", "p61"))
        #expect(over.results[0]["reason"] == "throttled")
    }

    @Test("LA-11 priority 5 never draws the budget and waits the configured delay (default 0)")
    func la11LowPriority() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        for index in 1...20 { try sim.run(Self.pushUpdate("a1", "low\(index)", priority: 5)) }
        #expect(sim.get("/activities/a1/content/state/status") == "low20")
        #expect(sim.get("/apps/coffee/budgets/push/used") == 0)
        try sim.run(["type": "config.set", "values": ["lowPriorityDelaySeconds": 30]])
        let deferred = try sim.run(Self.pushUpdate("a1", "later", priority: 5))
        #expect(deferred.results[0] == ["applied": false, "reason": "deferred", "deliverAt": "2026-11-22T08:00:30Z"])
        try sim.advance(seconds: 29)
        #expect(sim.get("/activities/a1/content/state/status") == "low20")
        try sim.advance(seconds: 1)
        #expect(sim.get("/activities/a1/content/state/status") == "later")
        #expect(sim.get("/apps/coffee/pending/deferred") == 0)
    }

    @Test("LA-12 the 11th push-to-start in an hour is not started: budget_exceeded, recorded")
    func la12PushToStart() throws {
        var sim = Simulation(
            configuration: {
                var c = SimulatorConfiguration(); c.maxActivitiesPerApp = 20; c.maxActivitiesPerDevice = 20; return c
            }())
        try sim.setUp()
        try sim.run(["type": "app.upsert", "id": "coffee", "foreground": false])
        for index in 1...10 {
            let result = try sim.request(
                "p\(index)", extra: ["source": "push", "delivery": ["apnsId": .string("start-\(index)")]])
            #expect(result["applied"] == true)
        }
        let refused = try sim.request("p11", extra: ["source": "push"])
        #expect(refused == ["applied": false, "reason": "budget_exceeded", "id": nil, "pushToken": nil])
        #expect(sim.get("/activities/p11") == nil)
        let last = try #require(sim.get("/apps/coffee/deliveries")?.arrayValue?.last)
        #expect(last["event"] == "start")
        #expect(last["outcome"] == "ignored")
        #expect(last["reason"] == "budget_exceeded")
        try sim.advance(seconds: 3600)
        #expect(try sim.request("p12", extra: ["source": "push"])["applied"] == true)
    }

    @Test("AP-6 a push without content state, or to an ended activity, is accepted and recorded as ignored")
    func ap6SilentOutcomes() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        let noState = try sim.run([
            "type": "activity.update", "id": "a1", "content": [:], "delivery": ["source": "push"],
        ])
        #expect(noState.results[0] == ["applied": false, "reason": "content_state_missing"])
        // The same from the API is invalid.
        let invalid = #expect(throws: APIError.self) {
            try sim.run(["type": "activity.update", "id": "a1", "content": [:]])
        }
        #expect(invalid?.field == "/commands/0/content/state")
        try sim.run(["type": "activity.end", "id": "a1"])
        let ended = try sim.run(Self.pushUpdate("a1", "late"))
        #expect(ended.results[0] == ["applied": false, "reason": "activity_ended"])
        let endAgain = try sim.run(["type": "activity.end", "id": "a1", "delivery": ["source": "push"]])
        #expect(endAgain.results[0] == ["applied": false, "reason": "activity_ended"])
    }

    @Test("AP-8 push.ignore records an ignored delivery and changes nothing else; an unknown app is not_found")
    func ap8IgnoredPush() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1", extra: ["pushType": "token"])
        let revision = try sim.run([
            "type": "push.ignore", "app": "coffee", "activity": "a1", "event": "update", "reason": "timestamp_missing",
            "detail": "aps.timestamp is missing", "delivery": ["priority": 10, "apnsId": "id-1"],
        ])
        #expect(revision.results[0] == ["applied": false, "reason": "timestamp_missing"])
        #expect(Set(revision.ops.map(\.path.description)).isSubset(of: ["/apps/coffee/deliveries/-", "/apps/coffee/deliveries/1", "/clock/now"]))
        let last = try #require(sim.get("/apps/coffee/deliveries")?.arrayValue?.last)
        #expect(last["outcome"] == "ignored" && last["detail"] == "aps.timestamp is missing" && last["source"] == "push")
        #expect(sim.get("/apps/coffee/budgets/push/used") == 0)
        let unknown = #expect(throws: APIError.self) {
            try sim.run(["type": "push.ignore", "app": "nope", "reason": "event_invalid"])
        }
        #expect(unknown?.code == .notFound)
        try sim.expectPatchesReplay()
    }

    @Test("AP-8 an end carries an alert only as a push; the alert is kept on the ended activity")
    func ap8AlertOnEnd() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        let alert: JSONValue = ["title": "Done", "subtitle": "Enjoy", "sound": ["critical": 1, "name": "x.aiff", "volume": 1]]
        let error = #expect(throws: APIError.self) { try sim.run(["type": "activity.end", "id": "a1", "alert": alert]) }
        #expect(error?.field == "/commands/0/alert")
        try sim.run(["type": "activity.end", "id": "a1", "alert": alert, "delivery": ["source": "push"]])
        #expect(sim.get("/activities/a1/activityState") == "ended")
        #expect(sim.get("/activities/a1/alert/subtitle") == "Enjoy")
        #expect(sim.get("/activities/a1/alert/sound/volume") == 1)
        let bad = #expect(throws: APIError.self) {
            try sim.run([
                "type": "activity.update", "id": "a1", "content": ["state": [:]], "alert": ["sound": ["volume": 2]],
            ])
        }
        #expect(bad?.field == "/commands/0/alert/sound/volume")
    }

    @Test("AP-7 a push end's dismissal date in the past dismisses at once; beyond end + 4 h it is clamped")
    func ap7DismissalDate() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        try sim.request("a2")
        try sim.run([
            "type": "activity.end", "id": "a1", "delivery": ["source": "push"],
            "dismissalPolicy": ["after": "2022-09-14T17:41:00Z"],
        ])
        #expect(sim.state(of: "a1") == "dismissed")
        #expect(sim.get("/activities/a1/endReason") == "push")
        try sim.run([
            "type": "activity.end", "id": "a2", "delivery": ["source": "push"],
            "dismissalPolicy": ["after": sim.date(after: 86_400)],
        ])
        #expect(sim.get("/activities/a2/dismissAt") == "2026-11-22T12:00:00Z")
    }

    @Test("deliveries keep the last 100 records, newest last")
    func deliveriesKeepLast100() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        for index in 1...120 { try sim.run(Self.pushUpdate("a1", "n\(index)", priority: 5, apnsId: "id-\(index)")) }
        let deliveries = try #require(sim.get("/apps/coffee/deliveries")?.arrayValue)
        #expect(deliveries.count == 100)
        #expect(deliveries.last?["apnsId"] == "id-120")
        #expect(deliveries.first?["apnsId"] == "id-21")
        let lastRevision = try #require(sim.revisions.last)
        let deliveryOps = lastRevision.ops.filter { $0.path.description.hasPrefix("/apps/coffee/deliveries") }
        #expect(deliveryOps.map(\.kind) == [.remove, .add], "a rolling log shifts by one remove and one add")
        try sim.expectPatchesReplay()
    }

    @Test("push tokens resolve to their app or activity, and dismissed activities say so (AP-4)")
    func tokenLookup() throws {
        var sim = Simulation()
        try sim.setUp()
        let start = try sim.run(["type": "app.upsert", "id": "coffee"])
        let pushToStart = try #require(start.results[0]["pushToStartToken"]?.stringValue)
        #expect(pushToStart.count == 64)
        #expect(
            sim.engine.resolve(token: pushToStart.uppercased())
                == TokenResolution(app: "coffee", activity: nil, activityState: nil))
        let result = try sim.request("a1", extra: ["pushType": "token"])
        let token = try #require(result["pushToken"]?.stringValue)
        #expect(token != pushToStart)
        #expect(sim.engine.resolve(token: token)?.activity == "a1")
        #expect(sim.engine.resolve(token: token)?.isDismissed == false)
        try sim.run(["type": "activity.dismiss", "id": "a1"])
        #expect(sim.engine.resolve(token: token)?.isDismissed == true)
        #expect(sim.engine.resolve(token: "00") == nil)
        // The same commands on a fresh engine generate the same tokens.
        var again = Simulation()
        try again.setUp()
        #expect(try again.request("a1", extra: ["pushType": "token"])["pushToken"] == .string(token))
    }

    @Test("a dismissed activity's token still says dismissed once the device forgot it, across a snapshot, until the app is deleted (AP-4)")
    func retiredToken() throws {
        var sim = Simulation()
        try sim.setUp()
        let token = try #require(try sim.request("a1", extra: ["pushType": "token"])["pushToken"]?.stringValue)
        try sim.run(["type": "activity.dismiss", "id": "a1"])
        let dismissedAt = try #require(sim.engine.resolve(token: token)?.dismissedAt)
        try sim.advance(seconds: 86_400 + 60)
        #expect(sim.get("/activities/a1") == nil, "forgotten after dismissedRetentionSeconds")
        let retired = TokenResolution(app: "coffee", activity: "a1", activityState: "dismissed", dismissedAt: dismissedAt)
        #expect(sim.engine.resolve(token: token) == retired)
        let restored = try Engine(snapshot: sim.engine.snapshot(), renderer: TestRenderer())
        #expect(restored.resolve(token: token) == retired)
        #expect(restored.snapshotBytes == sim.engine.snapshotBytes)
        try sim.run(["type": "app.delete", "id": "coffee"])
        #expect(sim.engine.resolve(token: token) == nil, "a deleted app's tokens are unknown")
        try sim.expectPatchesReplay()
    }
}
