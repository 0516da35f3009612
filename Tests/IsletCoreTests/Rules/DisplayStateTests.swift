import IsletCore
import Testing

/// Revision 2's display states: Always-On (LA-17, with LA-14's animations) and StandBy's two
/// views of a Live Activity (PR-11).
@Suite struct DisplayStateTests {
    @Test("LA-17 Always-On is the locked, dimmed Lock Screen: Dark Mode, no animation, only while locked and out of StandBy")
    func la17AlwaysOn() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-15-pro"])
        #expect(sim.get("/devices/d1/alwaysOn") == false)
        #expect(sim.get("/devices/d1/scene/alwaysOn") == false)
        #expect(sim.get("/devices/d1/scene/lockScreen/appearance") == "light")
        try sim.run(["type": "device.upsert", "id": "d1", "alwaysOn": true])
        #expect(sim.get("/devices/d1/alwaysOn") == true)
        #expect(sim.get("/devices/d1/scene/alwaysOn") == false, "unlocked: the display is lit")
        try sim.run(["type": "device.upsert", "id": "d1", "locked": true])
        #expect(sim.get("/devices/d1/scene/alwaysOn") == true)
        #expect(sim.get("/devices/d1/scene/lockScreen/appearance") == "dark")
        #expect(sim.get("/devices/d1/scene/lockScreen/defaultBackground") == "#000000")
        #expect(sim.get("/devices/d1/scene/animations/enabled") == false)
        #expect(sim.get("/devices/d1/appearance") == "light", "the device's own appearance is kept")
        try sim.run(["type": "device.upsert", "id": "d1", "standby": true])
        #expect(sim.get("/devices/d1/scene/alwaysOn") == false, "StandBy is a scene of its own")
        #expect(sim.get("/devices/d1/scene/animations/enabled") == true)
        #expect(sim.get("/devices/d1/scene/lockScreen/appearance") == "light")
    }

    @Test("LA-14 revised: StandBy's Night Mode tints red but is not Always-On, so animations stay on")
    func la14NightModeIsNotAlwaysOn() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.run(["type": "device.upsert", "id": "d1", "locked": true, "standby": true, "nightMode": true])
        #expect(sim.get("/devices/d1/scene/animations") == ["enabled": true, "maxSeconds": 2])
        #expect(sim.get("/devices/d1/scene/alwaysOn") == false)
        try sim.run(["type": "device.upsert", "id": "d1", "standby": false, "alwaysOn": true])
        #expect(sim.get("/devices/d1/scene/animations/enabled") == false)
    }

    @Test("LA-17 the switch is refused on a model without an Always-On display, and bad values change nothing")
    func la17BadInput() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["plain": "iphone-15", "pro": "iphone-15-pro"])
        let cases: [(JSONValue, JSONPointer)] = [
            (["type": "device.upsert", "id": "plain", "alwaysOn": true], "/commands/0/alwaysOn"),
            (["type": "device.upsert", "id": "plain", "alwaysOn": "yes"], "/commands/0/alwaysOn"),
            (["type": "device.upsert", "id": "pro", "alwaysOn": 1], "/commands/0/alwaysOn"),
            (["type": "device.upsert", "id": "pro", "standbyView": "half"], "/commands/0/standbyView"),
            (["type": "device.upsert", "id": "pro", "standbyView": true], "/commands/0/standbyView"),
            (["type": "standby.tap", "device": "pro", "extra": 1], "/commands/0/extra"),
            (["type": "standby.tap", "device": 7], "/commands/0/device"),
        ]
        for (command, field) in cases {
            let before = sim.engine.documentValue
            let error = #expect(throws: APIError.self) { try sim.run(command) }
            #expect(error?.field == field, "\(command)")
            #expect(sim.engine.documentValue == before, "a refusal changes nothing")
        }
        try sim.run(["type": "device.upsert", "id": "pro", "alwaysOn": true])
        let before = sim.engine.documentValue
        let error = #expect(throws: APIError.self) {
            try sim.run(["type": "device.upsert", "id": "pro", "model": "iphone-16e"])
        }
        #expect(error?.field == "/commands/0/model", "the new model has no Always-On display")
        #expect(sim.engine.documentValue == before)
        try sim.run(["type": "device.upsert", "id": "pro", "model": "iphone-16e", "alwaysOn": false])
        #expect(sim.get("/devices/pro/model") == "iphone-16e")
    }

    @Test("PR-11 StandBy shows the activity full screen by default, or minimal beside the widgets; a tap goes full screen")
    func pr11StandByViews() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1", score: 5)
        try sim.run(["type": "device.upsert", "id": "d1", "standby": true])
        #expect(sim.get("/devices/d1/standbyView") == "fullScreen")
        #expect(sim.get("/devices/d1/scene/standby/view") == "fullScreen")
        #expect(sim.get("/devices/d1/scene/standby/scale") == 2)
        try sim.run(["type": "device.upsert", "id": "d1", "standbyView": "minimal"])
        #expect(
            sim.get("/devices/d1/scene/standby") == [
                "activity": "a1", "view": "minimal", "scale": 1, "night": false, "tint": nil, "height": 36.67,
                "width": 36.67, "extendsBackground": false, "widgets": [],
            ])
        try sim.run(["type": "standby.tap", "device": "d1"])
        #expect(sim.get("/devices/d1/standbyView") == "fullScreen")
        #expect(sim.get("/devices/d1/scene/standby/view") == "fullScreen")
        #expect(sim.get("/devices/d1/scene/standby/height") == 320)
    }

    @Test("PR-11 a tap needs StandBy's minimal presentation: otherwise a conflict that changes nothing")
    func pr11TapRefused() throws {
        var sim = Simulation()
        try sim.setUp()
        let tap: JSONValue = ["type": "standby.tap", "device": "d1"]
        // Not in StandBy; StandBy minimal with no activity; StandBy full screen with one.
        for setup: JSONValue in [
            ["type": "device.upsert", "id": "d1"],
            ["type": "device.upsert", "id": "d1", "standby": true, "standbyView": "minimal"],
            ["type": "device.upsert", "id": "d1", "standby": true, "standbyView": "fullScreen"],
        ] {
            try sim.run(setup)
            if setup["standbyView"] == "fullScreen" { try sim.request("a1") }
            let before = sim.engine.documentValue
            let error = #expect(throws: APIError.self) { try sim.run(tap) }
            #expect(error?.code == .conflict)
            #expect(error?.field == "/commands/0/device")
            #expect(sim.engine.documentValue == before)
        }
        let unknown = #expect(throws: APIError.self) { try sim.run(["type": "standby.tap", "device": "nope"]) }
        #expect(unknown?.code == .notFound)
    }

    @Test("LA-17, PR-11 the switches survive a snapshot; a snapshot without them restores today's defaults")
    func snapshots() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.run(["type": "device.upsert", "id": "d1", "alwaysOn": true, "locked": true, "standbyView": "minimal"])
        let bytes = sim.engine.snapshotBytes
        let restored = try Engine(snapshot: try JSONParser().parse(bytes), renderer: TestRenderer())
        #expect(restored.snapshotBytes == bytes)
        #expect(restored.documentBytes == sim.engine.documentBytes)
        let remove: JSONValue = [
            ["op": "remove", "path": "/devices/0/alwaysOn"], ["op": "remove", "path": "/devices/0/standbyView"],
        ]
        let old = try JSONPatch.apply(patch: remove, to: try JSONParser().parse(bytes))
        let legacy = try Engine(snapshot: old, renderer: TestRenderer())
        #expect(legacy.value(at: "/devices/d1/alwaysOn") == false)
        #expect(legacy.value(at: "/devices/d1/standbyView") == "fullScreen")
    }
}
