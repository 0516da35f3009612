import IsletCore
import Testing

/// A test driver: an engine on a paused virtual clock starting at 2026-11-22T08:00:00Z, with
/// helpers that build the common commands. Time moves only by `advance`, never by sleeping.
struct Simulation {
    static let start = try! Instant(rfc3339: "2026-11-22T08:00:00Z")

    var engine: Engine
    /// The wall instant passed to the engine; it stays put (the virtual clock is paused).
    var wall = Simulation.start
    /// Every revision so far, in order.
    var revisions: [Revision] = []
    let initialDocument: JSONValue

    init(
        configuration: SimulatorConfiguration = SimulatorConfiguration(),
        renderer: any PresentationRenderer = TestRenderer()
    ) {
        self.engine = Engine(
            configuration: configuration, renderer: renderer, at: Simulation.start,
            clock: .virtual(now: Simulation.start, rate: 0, atWall: Simulation.start))
        self.initialDocument = self.engine.documentValue
    }

    /// Applies one batch; records and returns its revision.
    @discardableResult
    mutating func run(_ commands: JSONValue...) throws(APIError) -> Revision {
        try self.run(batch: commands)
    }

    @discardableResult
    mutating func run(batch commands: [JSONValue]) throws(APIError) -> Revision {
        let revision = try self.engine.apply(commands, at: self.wall)
        self.revisions.append(revision)
        return revision
    }

    /// `clock.advance` by `seconds`.
    @discardableResult
    mutating func advance(seconds: Double) throws(APIError) -> Revision {
        try self.run(["type": "clock.advance", "seconds": .number(seconds)])
    }

    /// The document value at `pointer`.
    func get(_ pointer: String) -> JSONValue? {
        self.engine.value(at: try! JSONPointer(parsing: pointer))
    }

    func state(of activity: String) -> String? {
        self.get("/activities/\(activity)/activityState")?.stringValue
    }

    /// The current simulated instant plus `seconds`, as RFC 3339 text.
    func date(after seconds: Double) -> JSONValue {
        .string(self.engine.now.adding(seconds: seconds).rfc3339)
    }

    /// Creates a device (default iPhone 15 Pro) and an app in the foreground.
    mutating func setUp(devices: [String: String] = ["d1": "iphone-15-pro"], apps: [String] = ["coffee"])
        throws(APIError)
    {
        var batch: [JSONValue] = devices.keys.sorted().map { id in
            ["type": "device.upsert", "id": .string(id), "model": .string(devices[id]!)]
        }
        batch += apps.map { ["type": "app.upsert", "id": .string($0), "name": .string($0), "foreground": true] }
        try self.run(batch: batch)
    }

    /// `activity.request` with a simple state; returns the result object.
    @discardableResult
    mutating func request(
        _ id: String, app: String = "coffee", score: Double = 0, state: JSONValue = ["status": "received"],
        extra: [String: JSONValue] = [:]
    ) throws(APIError) -> JSONValue {
        var command: [String: JSONValue] = [
            "type": "activity.request", "id": .string(id), "app": .string(app),
            "attributesType": "CoffeeDeliveryAttributes",
            "attributes": ["coffeeName": "Flat white"],
            "content": ["state": state, "relevanceScore": .number(score)],
        ]
        for (key, value) in extra { command[key] = value }
        let revision = try self.run(.object(JSONObject(command.map { ($0.key, $0.value) })))
        return revision.results[0]
    }

    /// Checks that applying every recorded revision's patch to the initial document gives the
    /// current document.
    func expectPatchesReplay(sourceLocation: SourceLocation = #_sourceLocation) throws {
        var document = self.initialDocument
        for revision in self.revisions { document = try JSONPatch.apply(revision.ops, to: document) }
        #expect(document == self.engine.documentValue, sourceLocation: sourceLocation)
    }
}
