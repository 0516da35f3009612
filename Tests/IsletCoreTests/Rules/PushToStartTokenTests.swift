import IsletCore
import Testing

/// Push-to-start tokens per device, app and attributes type; `app.rotatePushToStartToken`; the
/// iOS versions requests need; per-device state through snapshots and forks.
@Suite struct PushToStartTokenTests {
    static func world() throws -> Simulation {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-15-pro", "d2": "iphone-16-pro", "old": "iphone-15"], apps: [])
        try sim.run(["type": "device.upsert", "id": "old", "iosVersion": "17.1"])
        try sim.run(["type": "app.upsert", "id": "scores", "attributesTypes": ["Game", "Match"]])
        return sim
    }

    @Test("LA-15 each device that supports push-to-start (17.2) has a token per declared type; starts reach the token's device")
    func tokensPerDeviceAndType() throws {
        var sim = try Self.world()
        let tokens = try #require(sim.get("/apps/scores/pushToStartTokens")?.objectValue)
        #expect(tokens.keys == ["d1", "d2"])
        let d2Game = try #require(sim.get("/apps/scores/pushToStartTokens/d2/Game")?.stringValue)
        let d1Game = try #require(sim.get("/apps/scores/pushToStartTokens/d1/Game")?.stringValue)
        #expect(d1Game != d2Game)
        #expect(d1Game != sim.get("/apps/scores/pushToStartTokens/d1/Match")?.stringValue)
        let resolution = try #require(sim.engine.resolve(token: d2Game))
        #expect(resolution.isPushToStart && resolution.device == "d2" && resolution.attributesType == "Game")
        // The revision-1 token still resolves: any type, the default device.
        let legacy = try #require(sim.get("/apps/scores/pushToStartToken")?.stringValue)
        #expect(sim.engine.resolve(token: legacy)?.device == nil)
        #expect(sim.engine.resolve(token: legacy)?.isPushToStart == true)
        // The same commands give the same tokens (nothing drawn from the token counter).
        let again = try Self.world()
        #expect(again.get("/apps/scores/pushToStartTokens") == sim.get("/apps/scores/pushToStartTokens"))
        // A push-to-start names its device: the activity runs there.
        try sim.request("g1", app: "scores", extra: ["source": "push", "device": "d2"])
        #expect(sim.get("/activities/g1/device") == "d2")
        // Declaring fewer types drops tokens; they no longer resolve.
        try sim.run(["type": "app.upsert", "id": "scores", "attributesTypes": ["Game"]])
        let match = try #require(again.get("/apps/scores/pushToStartTokens/d1/Match")?.stringValue)
        #expect(sim.engine.resolve(token: match) == nil)
        // A device updated to 17.2 gets its tokens; a deleted one loses them.
        try sim.run(["type": "device.upsert", "id": "old", "iosVersion": "17.2"])
        #expect(sim.get("/apps/scores/pushToStartTokens/old/Game") != nil)
        try sim.run(["type": "device.delete", "id": "d2"])
        #expect(sim.engine.resolve(token: d2Game) == nil)
        try sim.expectPatchesReplay()
    }

    @Test("app.rotatePushToStartToken gives a new token; the old one answers as a token no longer valid (410)")
    func rotation() throws {
        var sim = try Self.world()
        let old = try #require(sim.get("/apps/scores/pushToStartTokens/d1/Game")?.stringValue)
        let result = try sim.run(["type": "app.rotatePushToStartToken", "app": "scores", "attributesType": "Game"])
        let new = try #require(result.results[0]["pushToStartToken"]?.stringValue)
        #expect(result.results[0]["device"] == "d1")
        #expect(result.results[0]["previous"] == .string(old))
        #expect(new != old)
        #expect(sim.get("/apps/scores/pushToStartTokens/d1/Game") == .string(new))
        #expect(sim.engine.resolve(token: old)?.isDismissed == true)
        #expect(sim.engine.resolve(token: new)?.device == "d1")
        let bad: [(JSONValue, APIError.Code, String)] = [
            (["type": "app.rotatePushToStartToken", "app": "nope", "attributesType": "Game"], .notFound, "/app"),
            (["type": "app.rotatePushToStartToken", "app": "scores", "attributesType": "Other"], .invalidArgument, "/attributesType"),
            (["type": "app.rotatePushToStartToken", "app": "scores", "attributesType": "Game", "device": "x"], .invalidArgument, "/device"),
            (["type": "app.rotatePushToStartToken", "app": "scores", "attributesType": "Game", "device": "old"], .conflict, "/device"),
        ]
        for (command, code, field) in bad {
            let error = #expect(throws: APIError.self) { try sim.run(command) }
            #expect(error?.code == code)
            #expect(error?.field == JSONPointer(tokens: ["commands", "0"] + field.split(separator: "/").map(String.init)))
        }
        // A restored engine keeps the rotated token and the retired one.
        let restored = try Engine(snapshot: try JSONParser().parse(sim.engine.snapshotBytes), renderer: TestRenderer())
        #expect(restored.documentBytes == sim.engine.documentBytes)
        #expect(restored.resolve(token: new)?.device == "d1")
        #expect(restored.resolve(token: old)?.isDismissed == true)
    }

    @Test(
        "requests need the device's iOS: 16.1 for Live Activities, 17.2 push-to-start, 18 channels, 26 scheduled starts",
        arguments: [
            ("16.0", [String: JSONValue](), "/device"),
            ("17.1", ["source": "push"], "/source"),
            ("17.4", ["pushType": ["channel": "c1"]], "/pushType"),
            ("18.6", ["start": "2026-11-22T09:00:00Z", "alert": ["title": "Soon"]], "/start"),
        ] as [(String, [String: JSONValue], String)])
    func iosGating(version: String, extra: [String: JSONValue], field: String) throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-14-pro"])
        let channel = try sim.run(["type": "channel.create", "app": "coffee"]).results[0]["id"]
        var extra = extra
        if extra["pushType"] != nil { extra["pushType"] = ["channel": channel ?? .null] }
        try sim.run(["type": "device.upsert", "id": "d1", "iosVersion": .string(version)])
        if extra["source"] == "push" {
            // A push-to-start the device cannot take is a rejected delivery (AP-6), not an error.
            let result = try sim.request("a1", extra: extra)
            #expect(result["reason"] == "unsupported")
            #expect(sim.get("/apps/coffee/deliveries/0/outcome") == "rejected")
        } else {
            let error = #expect(throws: APIError(.conflict, "")) { try sim.request("a1", extra: extra) }
            #expect(error?.message.hasPrefix("unsupported") == true)
            #expect(error?.field == JSONPointer(tokens: ["commands", "0"] + field.split(separator: "/").map(String.init)))
        }
        #expect(sim.get("/activities/a1") == nil)
    }

    @Test("per-device state survives a snapshot and a fork: activities' devices, foreground apps, tokens")
    func snapshotAndFork() throws {
        var sim = try Self.world()
        try sim.run(["type": "app.upsert", "id": "scores", "foreground": true])
        try sim.request("g1", app: "scores", extra: ["device": "d2", "pushType": "token"])
        try sim.request("g2", app: "scores", extra: ["pushType": "token"])
        try sim.run(["type": "device.upsert", "id": "d1", "foregroundApp": "scores"])
        #expect(sim.get("/activities/g1/pushToken") != sim.get("/activities/g2/pushToken"))
        let bytes = sim.engine.snapshotBytes
        var restored = try Engine(snapshot: try JSONParser().parse(bytes), renderer: TestRenderer())
        #expect(restored.documentBytes == sim.engine.documentBytes)
        #expect(restored.snapshotBytes == bytes)
        let next: [JSONValue] = [["type": "device.upsert", "id": "d1", "foregroundApp": ""]]
        let expected = try sim.engine.apply(next, at: sim.wall)
        #expect(try restored.apply(next, at: sim.wall) == expected)
        let fork = sim.engine.forked(clock: nil, atWall: sim.wall, tokenSalt: 7)
        #expect(fork.documentBytes == sim.engine.documentBytes)
        #expect(fork.value(at: "/devices/d2/scene/island/compact") == ["activity": "g1"])
    }
}
