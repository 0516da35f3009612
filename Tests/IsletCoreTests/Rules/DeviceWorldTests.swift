import IsletCore
import Testing

/// Per-device worlds: LA-15 (an activity belongs to one device), LA-16 (the foreground is a
/// device's), WK-11 (reloads while the app is in the foreground are free).
@Suite struct DeviceWorldTests {
    static let phones = ["d1": "iphone-15-pro", "d2": "iphone-16-pro-max", "se": "iphone-se-3"]

    @Test("LA-15 an activity runs on the device it names, or the first device by id; only that device shows it")
    func la15OwnDevice() throws {
        var sim = Simulation()
        try sim.setUp(devices: Self.phones)
        let result = try sim.request("a1", extra: ["device": "d2"])
        #expect(result["device"] == "d2")
        try sim.request("b1")
        #expect(sim.get("/activities/a1/device") == "d2")
        #expect(sim.get("/activities/b1/device") == "d1")
        #expect(sim.get("/devices/d2/scene/island/compact") == ["activity": "a1"])
        #expect(sim.get("/devices/d1/scene/island/compact") == ["activity": "b1"])
        #expect(sim.get("/devices/d2/scene/lockScreen/activities") == ["a1"])
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == ["b1"])
        #expect(sim.get("/devices/se/scene/lockScreen/activities") == [])
        // An alert reaches only the activity's device.
        try sim.run([
            "type": "activity.update", "id": "a1", "content": ["state": ["status": "brewing"]],
            "alert": ["title": "Brewing", "body": "now"],
        ])
        #expect(sim.get("/devices/d2/scene/island/mode") == "expanded")
        #expect(sim.get("/devices/d1/scene/island/mode") == "compact")
        #expect(sim.get("/devices/se/scene/banner") == .null)
        // A press names an activity of its own device only; an empty island is refused, and
        // does nothing when replayed from a log (revision 1's press showed another device's).
        let other = #expect(throws: APIError(.conflict, "")) {
            try sim.run(["type": "island.press", "device": "d1", "activity": "a1"])
        }
        #expect(other?.field == "/commands/0/activity")
        try sim.run(["type": "activity.end", "id": "a1", "dismissalPolicy": "immediate"])
        #expect(throws: APIError(.conflict, "")) { try sim.run(["type": "island.press", "device": "d2"]) }
        let press = try sim.engine.apply([["type": "island.press", "device": "d2"]], at: sim.wall, admission: .logged)
        #expect(press.results == [[:]])
        sim.revisions.append(press)
        try sim.expectPatchesReplay()
    }

    @Test("LA-15 an unknown device is refused with its field, in a batch too, and changes nothing")
    func la15UnknownDevice() throws {
        var sim = Simulation()
        try sim.setUp(devices: Self.phones)
        try sim.run([
            "type": "shortcut.upsert", "app": "coffee", "id": "open", "phrases": ["Open ${applicationName}"],
            "intent": ["type": "openApp"],
        ])
        let before = sim.engine.documentBytes
        let lone = #expect(throws: APIError.invalidArgument) { try sim.request("a1", extra: ["device": "nope"]) }
        #expect(lone?.field == "/commands/0/device")
        let batch = #expect(throws: APIError.invalidArgument) {
            try sim.run(batch: [
                ["type": "activity.request", "id": "ok", "app": "coffee", "attributesType": "T", "content": ["state": [:]]],
                [
                    "type": "activity.request", "id": "bad", "app": "coffee", "attributesType": "T",
                    "device": "nope", "content": ["state": [:]],
                ],
            ])
        }
        #expect(batch?.field == "/commands/1/device")
        let run = #expect(throws: APIError.invalidArgument) {
            try sim.run(["type": "shortcut.run", "app": "coffee", "id": "open", "device": "nope"])
        }
        #expect(run?.field == "/commands/0/device")
        #expect(sim.engine.documentBytes == before)
    }

    @Test("LA-15 without any device an activity shows on every device, also on those added later (revision 1)")
    func la15Unbound() throws {
        var sim = Simulation()
        try sim.setUp(devices: [:])
        try sim.request("a1")
        #expect(sim.get("/activities/a1/device") == .null)
        try sim.setUp(devices: ["d1": "iphone-15-pro", "d2": "iphone-16-pro"], apps: [])
        for device in ["d1", "d2"] {
            #expect(sim.get("/devices/\(device)/scene/island/compact") == ["activity": "a1"])
            #expect(sim.get("/devices/\(device)/scene/lockScreen/activities") == ["a1"])
        }
        try sim.request("b1", score: 50)
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == ["b1", "a1"])
        #expect(sim.get("/devices/d2/scene/lockScreen/activities") == ["a1"])
        try sim.expectPatchesReplay()
    }

    @Test("LA-4 with LA-15: the per-app and device-wide limits count each device's own activities")
    func la4PerDevice() throws {
        var configuration = SimulatorConfiguration()
        configuration.maxActivitiesPerApp = 2
        configuration.maxActivitiesPerDevice = 3
        var sim = Simulation(configuration: configuration)
        try sim.setUp(devices: Self.phones, apps: ["coffee", "ride"])
        try sim.request("a1")
        try sim.request("a2")
        #expect(throws: APIError(.limitExceeded, "")) { try sim.request("a3") }
        try sim.request("a3", extra: ["device": "d2"])
        try sim.request("r1", app: "ride")
        let global = #expect(throws: APIError(.limitExceeded, "")) { try sim.request("r2", app: "ride") }
        #expect(global?.message.hasPrefix("globalMaximumExceeded") == true)
        try sim.request("r2", app: "ride", extra: ["device": "se"])
    }

    @Test("LA-15 deleting a device ends and dismisses its activities (deviceDeleted); other devices keep theirs")
    func la15DeviceDeleted() throws {
        var sim = Simulation()
        try sim.setUp(devices: Self.phones)
        try sim.request("a1", extra: ["device": "d2"])
        try sim.request("b1")
        try sim.run(["type": "device.delete", "id": "d2"])
        #expect(sim.state(of: "a1") == "dismissed")
        #expect(sim.get("/activities/a1/endReason") == "deviceDeleted")
        #expect(sim.state(of: "b1") == "active")
        // Later commands for it are ignored, never refused.
        let update = try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["status": "late"]]])
        #expect(update.results[0]["applied"] == false)
        try sim.expectPatchesReplay()
    }

    @Test("LA-16 the foreground app's activities leave that device's island and banners, not its Lock Screen, and come back")
    func la16Foreground() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-15-pro", "se": "iphone-se-3"], apps: ["coffee", "ride"])
        try sim.request("a1", score: 50)
        try sim.request("r1", app: "ride")
        try sim.request("s1", extra: ["device": "se"])
        #expect(sim.get("/devices/d1/scene/island/mode") == "minimal")
        try sim.run(["type": "device.upsert", "id": "d1", "foregroundApp": "coffee"])
        #expect(sim.get("/devices/d1/foregroundApp") == "coffee")
        #expect(sim.get("/devices/d1/scene/island/compact") == ["activity": "r1"])
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == ["a1", "r1"])
        // No alert-expanded island for it either; another app's alert still expands.
        let alert: JSONValue = ["title": "Brewing", "body": "now"]
        try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["status": "b"]], "alert": alert])
        #expect(sim.get("/devices/d1/scene/island/mode") == "compact")
        // A press cannot expand it.
        #expect(throws: APIError(.conflict, "")) { try sim.run(["type": "island.press", "device": "d1", "activity": "a1"]) }
        // Coming to the foreground collapses an expansion already showing it.
        try sim.run(["type": "device.upsert", "id": "d1", "foregroundApp": ""])
        try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["status": "c"]], "alert": alert])
        #expect(sim.get("/devices/d1/scene/island/expanded/activity") == "a1")
        try sim.run(["type": "device.upsert", "id": "d1", "foregroundApp": "coffee"])
        #expect(sim.get("/devices/d1/scene/island/mode") == "compact")
        // Leaving the foreground (null clears too) brings it back.
        try sim.run(["type": "device.upsert", "id": "d1", "foregroundApp": .null])
        #expect(sim.get("/devices/d1/foregroundApp") == .null)
        #expect(sim.get("/devices/d1/scene/island/mode") == "minimal")
        // No banner on a device where the app is in the foreground.
        try sim.run(["type": "device.upsert", "id": "se", "foregroundApp": "coffee"])
        try sim.run(["type": "activity.update", "id": "s1", "content": ["state": ["status": "b"]], "alert": alert])
        #expect(sim.get("/devices/se/scene/banner") == .null)
        try sim.run(["type": "device.upsert", "id": "se", "foregroundApp": "ride"])
        try sim.run(["type": "activity.update", "id": "s1", "content": ["state": ["status": "c"]], "alert": alert])
        #expect(sim.get("/devices/se/scene/banner/activity") == "s1")
        try sim.expectPatchesReplay()
    }

    @Test("LA-16 with LA-3: an app may request on a device where it is in the foreground; an unknown app is refused")
    func la16RequestFromForeground() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-15-pro", "d2": "iphone-16-pro"], apps: [])
        try sim.run(["type": "app.upsert", "id": "coffee"])
        let background = #expect(throws: APIError(.conflict, "")) { try sim.request("a1") }
        #expect(background?.message.hasPrefix("visibility") == true)
        try sim.run(["type": "device.upsert", "id": "d2", "foregroundApp": "coffee"])
        #expect(throws: APIError(.conflict, "")) { try sim.request("a1") }
        try sim.request("a1", extra: ["device": "d2"])
        let unknown = #expect(throws: APIError.invalidArgument) {
            try sim.run(["type": "device.upsert", "id": "d1", "foregroundApp": "nope"])
        }
        #expect(unknown?.field == "/commands/0/foregroundApp")
        // Revision 1's flag still lets the app start activities, and hides nothing.
        try sim.run(["type": "app.upsert", "id": "coffee", "foreground": true])
        try sim.request("a2")
        #expect(sim.get("/devices/d1/scene/island/compact") == ["activity": "a2"])
        // Deleting the app clears it from the screen.
        try sim.run(["type": "app.delete", "id": "coffee"])
        #expect(sim.get("/devices/d2/foregroundApp") == .null)
    }

    @Test("LA-16 an openApp shortcut brings the app to the foreground of the run's device")
    func la16OpenAppShortcut() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-15-pro", "d2": "iphone-16-pro"], apps: ["timer"])
        try sim.run([
            "type": "shortcut.upsert", "app": "timer", "id": "open", "phrases": ["Open ${applicationName}"],
            "intent": ["type": "openApp"],
        ])
        try sim.run(["type": "shortcut.run", "app": "timer", "id": "open", "device": "d2"])
        #expect(sim.get("/devices/d2/foregroundApp") == "timer")
        #expect(sim.get("/devices/d1/foregroundApp") == .null)
    }

    @Test("WK-11 reloads asked for while the app is in the foreground on the widget's device are not charged")
    func wk11ForegroundReloadsAreFree() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d1": "iphone-15-pro", "d2": "iphone-16-pro"], apps: ["weather"])
        try sim.run([
            "type": "widget.upsert", "id": "w1", "app": "weather", "kind": "weather", "family": "systemSmall",
            "device": "d1",
        ])
        let used = { (sim: Simulation) in sim.get("/widgets/w1/reload/budget/used")?.numberValue }
        let before = used(sim)
        try sim.run(["type": "device.upsert", "id": "d1", "foregroundApp": "weather"])
        try sim.run(["type": "widget.reload", "id": "w1", "reason": "app"])
        #expect(used(sim) == before)
        #expect(sim.get("/widgets/w1/reload/pending") == true)
        // In the foreground of another device it is charged as usual.
        try sim.run(["type": "device.upsert", "id": "d1", "foregroundApp": ""])
        try sim.run(["type": "device.upsert", "id": "d2", "foregroundApp": "weather"])
        try sim.advance(seconds: 600)
        try sim.run(["type": "widget.reload", "id": "w1", "reason": "app"])
        #expect(used(sim) == (before ?? 0) + 1)
    }
}
