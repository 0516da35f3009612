import IsletCore
import IsletTestSupport
import Testing

/// Broadcast channels and WidgetKit pushes on the device side (reference §1.10, §2.5 rules 2, 5
/// and 9, §4.1 "WidgetKit push"; Apple's channel management and broadcast articles, UN-CHAN).
@Suite struct BroadcastAndWidgetPushTests {
    static func broadcast(
        _ channel: String, _ status: String, event: String = "update", priority: Int = 10, timestamp: String? = nil,
        extra: JSONObject = [:]
    ) -> JSONValue {
        var command: JSONObject = [
            "type": "channel.broadcast", "app": "coffee", "channel": .string(channel), "event": .string(event),
            "content": ["state": ["status": .string(status)]], "delivery": ["priority": .number(Double(priority))],
        ]
        if let timestamp { command["timestamp"] = .string(timestamp) }
        for member in extra.members { command[member.key] = member.value }
        return .object(command)
    }

    /// A world with the app in the background (as on a real device while broadcasts arrive)
    /// and one channel of `policy`; returns the channel id.
    static func world(policy: Int = 0) throws -> (Simulation, String) {
        var sim = Simulation()
        try sim.setUp()
        try sim.run(["type": "config.set", "values": ["maxActivitiesPerApp": 10]])
        let created = try sim.run(["type": "channel.create", "app": "coffee", "storagePolicy": .number(Double(policy))])
        let id = try #require(created.results[0]["id"]?.stringValue)
        return (sim, id)
    }

    @Test("a channel gets a base64 id from APNs, never chosen by the server, shown under its app")
    func create() throws {
        let (sim, id) = try Self.world(policy: 1)
        #expect(isChannelID(id))
        #expect(id.hasSuffix("=="))
        #expect(sim.get("/apps/coffee/channels/\(id)/storagePolicy") == 1)
        #expect(sim.get("/apps/coffee/channels/\(id)/subscribers") == 0)
        #expect(sim.get("/apps/coffee/channels/\(id)/broadcasts") == 0)
        #expect(sim.get("/apps/coffee/channels/\(id)/lastBroadcast") == .null)
        try sim.expectPatchesReplay()
    }

    @Test("one broadcast updates every subscribed activity and is recorded once with the counts")
    func broadcastReachesSubscribers() throws {
        var (sim, id) = try Self.world()
        try sim.request("a1", extra: ["pushType": ["channel": .string(id)]])
        try sim.request("a2", extra: ["pushType": ["channel": .string(id)]])
        try sim.request("a3")
        #expect(sim.get("/apps/coffee/channels/\(id)/subscribers") == 2)
        #expect(sim.get("/activities/a1/pushChannel") == .string(id))
        #expect(sim.get("/activities/a1/pushToken") == .null)
        let revision = try sim.run(Self.broadcast(id, "goal", extra: ["delivery": ["priority": 10, "apnsId": "b-1"]]))
        #expect(revision.results[0] == ["applied": true, "reason": .null, "subscribers": 2, "appliedTo": 2])
        #expect(sim.state(of: "a1") == "active")
        #expect(sim.get("/activities/a1/content/state/status") == "goal")
        #expect(sim.get("/activities/a2/content/state/status") == "goal")
        #expect(sim.get("/activities/a3/content/state/status") == "received")
        let record = try #require(sim.get("/apps/coffee/deliveries")?.arrayValue?.last)
        #expect(record["channel"] == .string(id))
        #expect(record["subscribers"] == 2)
        #expect(record["appliedTo"] == 2)
        #expect(record["apnsId"] == "b-1")
        #expect(record["source"] == "push")
        #expect(sim.get("/apps/coffee/channels/\(id)/broadcasts") == 1)
        #expect(sim.get("/apps/coffee/channels/\(id)/lastBroadcast/apnsId") == "b-1")
        // A priority-10 broadcast reaches the device once: it draws the app's budget once (LA-11).
        #expect(sim.get("/apps/coffee/budgets/push/used") == 1)
        try sim.expectPatchesReplay()
    }

    @Test("LA-6 a subscriber ignores a broadcast older than its last update, and an ended one ignores it")
    func broadcastFollowsUpdateRules() throws {
        var (sim, id) = try Self.world()
        try sim.request("a1", extra: ["pushType": ["channel": .string(id)]])
        try sim.request("a2", extra: ["pushType": ["channel": .string(id)]])
        try sim.run(Self.broadcast(id, "new", timestamp: "2026-11-22T08:00:10Z"))
        let stale = try sim.run(Self.broadcast(id, "old", timestamp: "2026-11-22T08:00:05Z"))
        #expect(stale.results[0]["appliedTo"] == 0)
        #expect(stale.results[0]["reason"] == "no_subscriber_applied")
        #expect(sim.get("/activities/a1/content/state/status") == "new")
        try sim.run(["type": "activity.end", "id": "a2"])
        let after = try sim.run(Self.broadcast(id, "later", timestamp: "2026-11-22T08:00:20Z"))
        #expect(after.results[0]["subscribers"] == 2)
        #expect(after.results[0]["appliedTo"] == 1)
        #expect(sim.get("/activities/a2/content/state/status") == "new")
        let end = try sim.run(Self.broadcast(id, "final", event: "end", extra: ["dismissalPolicy": "immediate"]))
        #expect(end.results[0]["appliedTo"] == 1)
        #expect(sim.state(of: "a1") == "dismissed")
    }

    @Test("LA-11 a low-priority broadcast waits the delay; one over budget is throttled until it returns")
    func broadcastPriorities() throws {
        var (sim, id) = try Self.world()
        try sim.run(["type": "config.set", "values": ["pushBudgetPerHour": 1, "lowPriorityDelaySeconds": 30]])
        try sim.request("a1", extra: ["pushType": ["channel": .string(id)]])
        let low = try sim.run(Self.broadcast(id, "low", priority: 1))
        #expect(low.results[0]["reason"] == "deferred")
        #expect(sim.get("/activities/a1/content/state/status") == "received")
        try sim.advance(seconds: 30)
        #expect(sim.get("/activities/a1/content/state/status") == "low")
        try sim.run(Self.broadcast(id, "first"))
        let over = try sim.run(Self.broadcast(id, "second"))
        #expect(over.results[0] == ["applied": false, "reason": "throttled"])
        #expect(sim.get("/activities/a1/content/state/status") == "first")
        try sim.advance(seconds: 3600)
        #expect(sim.get("/activities/a1/content/state/status") == "second")
        try sim.expectPatchesReplay()
    }

    @Test("storage policy 1 hands the latest broadcast to a later subscriber for at most 8 hours; policy 0 keeps nothing")
    func storedMessage() throws {
        var (sim, id) = try Self.world(policy: 1)
        let none = try #require(
            try sim.run(["type": "channel.create", "app": "coffee", "storagePolicy": 0]).results[0]["id"]?.stringValue)
        try sim.run(Self.broadcast(id, "kept"), Self.broadcast(none, "lost"))
        #expect(sim.get("/apps/coffee/channels/\(id)/lastBroadcast/storedUntil") == "2026-11-22T16:00:00Z")
        #expect(sim.get("/apps/coffee/channels/\(none)/lastBroadcast/storedUntil") == .null)
        try sim.request("late", extra: ["pushType": ["channel": .string(id)]])
        try sim.request("other", extra: ["pushType": ["channel": .string(none)]])
        #expect(sim.get("/activities/late/content/state/status") == "kept")
        #expect(sim.get("/activities/other/content/state/status") == "received")
        let records = try #require(sim.get("/apps/coffee/deliveries")?.arrayValue)
        let stored = records.filter { $0["reason"] == "stored_message" }
        #expect(stored.count == 1)
        #expect(stored.first?["activity"] == "late")
        #expect(stored.first?["channel"] == .string(id))
        let late = records.filter { $0["activity"] == "late" }.map { $0["event"]?.stringValue ?? "" }
        #expect(late == ["start", "update"], "the start, then the stored update applied to it (newest last)")
        try sim.advance(seconds: 8 * 3600)
        try sim.request("tooLate", extra: ["pushType": ["channel": .string(id)]])
        #expect(sim.get("/activities/tooLate/content/state/status") == "received")
    }

    @Test("apns-expiration shortens storage under policy 1; an expiration already past stores nothing")
    func expiration() throws {
        var (sim, id) = try Self.world(policy: 1)
        try sim.run(Self.broadcast(id, "brief", extra: ["expiration": "2026-11-22T09:00:00Z"]))
        #expect(sim.get("/apps/coffee/channels/\(id)/lastBroadcast/storedUntil") == "2026-11-22T09:00:00Z")
        try sim.run(Self.broadcast(id, "once", extra: ["expiration": "1970-01-01T00:00:00Z"]))
        #expect(sim.get("/apps/coffee/channels/\(id)/lastBroadcast/storedUntil") == .null)
        try sim.request("late", extra: ["pushType": ["channel": .string(id)]])
        #expect(sim.get("/activities/late/content/state/status") == "received")
    }

    @Test("a deleted channel takes no broadcasts, its id never comes back, and its subscribers stay")
    func delete() throws {
        var (sim, id) = try Self.world()
        try sim.request("a1", extra: ["pushType": ["channel": .string(id)]])
        try sim.run(["type": "channel.delete", "app": "coffee", "id": .string(id)])
        #expect(sim.get("/apps/coffee/channels/\(id)") == nil)
        #expect(sim.state(of: "a1") == "active")
        #expect(throws: APIError.self) { try sim.run(Self.broadcast(id, "x")) }
        #expect(throws: APIError.self) { try sim.run(["type": "channel.delete", "app": "coffee", "id": .string(id)]) }
        let again = try #require(
            try sim.run(["type": "channel.create", "app": "coffee"]).results[0]["id"]?.stringValue)
        #expect(again != id)
        #expect(sim.engine.channelOwner(id) == nil)
        #expect(sim.engine.channelOwner(again) == "coffee")
    }

    @Test("an activity cannot start on an unknown channel: an app's request is refused, a push-to-start recorded")
    func unknownChannel() throws {
        var (sim, _) = try Self.world()
        let unknown = "dHN0LXNyY2gtY2hubA=="
        #expect(throws: APIError.self) { try sim.request("a1", extra: ["pushType": ["channel": .string(unknown)]]) }
        let pushed = try sim.request(
            "a2",
            extra: [
                "pushType": ["channel": .string(unknown)], "source": "push", "alert": ["title": "Start"],
                "delivery": ["priority": 10],
            ])
        #expect(pushed["applied"] == false)
        #expect(sim.get("/activities/a2") == nil)
        let record = try #require(sim.get("/apps/coffee/deliveries")?.arrayValue?.last)
        #expect(record["reason"] == "invalidChannel")
        for bad: JSONValue in [["channel": "not base64!"], ["channel": 1], ["other": "x"], "channel"] {
            #expect(throws: APIError.self) { try sim.request("a3", extra: ["pushType": bad]) }
        }
    }

    @Test("UN-CHAN an app holds at most 10,000 channels")
    func channelLimit() throws {
        var (sim, _) = try Self.world()
        let create: JSONValue = ["type": "channel.create", "app": "coffee"]
        try sim.run(batch: Array(repeating: create, count: EngineLimits.channelsPerApp - 1))
        #expect(sim.get("/apps/coffee/channels")?.objectValue?.count == EngineLimits.channelsPerApp)
        let rev = sim.engine.rev
        #expect(throws: APIError.self) { try sim.run(create) }
        #expect(sim.engine.rev == rev)
    }

    @Test("a broadcast on one of 2,000 channels patches that channel alone, not the app's whole channel list")
    func incrementalChannels() throws {
        var (sim, id) = try Self.world()
        try sim.run(batch: Array(repeating: ["type": "channel.create", "app": "coffee"], count: 1999))
        try sim.request("a1", extra: ["pushType": ["channel": .string(id)]])
        let revision = try sim.run(Self.broadcast(id, "goal"))
        let channelOps = revision.ops.filter { $0.path.description.hasPrefix("/apps/coffee/channels/") }
        #expect(!channelOps.isEmpty)
        #expect(channelOps.allSatisfy { $0.path.description.hasPrefix("/apps/coffee/channels/\(id)") })
        #expect(revision.ops.count < 40, "\(revision.ops.count) operations")
        try sim.expectPatchesReplay()
    }

    @Test("bad channel commands name the field and change nothing")
    func badCommands() throws {
        var (sim, id) = try Self.world()
        let rev = sim.engine.rev
        let bad: [JSONValue] = [
            ["type": "channel.create", "app": "coffee", "storagePolicy": 2],
            ["type": "channel.create", "app": "nope"],
            ["type": "channel.broadcast", "app": "coffee", "channel": .string(id), "event": "start"],
            ["type": "channel.broadcast", "app": "coffee", "channel": .string(id), "event": "update"],
            Self.broadcast(id, "x", priority: 7),
            Self.broadcast(id, "x", extra: ["dismissalPolicy": "immediate"]),
            Self.broadcast("%%%", "x"),
            ["type": "widget.push", "app": "nope"],
            ["type": "widget.push", "app": "coffee", "contentChanged": "yes"],
        ]
        for command in bad {
            #expect(throws: APIError.self, "\(command)") { try sim.run(command) }
        }
        #expect(sim.engine.rev == rev)
    }

    @Test("WK-4 a widget push asks for a reload of every widget of the app, each charged to its own budget")
    func widgetPush() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.addWidget("w1")
        try sim.addWidget("w2", kind: "news")
        // WK-10: each asked its provider when it was added; the provider answers.
        try sim.setTimeline("w1", [sim.entry(0)], policy: "never")
        try sim.setTimeline("w2", [sim.entry(0)], policy: "never")
        #expect(sim.get("/apps/coffee/widgetPushToken")?.stringValue?.count == 64)
        let revision = try sim.run(["type": "widget.push", "app": "coffee", "delivery": ["apnsId": "w-1"]])
        #expect(revision.results[0]["applied"] == true)
        #expect(sim.get("/widgets/w1/reload/lastReason") == "push")
        #expect(sim.get("/widgets/w2/reload/lastReason") == "push")
        #expect(sim.get("/widgets/w1/reload/budget/used") == 1)
        let record = try #require(sim.get("/apps/coffee/deliveries")?.arrayValue?.last)
        #expect(record["event"] == "widgets")
        #expect(record["apnsId"] == "w-1")
        // WK-5: the next one within the minimum interval waits for it.
        let soon = try sim.run(["type": "widget.push", "app": "coffee"])
        #expect(soon.results[0]["reason"] == "budget_spacing")
        let ignored = try sim.run(["type": "widget.push", "app": "coffee", "contentChanged": false])
        #expect(ignored.results[0]["reason"] == "content_changed_missing")
        try sim.run(["type": "config.set", "values": ["widgetReloadsPerDay": 0]])
        let refused = try sim.run(["type": "widget.push", "app": "coffee"])
        #expect(refused.results[0]["reason"] == "budget_zero")
        try sim.expectPatchesReplay()
    }

    @Test("the widget push token resolves to the app's widgets, not to a Live Activity")
    func widgetToken() throws {
        var sim = Simulation()
        try sim.setUp()
        let token = try #require(sim.get("/apps/coffee/widgetPushToken")?.stringValue)
        let resolution = try #require(sim.engine.resolve(token: token))
        #expect(resolution.isWidgets)
        #expect(!resolution.isPushToStart)
        #expect(resolution.app == "coffee")
        try sim.run(["type": "app.delete", "id": "coffee"])
        #expect(sim.engine.resolve(token: token) == nil)
    }

    @Test("channels, subscribers, stored messages and held broadcasts survive a snapshot; a world without channels keeps its bytes")
    func snapshot() throws {
        var (sim, id) = try Self.world(policy: 1)
        let plain = Simulation()
        #expect(!String(decoding: plain.engine.snapshotBytes, as: UTF8.self).contains("channel"))
        try sim.run(["type": "config.set", "values": ["lowPriorityDelaySeconds": 60]])
        try sim.request("a1", extra: ["pushType": ["channel": .string(id)]])
        try sim.run(Self.broadcast(id, "stored"))
        try sim.run(Self.broadcast(id, "held", priority: 5))
        let bytes = sim.engine.snapshotBytes
        var restored = try Engine(snapshot: try JSONParser().parse(bytes), renderer: TestRenderer())
        #expect(restored.documentBytes == sim.engine.documentBytes)
        #expect(restored.snapshotBytes == bytes)
        #expect(restored.channelOwner(id) == "coffee")
        let late = try sim.request("late", extra: ["pushType": ["channel": .string(id)]])
        let commands: [JSONValue] = [
            [
                "type": "activity.request", "id": "late", "app": "coffee", "attributesType": "CoffeeDeliveryAttributes",
                "attributes": ["coffeeName": "Flat white"], "content": ["state": ["status": "received"], "relevanceScore": 0],
                "pushType": ["channel": .string(id)],
            ]
        ]
        let replayed = try restored.apply(commands, at: sim.wall)
        #expect(replayed.results[0] == late)
        // The channel stores the latest broadcast it received, also one still deferred.
        #expect(restored.value(at: "/activities/late/content/state/status") == "held")
        let next = try restored.apply([["type": "clock.advance", "seconds": 60]] as [JSONValue], at: sim.wall)
        #expect(next == (try sim.advance(seconds: 60)))
        #expect(restored.value(at: "/activities/a1/content/state/status") == "held")
        let created = try restored.apply([["type": "channel.create", "app": "coffee"]] as [JSONValue], at: sim.wall)
        #expect(created == (try sim.run(["type": "channel.create", "app": "coffee"])))
        #expect(restored.snapshotBytes == sim.engine.snapshotBytes)
    }
}
