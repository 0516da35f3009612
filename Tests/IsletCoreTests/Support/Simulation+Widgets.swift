import IsletCore
import Testing

/// Widget, stack and shortcut helpers for rule tests.
extension Simulation {
    /// Creates a widget (its app must exist; `setUp` creates "coffee").
    mutating func addWidget(
        _ id: String, app: String = "coffee", kind: String = "weather", family: String = "systemSmall",
        device: String? = "d1", extra: [String: JSONValue] = [:]
    ) throws(APIError) {
        var command: [String: JSONValue] = [
            "type": "widget.upsert", "id": .string(id), "app": .string(app), "kind": .string(kind),
            "family": .string(family),
        ]
        if let device { command["device"] = .string(device) }
        for (key, value) in extra { command[key] = value }
        try self.run(.object(JSONObject(command.map { ($0.key, $0.value) })))
    }

    /// One entry `at` seconds from now, with `score` (nil: no relevance) and `duration`.
    func entry(_ at: Double, score: Double? = nil, duration: Double = 0, content: JSONValue? = nil) -> JSONValue {
        var object: JSONObject = [
            "date": self.date(after: at),
            "content": content ?? ["temperature": .number(at / 60), "condition": "Sunny"],
        ]
        if let score { object["relevance"] = ["score": .number(score), "duration": .number(duration)] }
        return .object(object)
    }

    /// `widget.setTimeline`.
    @discardableResult
    mutating func setTimeline(_ id: String, _ entries: [JSONValue], policy: JSONValue = "atEnd") throws(APIError)
        -> Revision
    {
        try self.run(["type": "widget.setTimeline", "id": .string(id), "entries": .array(entries), "policy": policy])
    }

    /// `stack.upsert` on d1.
    @discardableResult
    mutating func stack(
        _ id: String, _ widgets: [String], family: String = "systemSmall", device: String = "d1",
        extra: [String: JSONValue] = [:]
    ) throws(APIError) -> Revision {
        var command: [String: JSONValue] = [
            "type": "stack.upsert", "id": .string(id), "device": .string(device), "family": .string(family),
            "widgets": .array(widgets.map(JSONValue.string)),
        ]
        for (key, value) in extra { command[key] = value }
        return try self.run(.object(JSONObject(command.map { ($0.key, $0.value) })))
    }

    /// `widget.interact` (a view) `secondsAgo` before now.
    mutating func use(_ id: String, secondsAgo: Double, action: String = "view") throws(APIError) {
        try self.run([
            "type": "widget.interact", "id": .string(id), "action": .string(action),
            "at": self.date(after: -secondsAgo),
        ])
    }

    /// `clock.advance` to an absolute instant.
    @discardableResult
    mutating func advance(to instant: Instant) throws(APIError) -> Revision {
        try self.run(["type": "clock.advance", "to": .string(instant.rfc3339)])
    }

    func top(_ stack: String) -> String? { self.get("/stacks/\(stack)/top")?.stringValue }

    /// The ranking rows of a stack, by widget.
    func rankingRow(_ stack: String, _ widget: String) -> JSONValue? {
        self.get("/stacks/\(stack)/ranking")?.arrayValue?.first { $0["widget"]?.stringValue == widget }
    }

    /// A simulation with a device "d1", an app "coffee" (foreground) and an app "weather".
    static func widgets(configuration: SimulatorConfiguration = SimulatorConfiguration()) throws -> Simulation {
        var sim = Simulation(configuration: configuration)
        try sim.setUp(apps: ["coffee", "weather"])
        return sim
    }
}
