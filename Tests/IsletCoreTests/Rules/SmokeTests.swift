import IsletCore
import Testing

@Suite struct SmokeTests {
    @Test("a request shows in the island and on the Lock Screen, and patches replay")
    func basicFlow() throws {
        var sim = Simulation()
        try sim.setUp()
        let result = try sim.request("a1")
        #expect(result["id"] == "a1")
        #expect(sim.state(of: "a1") == "active")
        #expect(sim.get("/devices/d1/scene/island/mode") == "compact")
        #expect(sim.get("/devices/d1/scene/lockScreen/activities") == ["a1"])
        try sim.advance(seconds: 8 * 3600)
        #expect(sim.state(of: "a1") == "ended")
        #expect(sim.get("/devices/d1/scene/island/mode") == "none")
        try sim.expectPatchesReplay()
        print(String(decoding: sim.engine.documentBytes, as: UTF8.self))
    }
}
