import IsletCore
import Testing

/// An app's document entry is kept incrementally: its delivery log is not stored in it (reads
/// take it from the log, and a revision's operations follow from counts), and its channels are
/// patched one by one. Every revision's patch must still turn the previous document into the
/// next, however the app changed within the revision.
@Suite struct AppEntryTests {
    /// Runs each batch, checking that its patch replays onto the previous document.
    func replay(_ sim: inout Simulation, _ batches: [[JSONValue]]) throws {
        for batch in batches {
            let before = sim.engine.documentValue
            let revision = try sim.run(batch: batch)
            #expect(try JSONPatch.apply(revision.ops, to: before) == sim.engine.documentValue, "batch \(batch)")
        }
    }

    /// App `coffee` with two records in its log: a1's start and an update.
    func twoRecords() throws -> Simulation {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        try sim.run(self.update("a1", "preparing"))
        return sim
    }

    func restored(_ sim: Simulation) throws -> Engine {
        try Engine(snapshot: try JSONParser().parse(sim.engine.snapshotBytes), renderer: TestRenderer())
    }

    func update(_ id: String, _ status: String) -> JSONValue {
        ["type": "activity.update", "id": .string(id), "content": ["state": ["status": .string(status)]]]
    }

    @Test("a push that only logs a record adds it, and past deliveriesKept drops the oldest")
    func appendAndDrop() throws {
        var configuration = SimulatorConfiguration()
        configuration.deliveriesKept = 3
        var sim = Simulation(configuration: configuration)
        try sim.setUp()
        try sim.request("a1")
        let revision = try sim.run(self.update("a1", "preparing"))
        let logOps = revision.ops.filter { $0.path.isWithin("/apps/coffee/deliveries") }
        #expect(logOps.map(\.path) == ["/apps/coffee/deliveries/1"], "one record added, none dropped")
        try self.replay(&sim, [
            [self.update("a1", "x")],
            [self.update("a1", "y"), self.update("a1", "z")],
            (0..<7).map { self.update("a1", "s\($0)") },
        ])
        let log = try #require(sim.get("/apps/coffee/deliveries")?.arrayValue)
        #expect(log.count == 3)
        #expect(sim.get("/apps/coffee/deliveries/2/event") == "update")
    }

    @Test("an app deleted and made again in one batch shows only the new app's records")
    func deleteAndRecreate() throws {
        var sim = try self.twoRecords()
        #expect(sim.get("/apps/coffee/deliveries")?.arrayValue?.count == 2)
        try self.replay(&sim, [
            [
                self.update("a1", "more"),
                ["type": "app.delete", "id": "coffee"],
                ["type": "app.upsert", "id": "coffee", "name": "Coffee", "foreground": true],
            ]
        ])
        #expect(sim.get("/apps/coffee/deliveries") == [])
        let request: (String) -> JSONValue = { id in
            [
                "type": "activity.request", "id": .string(id), "app": "coffee", "attributesType": "T",
                "content": ["state": [:]],
            ]
        }
        try self.replay(&sim, [
            [request("a2")],
            [
                ["type": "app.delete", "id": "coffee"],
                ["type": "app.upsert", "id": "coffee", "name": "Coffee", "foreground": true],
                request("a3"),
            ],
        ])
        #expect(sim.get("/apps/coffee/deliveries")?.arrayValue?.count == 1)
        #expect(sim.get("/apps/coffee/deliveries/0/activity") == "a3")
        try self.replay(&sim, [[["type": "app.delete", "id": "coffee"]]])
        #expect(sim.get("/apps/coffee") == nil)
    }

    @Test("an app deleted and made again in one batch loses its channels")
    func deleteAndRecreateChannels() throws {
        var sim = Simulation()
        try sim.setUp()
        let channel = try #require(sim.run(["type": "channel.create", "app": "coffee"]).results[0]["id"]?.stringValue)
        #expect(sim.get("/apps/coffee/channels/\(channel)") != nil)
        try self.replay(&sim, [
            [
                ["type": "app.delete", "id": "coffee"],
                ["type": "app.upsert", "id": "coffee", "name": "Coffee", "foreground": true],
            ]
        ])
        #expect(sim.get("/apps/coffee/channels") == [:])
        let restored = try self.restored(sim)
        #expect(restored.documentBytes == sim.engine.documentBytes)
    }

    @Test("a snapshot keeps the log, and the restored engine reads it back")
    func snapshot() throws {
        let sim = try self.twoRecords()
        let restored = try self.restored(sim)
        #expect(restored.value(at: "/apps/coffee/deliveries") == sim.get("/apps/coffee/deliveries"))
        #expect(restored.documentBytes == sim.engine.documentBytes)
    }
}
