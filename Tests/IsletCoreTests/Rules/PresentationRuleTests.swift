import IsletCore
import Testing

/// PR-1 … PR-9: what the island, Lock Screen and StandBy show on each device.
@Suite struct PresentationRuleTests {
    @Test("PR-1 only active or stale activities are island candidates, and only on Dynamic Island devices")
    func pr1Candidates() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-15-pro", "se": "iphone-se-3"])
        try sim.request("pending", extra: ["start": sim.date(after: 600), "alert": ["title": "Soon"]])
        #expect(sim.state(of: "pending") == "pending")
        #expect(sim.get("/devices/d1/scene/island/mode") == "none")
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == [])
        try sim.request("a1", extra: ["content": ["state": [:], "staleDate": sim.date(after: 60)]])
        try sim.advance(seconds: 60)
        #expect(sim.state(of: "a1") == "stale")
        #expect(sim.get("/devices/d1/scene/island/compact/activity") == "a1")
        #expect(
            sim.get("/devices/se/scene/island") == [
                "mode": "none", "width": 0, "height": 0, "cornerRadius": 44, "compact": nil, "minimal": [],
                "expanded": nil,
                "background": "#000000", "keyline": nil,
            ])
        try sim.advance(seconds: 540)
        #expect(sim.state(of: "pending") == "active")
        #expect(sim.get("/activities/pending/startedAt") == "2026-11-22T08:10:00Z")
        try sim.run(["type": "activity.end", "id": "a1"])
        try sim.run(["type": "activity.end", "id": "pending"])
        #expect(sim.get("/devices/d1/scene/island/mode") == "none")
    }

    @Test("PR-2 one app → compact showing its best activity: highest score, ties to the first started")
    func pr2Compact() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1", score: 10)
        try sim.request("a2", score: 50)
        try sim.request("a3", score: 50)
        #expect(sim.get("/devices/d1/scene/island/mode") == "compact")
        #expect(sim.get("/devices/d1/scene/island/compact/activity") == "a2")
        #expect(sim.get("/devices/d1/scene/island/width") == 230)
        #expect(sim.get("/devices/d1/scene/island/height") == 36.67)
        try sim.run(["type": "activity.update", "id": "a1", "content": ["state": [:], "relevanceScore": 100]])
        #expect(sim.get("/devices/d1/scene/island/compact/activity") == "a1")
        #expect(sim.get("/devices/d1/scene/island/minimal") == [])
    }

    @Test("PR-3 three apps → two minimal views chosen by score then start, the first attached")
    func pr3Minimal() throws {
        var sim = Simulation()
        try sim.setUp(apps: ["coffee", "ride", "sports"])
        try sim.request("c1", app: "coffee", score: 10)
        try sim.advance(seconds: 1)
        try sim.request("r1", app: "ride", score: 50)
        try sim.request("r2", app: "ride", score: 60)
        try sim.advance(seconds: 1)
        try sim.request("s1", app: "sports", score: 10)
        #expect(sim.get("/devices/d1/scene/island/mode") == "minimal")
        #expect(
            sim.get("/devices/d1/scene/island/minimal") == [
                ["activity": "r2", "attached": true, "width": 36.67],
                ["activity": "c1", "attached": false, "width": 36.67],
            ])
        #expect(sim.get("/devices/d1/scene/island/compact") == .null)
        try sim.run(["type": "config.set", "values": ["minimalPolicy": "start"]])
        #expect(sim.get("/devices/d1/scene/island/minimal/0/activity") == "c1")
        #expect(sim.get("/devices/d1/scene/island/minimal/1/activity") == "r2")
    }

    @Test("PR-4 an alert expands for 4 s then collapses; alerts on several activities queue, one at a time")
    func pr4AlertQueue() throws {
        var sim = Simulation()
        try sim.setUp(apps: ["coffee", "ride"])
        try sim.request("c1")
        try sim.request("r1", app: "ride")
        let alert: JSONValue = ["title": "Update"]
        try sim.run(
            ["type": "activity.update", "id": "c1", "content": ["state": ["n": 1]], "alert": alert],
            ["type": "activity.update", "id": "r1", "content": ["state": ["n": 1]], "alert": alert])
        #expect(sim.get("/devices/d1/scene/island/expanded/activity") == "c1")
        #expect(sim.engine.nextDeadline == Simulation.start.adding(seconds: 4))
        try sim.advance(seconds: 3.999)
        #expect(sim.get("/devices/d1/scene/island/expanded/activity") == "c1")
        let revision = try sim.advance(seconds: 0.001)
        #expect(
            sim.get("/devices/d1/scene/island/expanded") == [
                "activity": "r1", "reason": "alert", "until": "2026-11-22T08:00:08Z",
            ])
        #expect(revision.transitions == 1)
        try sim.advance(seconds: 4)
        #expect(sim.get("/devices/d1/scene/island/mode") == "minimal")
        #expect(sim.get("/devices/d1/scene/island/expanded") == .null)
    }

    @Test("PR-4 a long press expands for its duration; ending the expanded activity collapses at once")
    func pr4Press() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-15-pro", "se": "iphone-se-3"])
        try sim.request("a1")
        try sim.run(["type": "island.press", "device": "d1"])
        #expect(
            sim.get("/devices/d1/scene/island/expanded") == [
                "activity": "a1", "reason": "press", "until": "2026-11-22T08:00:08Z",
            ])
        try sim.run(["type": "activity.end", "id": "a1"])
        #expect(sim.get("/devices/d1/scene/island/mode") == "none")
        let noIsland = #expect(throws: APIError.self) { try sim.run(["type": "island.press", "device": "se"]) }
        #expect(noIsland?.code == .conflict)
        let ended = #expect(throws: APIError.self) {
            try sim.run(["type": "island.press", "device": "d1", "activity": "a1"])
        }
        #expect(ended?.field == "/commands/0/activity")
    }

    @Test(
        "PR-5 every catalog model has its geometry, derived values flagged",
        arguments: [
            ("iphone-14-pro", 393.0, 852.0, 230.0, 371.0, 52.33, [String]()),
            ("iphone-15", 393, 852, 230, 371, 52.33, []), ("iphone-15-pro", 393, 852, 230, 371, 52.33, []),
            ("iphone-16", 393, 852, 230, 371, 52.33, []), ("iphone-14-pro-max", 430, 932, 250, 408, 62.33, []),
            ("iphone-15-plus", 430, 932, 250, 408, 62.33, []), ("iphone-15-pro-max", 430, 932, 250, 408, 62.33, []),
            ("iphone-16-plus", 430, 932, 250, 408, 62.33, []),
            ("iphone-16-pro", 402, 874, 230, 371, 52.33, ["compactSideWidth", "lockScreenWidth"]),
            ("iphone-16-pro-max", 440, 956, 250, 408, 62.33, ["compactSideWidth", "lockScreenWidth"]),
            ("iphone-17", 402, 874, 230, 371, 52.33, ["compactSideWidth", "lockScreenWidth"]),
            ("iphone-17-pro", 402, 874, 230, 371, 52.33, ["compactSideWidth", "lockScreenWidth"]),
            ("iphone-17-pro-max", 440, 956, 250, 408, 62.33, ["compactSideWidth", "lockScreenWidth"]),
            ("iphone-air", 420, 912, 230, 389, 52.33, ["compactSideWidth", "expandedWidth", "islandWidth", "lockScreenWidth"]),
        ])
    func pr5Geometry(
        model: String, width: Double, height: Double, island: Double, expanded: Double, side: Double, derived: [String]
    ) throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d": model])
        #expect(sim.get("/devices/d/screen") == ["width": .number(width), "height": .number(height)])
        #expect(sim.get("/devices/d/geometry/islandWidth") == .number(island))
        #expect(sim.get("/devices/d/geometry/expandedWidth") == .number(expanded))
        #expect(sim.get("/devices/d/geometry/lockScreenWidth") == .number(expanded))
        #expect(sim.get("/devices/d/geometry/compactSide") == ["width": .number(side), "height": 36.67])
        #expect(sim.get("/devices/d/geometry/derived") == .array(derived.map { .string($0) }))
        #expect(sim.get("/devices/d/scene/island/cornerRadius") == 44)
        #expect(sim.get("/devices/d/scene/island/width") == 125.34, "an idle island is the camera cutout")
    }

    @Test("PR-5 the SE has no island; expanded heights clamp to 84–160, truncation and in-between heights are flagged")
    func pr5Heights() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["se": "iphone-se-3", "d1": "iphone-16-pro"])
        #expect(sim.get("/devices/se/dynamicIsland") == false)
        #expect(sim.get("/devices/se/geometry/lockScreenWidth") == 353)
        #expect(sim.get("/devices/se/geometry/derived") == ["lockScreenWidth"])
        try sim.request("a1")
        let put: (String, String) -> JSONValue = { slot, html in
            [
                "type": "template.put", "app": "coffee", "target": "activity:CoffeeDeliveryAttributes",
                "slot": .string(slot), "html": .string(html),
            ]
        }
        try sim.run(put("expandedHeight", "{{state.h}}"))
        for (declared, height, truncated, between) in [
            (200.0, 160.0, true, false), (50, 84, false, false), (120, 120, false, true),
        ] {
            try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["h": .number(declared)]]])
            #expect(
                sim.get("/activities/a1/render/layout/expanded") == [
                    "height": .number(height), "truncated": .bool(truncated), "inBetweenBands": .bool(between),
                ])
        }
        try sim.run(["type": "island.press", "device": "d1"])
        #expect(sim.get("/devices/d1/scene/island/height") == 120)
        try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["h": 90]]])
        #expect(sim.get("/devices/d1/scene/island/height") == 90, "the scene follows a re-rendered expanded activity")
    }

    @Test("PR-6 the Lock Screen lists active, stale and ended-not-dismissed activities by score, then start")
    func pr6LockScreen() throws {
        var sim = Simulation()
        try sim.setUp(apps: ["coffee", "ride"])
        try sim.request("low", score: 1)
        try sim.request("high", app: "ride", score: 90)
        try sim.request("mid", score: 50)
        try sim.request("mid2", app: "ride", score: 50)
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == ["high", "mid", "mid2", "low"])
        #expect(sim.get("/devices/d1/scene/lockScreen/defaultBackground") == "#FFFFFF")
        try sim.run(["type": "activity.end", "id": "high"])
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == ["high", "mid", "mid2", "low"])
        try sim.run(["type": "activity.dismiss", "id": "high"])
        let revision = try sim.run([
            "type": "activity.update", "id": "low", "content": ["state": [:], "relevanceScore": 70],
        ])
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == ["low", "mid", "mid2"])
        let lockOps = revision.ops.filter { $0.path.description.hasPrefix("/devices/d1/scene/lockScreen") }
        #expect(lockOps.count == 2, "a move is one remove and one add, not a rewrite: \(lockOps)")
        try sim.expectPatchesReplay()
    }

    @Test("PR-7 StandBy shows the top island activity's Lock Screen presentation at 2×, red in Night Mode")
    func pr7StandBy() throws {
        var sim = Simulation()
        try sim.setUp()
        #expect(sim.get("/devices/d1/scene/standby") == .null)
        try sim.request("a1", score: 5)
        try sim.request("a2", score: 9)
        try sim.run(["type": "device.upsert", "id": "d1", "standby": true])
        #expect(
            sim.get("/devices/d1/scene/standby") == [
                "activity": "a2", "scale": 2, "night": false, "tint": nil, "height": 320, "extendsBackground": true,
                "widgets": [], "view": "fullScreen",
            ])
        try sim.run(["type": "device.upsert", "id": "d1", "nightMode": true])
        #expect(sim.get("/devices/d1/scene/standby/night") == true)
        #expect(sim.get("/devices/d1/scene/standby/tint") == "red")
    }

    @Test("PR-8 controls only in expanded and Lock Screen templates, and only usable when unlocked")
    func pr8Controls() throws {
        var sim = Simulation()
        try sim.setUp()
        let put: (String) -> JSONValue = { slot in
            [
                "type": "template.put", "app": "coffee", "target": "activity:CoffeeDeliveryAttributes",
                "slot": .string(slot),
                "html": "<button data-action=\"pause\">Pause</button>",
            ]
        }
        for slot in ["compactLeading", "compactTrailing", "minimal"] {
            let error = #expect(throws: APIError.self) { try sim.run(put(slot)) }
            #expect(error?.field == "/commands/0/html")
            #expect(error?.message.hasPrefix("PR-8") == true)
        }
        for slot in ["expandedBottom", "lockScreen"] { try sim.run(put(slot)) }
        #expect(sim.get("/devices/d1/scene/interactive") == true)
        try sim.run(["type": "device.upsert", "id": "d1", "locked": true])
        #expect(sim.get("/devices/d1/scene/interactive") == false)
    }

    @Test(
        "PR-9 the island is black; the keyline tint shows in Dark Mode; the Lock Screen default follows the appearance")
    func pr9Colors() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.run([
            "type": "app.upsert", "id": "coffee",
            "identity": ["tint": "#6F4E37", "background": "#FFF8F0", "keyline": "#C08040"],
        ])
        try sim.request("a1")
        #expect(sim.get("/devices/d1/scene/island/background") == "#000000")
        #expect(sim.get("/devices/d1/scene/island/keyline") == .null)
        try sim.run(["type": "device.upsert", "id": "d1", "appearance": "dark"])
        #expect(sim.get("/devices/d1/scene/island/keyline") == "#C08040")
        #expect(sim.get("/devices/d1/scene/lockScreen/defaultBackground") == "#000000")
        #expect(sim.get("/apps/coffee/identity/background") == "#FFF8F0")
        let bad = #expect(throws: APIError.self) {
            try sim.run(["type": "app.upsert", "id": "coffee", "identity": ["tint": "red;}<script>"]])
        }
        #expect(bad?.field == "/commands/0/identity/tint")
    }
}
