import IsletCore
import Testing

/// Issue 18's caps: a world cannot grow without end through accepted commands.
@Suite("Engine limits")
struct EngineLimitsTests {
    static let start = Instant(secondsSinceEpoch: 1_795_334_400)

    private func engine() -> Engine {
        Engine(renderer: TestRenderer(), at: Self.start, clock: .virtual(now: Self.start, atWall: Self.start))
    }

    /// Applies `count` commands made by `command`, in batches of 500.
    private func fill(_ engine: inout Engine, _ count: Int, _ command: (Int) -> JSONValue) throws {
        for start in stride(from: 0, to: count, by: 500) {
            _ = try engine.apply((start..<min(count, start + 500)).map(command), at: Self.start)
        }
    }

    private func refusal(_ engine: inout Engine, _ command: JSONValue) -> APIError? {
        let rev = engine.rev
        do {
            _ = try engine.apply([command], at: Self.start)
            return nil
        } catch {
            #expect(engine.rev == rev)
            return error
        }
    }

    @Test("at most EngineLimits.apps apps and EngineLimits.devices devices; existing ones can still change")
    func appsAndDevices() throws {
        var engine = self.engine()
        try self.fill(&engine, EngineLimits.apps) { ["type": "app.upsert", "id": .string("app\($0)")] }
        let app = try #require(self.refusal(&engine, ["type": "app.upsert", "id": "one-more"]))
        #expect(app.code == .limitExceeded && app.field?.description == "/commands/0/id")
        _ = try engine.apply([["type": "app.upsert", "id": "app7", "name": "Renamed"]], at: Self.start)
        try self.fill(&engine, EngineLimits.devices) { ["type": "device.upsert", "id": .string("d\($0)")] }
        let device = try #require(self.refusal(&engine, ["type": "device.upsert", "id": "one-more"]))
        #expect(device.code == .limitExceeded && device.message.contains("\(EngineLimits.devices) devices"))
        _ = try engine.apply([["type": "device.upsert", "id": "d7", "locked": true]], at: Self.start)
    }

    @Test("at most EngineLimits.templatesPerApp templates per app; replacing one is not adding one")
    func templates() throws {
        var engine = self.engine()
        _ = try engine.apply([["type": "app.upsert", "id": "app"], ["type": "app.upsert", "id": "other"]], at: Self.start)
        try self.fill(&engine, EngineLimits.templatesPerApp) {
            ["type": "template.put", "app": "app", "target": .string("activity:T\($0)"), "slot": "minimal", "html": "x"]
        }
        let error = try #require(self.refusal(&engine, [
            "type": "template.put", "app": "app", "target": "activity:More", "slot": "minimal", "html": "x",
        ]))
        #expect(error.code == .limitExceeded && error.field?.description == "/commands/0/target")
        _ = try engine.apply([
            ["type": "template.put", "app": "app", "target": "activity:T3", "slot": "minimal", "html": "y"],
            ["type": "template.put", "app": "other", "target": "activity:T3", "slot": "minimal", "html": "y"],
        ], at: Self.start)
    }
}
