@testable import IsletCore
import Testing

/// AP-4 keeps a forgotten activity's token answering 410; issue 18 caps how many are kept.
@Suite struct RetiredTokenTests {
    /// Activities a1…a4 with push tokens, dismissed at +0 s (a1, a2), +10 s (a3) and +20 s (a4),
    /// then forgotten (`dismissedRetentionSeconds` 60); returns the tokens by activity.
    static func retireFour(_ sim: inout Simulation) throws -> [String: String] {
        try sim.setUp()
        try sim.run(["type": "config.set", "values": ["dismissedRetentionSeconds": 60]])
        var tokens: [String: String] = [:]
        for id in ["a1", "a2", "a3", "a4"] {
            tokens[id] = try #require(try sim.request(id, extra: ["pushType": "token"])["pushToken"]?.stringValue)
        }
        try sim.run(["type": "activity.dismiss", "id": "a1"], ["type": "activity.dismiss", "id": "a2"])
        try sim.advance(seconds: 10)
        try sim.run(["type": "activity.dismiss", "id": "a3"])
        try sim.advance(seconds: 10)
        try sim.run(["type": "activity.dismiss", "id": "a4"])
        return tokens
    }

    @Test("AP-4 past the cap the token dismissed first (ties: the smaller token) is forgotten and answers as unknown")
    func evictsOldest() throws {
        var sim = Simulation()
        sim.engine.bounds.retiredTokens = 3
        let tokens = try Self.retireFour(&sim)
        try sim.advance(seconds: 50)
        #expect(sim.get("/activities/a2") == nil)
        let step = try sim.advance(seconds: 20)
        #expect(step.discards.retiredTokens == 1)
        #expect(sim.engine.retiredTokens.count == 3)
        let first = min(tokens["a1"]!, tokens["a2"]!)
        for (id, token) in tokens {
            let resolution = sim.engine.resolve(token: token)
            if token == first {
                #expect(resolution == nil, "\(id)")
            } else {
                #expect(resolution?.isDismissed == true, "\(id)")
                #expect(resolution?.activity == id)
            }
        }
    }

    @Test("AP-4 the eviction replays: the same commands, or a restored snapshot, keep the same tokens")
    func deterministic() throws {
        func world() throws -> Simulation {
            var sim = Simulation()
            sim.engine.bounds.retiredTokens = 3
            _ = try Self.retireFour(&sim)
            try sim.advance(seconds: 30)
            return sim
        }
        var live = try world()
        let replay = try world()
        #expect(live.engine.snapshotBytes == replay.engine.snapshotBytes)
        var restored = try Engine(snapshot: live.engine.snapshot(), renderer: TestRenderer())
        restored.bounds.retiredTokens = 3
        let step: [JSONValue] = [["type": "clock.advance", "seconds": 60]]
        let expected = try live.run(batch: step)
        #expect(expected.discards.retiredTokens == 1)
        #expect(try restored.apply(step, at: live.wall) == expected)
        #expect(restored.snapshotBytes == live.engine.snapshotBytes)
        #expect(live.get("/activities") == [:])
    }

    @Test("AP-4 deleting an app forgets its retired tokens without evicting another app's")
    func deletingAnApp() throws {
        var sim = Simulation()
        sim.engine.bounds.retiredTokens = 4
        let tokens = try Self.retireFour(&sim)
        try sim.advance(seconds: 60)
        try sim.run(["type": "app.upsert", "id": "ride", "foreground": true])
        let ride = try #require(
            try sim.request("r1", app: "ride", extra: ["pushType": "token"])["pushToken"]?.stringValue)
        try sim.run(["type": "activity.dismiss", "id": "r1"])
        let deleted = try sim.run(["type": "app.delete", "id": "ride"])
        #expect(deleted.discards.retiredTokens == 0)
        #expect(sim.engine.resolve(token: ride) == nil)
        for token in tokens.values { #expect(sim.engine.resolve(token: token)?.isDismissed == true) }
        try sim.run(["type": "app.delete", "id": "coffee"])
        #expect(sim.engine.retiredTokens.count == 0)
        for token in tokens.values { #expect(sim.engine.resolve(token: token) == nil) }
    }
}
