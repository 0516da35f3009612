import IsletCore
import Testing

/// The device catalog's newer models and each device's iOS version, which gates features as
/// iOS does (issue: fidelity round 2).
@Suite struct DeviceSoftwareTests {
    @Test("the catalog has iPhone 16e without an island, the iPhone 17 family and iPhone Air, Always-On where Apple has it")
    func newModels() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["e": "iphone-16e", "air": "iphone-air", "p": "iphone-17-pro", "b": "iphone-16"])
        #expect(sim.get("/devices/e/dynamicIsland") == false)
        #expect(sim.get("/devices/e/screen") == ["width": 390, "height": 844])
        #expect(sim.get("/devices/e/geometry/derived") == ["lockScreenWidth"])
        #expect(sim.get("/devices/e/scene/island/mode") == "none")
        #expect(sim.get("/devices/air/screen") == ["width": 420, "height": 912])
        #expect(sim.get("/devices/e/alwaysOnDisplay") == false)
        #expect(sim.get("/devices/b/alwaysOnDisplay") == false)
        #expect(sim.get("/devices/p/alwaysOnDisplay") == true)
        #expect(sim.get("/devices/air/alwaysOnDisplay") == true)
        #expect(sim.get("/devices/p/iosVersion") == .string(IOSVersion.newest.description), "the newest by default")
        let ids = DeviceModel.catalog.map(\.id)
        #expect(ids == ids.sorted())
        for id in ["iphone-16e", "iphone-17", "iphone-17-pro", "iphone-17-pro-max", "iphone-air"] {
            #expect(ids.contains(id))
        }
    }

    @Test("iosVersion: parsed, kept, never older than the model's first iOS, never newer than the catalog knows")
    func versions() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d": "iphone-15-pro"])
        try sim.run(["type": "device.upsert", "id": "d", "iosVersion": "17.2.1"])
        #expect(sim.get("/devices/d/iosVersion") == "17.2")
        for bad: JSONValue in ["17.x", "", "17..2", "1.2.3.4", "99", 17, "٢٦"] {
            let before = sim.engine.documentValue
            let error = #expect(throws: APIError.self) {
                try sim.run(["type": "device.upsert", "id": "d", "iosVersion": bad])
            }
            #expect(error?.field == "/commands/0/iosVersion", "\(bad)")
            #expect(sim.engine.documentValue == before, "a refusal changes nothing")
        }
        let tooOld = #expect(throws: APIError.self) {
            try sim.run(["type": "device.upsert", "id": "d", "iosVersion": "16.4"])
        }
        #expect(tooOld?.field == "/commands/0/iosVersion")
        #expect(tooOld?.message.contains("shipped with iOS 17.0") == true)
        let newModel = #expect(throws: APIError.self) {
            try sim.run(["type": "device.upsert", "id": "d", "model": "iphone-17"])
        }
        #expect(newModel?.field == "/commands/0/model", "an iPhone 17 cannot run the device's iOS 17.2")
        try sim.run(["type": "device.upsert", "id": "d", "model": "iphone-17", "iosVersion": "26.0"])
        #expect(sim.get("/devices/d/model") == "iphone-17")
    }

    @Test("StandBy needs iOS 17 and a tinted Home Screen iOS 18: older versions refuse them as unsupported")
    func gates() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["old": "iphone-14-pro"])
        try sim.run(["type": "device.upsert", "id": "old", "iosVersion": "16.4"])
        let standby = #expect(throws: APIError.self) {
            try sim.run(["type": "device.upsert", "id": "old", "standby": true])
        }
        #expect(standby?.code == .conflict)
        #expect(standby?.field == "/commands/0/standby")
        #expect(standby?.message.hasPrefix("unsupported:") == true)
        try sim.run(["type": "device.upsert", "id": "old", "iosVersion": "17.0", "standby": true])
        let tint = #expect(throws: APIError.self) {
            try sim.run(["type": "device.upsert", "id": "old", "tint": "#FF0000"])
        }
        #expect(tint?.field == "/commands/0/tint")
        try sim.run(["type": "device.upsert", "id": "old", "iosVersion": "18.0", "tint": "#FF0000"])
        let downgrade = #expect(throws: APIError.self) {
            try sim.run(["type": "device.upsert", "id": "old", "iosVersion": "17.4"])
        }
        #expect(downgrade?.field == "/commands/0/iosVersion", "a tinted device cannot go back below 18")
        #expect(sim.get("/devices/old/iosVersion") == "18.0")
    }

    @Test("a device's iOS version survives a snapshot; a snapshot without one restores the newest")
    func snapshot() throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d": "iphone-15"])
        try sim.run(["type": "device.upsert", "id": "d", "iosVersion": "17.1"])
        let restored = try Engine(snapshot: sim.engine.snapshot(), renderer: TestRenderer())
        #expect(restored.value(at: "/devices/d/iosVersion") == "17.1")
    }
}
