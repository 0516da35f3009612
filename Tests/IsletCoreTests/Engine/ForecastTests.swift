import IsletCore
import Testing

/// The what-if forecast of a stack (`GET /v1/stacks/{id}/forecast`).
@Suite struct ForecastTests {
    /// A stack of four widgets with a day of hourly entries (some scored 0, some with short
    /// relevance windows) and a week of habit history.
    static func world() throws -> Simulation {
        var sim = try Simulation.widgets()
        let kinds = ["weather", "music", "traffic", "news"]
        for (index, kind) in kinds.enumerated() {
            let id = kind
            try sim.addWidget(id, kind: kind)
            let entries: [JSONValue] = (0..<20).map { hour in
                let score = Double((hour * 7 + index * 13) % 9) * 10
                return sim.entry(Double(hour) * 3600, score: score, duration: hour % 3 == 0 ? 1800 : 0)
            }
            try sim.setTimeline(id, entries)
            for day in 1...7 { try sim.use(id, secondsAgo: Double(day) * 86_400 - Double(index * 5 + 1) * 3600) }
        }
        try sim.stack("s", kinds)
        return sim
    }

    @Test("the forecast equals what happens when the clock then advances through the same 24 h with the same weights")
    func forecastMatchesReality() throws {
        var sim = try Self.world()
        try sim.advance(seconds: 1234)
        let request = ForecastRequest(
            hours: 24, stepSeconds: 900, weights: [.habit: 2, .timeline: 0.5, .rotationPenalty: -0.5], hysteresis: 0.1,
            minDwellSeconds: 1800)
        let revision = sim.engine.rev
        let document = sim.engine.documentBytes
        let snapshot = sim.engine.snapshotBytes
        let forecast = try sim.engine.forecast(stack: "s", request)
        #expect(sim.engine.rev == revision, "the live revision is untouched")
        #expect(sim.engine.documentBytes == document, "the live document is untouched")
        #expect(sim.engine.snapshotBytes == snapshot, "the live state is untouched")
        #expect(forecast.points.count == 96)
        #expect(forecast.rotations.count >= 3, "the chart has something to show: \(forecast.rotations.count)")
        #expect(Set(forecast.points.compactMap(\.top)).count >= 3)
        try sim.run([
            "type": "relevance.setWeights", "stack": "s",
            "weights": ["habit": 2, "timeline": 0.5, "rotationPenalty": -0.5],
            "hysteresis": 0.1, "minDwellSeconds": 1800,
        ])
        let rotationsBefore = sim.get("/stacks/s/rotations")?.arrayValue?.count ?? 0
        for point in forecast.points {
            try sim.advance(to: point.at)
            #expect(sim.top("s") == point.top, "top at \(point.at)")
            let live = sim.get("/stacks/s/ranking")?.arrayValue ?? []
            let predicted: [JSONValue] = point.ranking.map { row in
                [
                    "widget": .string(row.widget), "score": .number(row.score), "eligible": .bool(row.eligible),
                    "contributions": forecastJSON(row.contributions),
                ]
            }
            #expect(live.map { $0.removingMember("features") } == predicted, "ranking at \(point.at)")
        }
        try sim.advance(to: forecast.from.adding(seconds: 86_400))
        let rotations = Array((sim.get("/stacks/s/rotations")?.arrayValue ?? []).dropFirst(rotationsBefore))
        let inHorizon = rotations.filter {
            ($0["at"]?.stringValue ?? "") < forecast.from.adding(seconds: 86_400).rfc3339
        }
        #expect(
            inHorizon
                == forecast.rotations.filter {
                    ($0["at"]?.stringValue ?? "") < forecast.from.adding(seconds: 86_400).rfc3339
                })
        #expect(
            forecast.json["reloadsDue"]?.arrayValue?.isEmpty == false, "timelines ending inside the day are reported")
    }

    @Test("without trial weights the forecast runs the stack's own settings; its JSON is the chart's data")
    func forecastShape() throws {
        let sim = try Self.world()
        let forecast = try sim.engine.forecast(stack: "s", ForecastRequest(hours: 2, stepSeconds: 1800))
        let json = forecast.json
        #expect(json["stack"] == "s")
        #expect(json["from"] == "2026-11-22T08:00:00Z")
        #expect(json["to"] == "2026-11-22T10:00:00Z")
        #expect(json["trial"] == false)
        #expect(json["weights"] == sim.get("/stacks/s/relevance/weights"))
        #expect(json["points"]?.arrayValue?.count == 4)
        #expect(json["points"]?.arrayValue?.first?["top"] == sim.get("/stacks/s/top"))
        #expect(json["points"]?.arrayValue?.first?["ranking"]?.arrayValue?.count == 4)
        let missing = #expect(throws: APIError.self) { try sim.engine.forecast(stack: "nope") }
        #expect(missing?.code == .notFound)
    }

    @Test(
        "forecast parameters from the query or a body; bad ones name the parameter",
        arguments: [
            ("hours=0", "/hours"), ("step=5s", "/step"), ("step=1x", "/step"), ("weights.luck=1", "/weights.luck"),
            ("hours=200", "/hours"), ("habit=1000", "/weights/habit"), ("habit=abc", "/weights/habit"),
            ("weights.habit=abc", "/weights/habit"),
        ])
    func parameters(query: String, field: String) throws {
        let pairs = query.split(separator: "&").map { part -> (name: String, value: String) in
            let halves = part.split(separator: "=", maxSplits: 1)
            return (String(halves[0]), String(halves[1]))
        }
        let error = #expect(throws: APIError.self) { try ForecastRequest(query: pairs) }
        #expect(error?.field?.description == field)
    }

    @Test("durations and trial weights parse from the query, and a body overrides them")
    func parsing() throws {
        let request = try ForecastRequest(query: [
            ("hours", "12"), ("step", "15m"), ("weights.habit", "2"), ("timeline", "0.5"), ("hysteresis", "0.2"),
            ("minDwellSeconds", "1h"),
        ])
        #expect(request.hours == 12)
        #expect(request.stepSeconds == 900)
        #expect(request.weights == [.habit: 2, .timeline: 0.5])
        #expect(request.hysteresis == 0.2)
        #expect(request.minDwellSeconds == 3600)
        let body = try ForecastRequest(body: ["step": "1h", "weights": ["freshness": 0]], over: request)
        #expect(body.stepSeconds == 3600)
        #expect(body.weights == [.habit: 2, .timeline: 0.5, .freshness: 0])
        #expect(try ForecastRequest(query: []).hours == 24)
    }
}

/// A feature vector as the document writes it.
private func forecastJSON(_ vector: FeatureVector) -> JSONValue {
    [
        "freshness": .number(vector.freshness), "habit": .number(vector.habit),
        "rotationPenalty": .number(vector.rotationPenalty), "timeline": .number(vector.timeline),
    ]
}
