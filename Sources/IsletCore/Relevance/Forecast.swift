internal import HashTreeCollections

/// What-if for operators: which widget a stack would show over the next hours, and why.
///
/// A forecast runs the engine's own logic on a copy of the engine (persistent maps make the
/// copy cheap), holding only the deadlines of the stack and its widgets, optionally with trial
/// relevance settings applied to the copy as `relevance.setWeights` would apply them. Because it
/// advances the real logic, advancing the live engine through the same hours with the same
/// settings shows the same tops and rankings. The live engine, its revision and its document
/// are untouched.
///
/// No timeline provider answers during a forecast (WK-6): a reload that falls due stays
/// pending, so a widget keeps its last entry, eligible for as long as that entry's relevance
/// window lasts. `reloadsDue` lists where this assumption starts to matter.
public struct ForecastRequest: Sendable, Hashable {
    public var hours: Double
    public var stepSeconds: Double
    /// Trial weights; features not named keep the stack's effective weight.
    public var weights: [RankingFeature: Double]
    public var hysteresis: Double?
    public var minDwellSeconds: Double?

    public static let maxHours = 168.0
    public static let minStepSeconds = 60.0
    public static let maxPoints = 10_080

    public init(
        hours: Double = 24, stepSeconds: Double = 900, weights: [RankingFeature: Double] = [:],
        hysteresis: Double? = nil, minDwellSeconds: Double? = nil
    ) {
        self.hours = hours
        self.stepSeconds = stepSeconds
        self.weights = weights
        self.hysteresis = hysteresis
        self.minDwellSeconds = minDwellSeconds
    }

    /// Whether any trial setting is given.
    public var isTrial: Bool { !self.weights.isEmpty || self.hysteresis != nil || self.minDwellSeconds != nil }

    /// Reads the query of `GET /v1/stacks/{id}/forecast`: `hours`, `step` (seconds, or with a
    /// unit: `900`, `900s`, `15m`, `1h`), trial weights as `weights.<feature>=<number>` (or the
    /// bare feature name), `hysteresis`, `minDwellSeconds`. Values must already be percent-decoded.
    /// - Throws: `invalid_argument` with the parameter's name as the field (`/step`).
    public init(query: [(name: String, value: String)]) throws(APIError) {
        self.init()
        for (name, value) in query {
            let field = JSONPointer(tokens: [name])
            switch name {
            case "hours": self.hours = try Self.number(value, field)
            case "step": self.stepSeconds = try Self.duration(value, field)
            case "hysteresis": self.hysteresis = try Self.number(value, field)
            case "minDwellSeconds": self.minDwellSeconds = try Self.duration(value, field)
            default:
                let featureName = name.hasPrefix("weights.") ? String(name.dropFirst("weights.".count)) : name
                guard let feature = RankingFeature(rawValue: featureName) else {
                    throw APIError(.invalidArgument, "unknown forecast parameter \"\(name)\"", field: field)
                }
                // Either spelling names the weight as the body does (`/weights/habit`).
                self.weights[feature] = try Self.number(value, JSONPointer(tokens: ["weights", featureName]))
            }
        }
        try self.validate()
    }

    /// Reads a JSON body `{"hours", "step", "weights": {…}, "hysteresis", "minDwellSeconds"}`
    /// over `base` (the query's values); `step` may be a number of seconds or a string as above.
    public init(body: JSONValue, over base: ForecastRequest = ForecastRequest()) throws(APIError) {
        self = base
        let reader = try FieldReader(body)
        try reader.rejectUnknown(["hours", "step", "weights", "hysteresis", "minDwellSeconds"])
        if let hours = try reader.number("hours") { self.hours = hours }
        switch reader.value("step") {
        case .number(let seconds)?: self.stepSeconds = seconds.double
        case .string(let text)?: self.stepSeconds = try Self.duration(text, "/step")
        case nil: break
        default: throw reader.fail("step", "expected seconds or a duration such as \"15m\"")
        }
        if let weights = try reader.nested("weights") {
            for member in weights.object.members {
                guard let feature = RankingFeature(rawValue: member.key), let weight = member.value.numberValue else {
                    throw weights.fail(member.key, "expected a feature name and a number")
                }
                self.weights[feature] = weight
            }
        }
        if let hysteresis = try reader.number("hysteresis") { self.hysteresis = hysteresis }
        if let dwell = try reader.number("minDwellSeconds") { self.minDwellSeconds = dwell }
        try self.validate()
    }

    private func validate() throws(APIError) {
        guard self.hours > 0, self.hours <= Self.maxHours else {
            throw APIError(.invalidArgument, "hours is more than 0 and at most \(Int(Self.maxHours))", field: "/hours")
        }
        guard self.stepSeconds >= Self.minStepSeconds, self.stepSeconds <= self.hours * 3600 else {
            throw APIError(.invalidArgument, "step is from 60 s to the whole horizon", field: "/step")
        }
        guard self.hours * 3600 / self.stepSeconds <= Double(Self.maxPoints) else {
            throw APIError(.invalidArgument, "at most \(Self.maxPoints) points; use a longer step", field: "/step")
        }
        for (feature, weight) in self.weights where !(-100...100).contains(weight) {
            throw APIError(
                .invalidArgument, "a weight is from -100 to 100",
                field: JSONPointer(tokens: ["weights", feature.rawValue]))
        }
        if let hysteresis = self.hysteresis, !(0...100).contains(hysteresis) {
            throw APIError(.invalidArgument, "hysteresis is from 0 to 100", field: "/hysteresis")
        }
        if let dwell = self.minDwellSeconds, !(0...604_800).contains(dwell) {
            throw APIError(.invalidArgument, "minDwellSeconds is from 0 to 604800", field: "/minDwellSeconds")
        }
    }

    private static func number(_ text: String, _ field: JSONPointer) throws(APIError) -> Double {
        guard let number = Double(text), number.isFinite else {
            throw APIError(.invalidArgument, "expected a number, got \"\(text)\"", field: field)
        }
        return number
    }

    /// Seconds from `900`, `900s`, `15m` or `1h`.
    static func duration(_ text: String, _ field: JSONPointer) throws(APIError) -> Double {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        var digits = Substring(text)
        var scale = 1.0
        if let last = digits.last, let unit = units[last] {
            scale = unit
            digits = digits.dropLast()
        }
        guard let number = Double(digits), number.isFinite, number >= 0 else {
            throw APIError(
                .invalidArgument, "expected a duration such as 900, 900s, 15m or 1h, got \"\(text)\"", field: field)
        }
        return number * scale
    }
}

/// A forecast's result: the data of a rotation chart.
public struct Forecast: Sendable, Hashable {
    /// One sample: the top and the ranking at `at`.
    public struct Point: Sendable, Hashable {
        public var at: Instant
        public var top: String?
        public var ranking: [Row]
    }

    /// One widget's score at a sample.
    public struct Row: Sendable, Hashable {
        public var widget: String
        public var score: Double
        public var eligible: Bool
        public var contributions: FeatureVector
    }

    public var stack: String
    public var from: Instant
    public var hours: Double
    public var stepSeconds: Double
    /// The stack's effective settings in the forecast (trial values applied).
    public var settings: RelevanceSettings
    public var trial: Bool
    public var points: [Point]
    /// The rotations the forecast saw, as `/stacks/<id>/rotations` records them.
    public var rotations: [JSONValue]
    /// Member widgets whose reload is pending by the end of the horizon (no provider answers in
    /// a forecast), with the instant it fell due.
    public var reloadsDue: [(widget: String, at: Instant)]

    public static func == (lhs: Forecast, rhs: Forecast) -> Bool { lhs.json == rhs.json }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.json) }

    /// `{stack, from, to, hours, stepSeconds, trial, weights, hysteresis, minDwellSeconds, points:
    /// [{at, top, ranking: [{widget, score, eligible, contributions}]}], rotations, reloadsDue}`.
    public var json: JSONValue {
        let points: [JSONValue] = self.points.map { point in
            let rows: [JSONValue] = point.ranking.map { row in
                [
                    "contributions": row.contributions.json, "eligible": .bool(row.eligible),
                    "score": .number(row.score), "widget": .string(row.widget),
                ]
            }
            return [
                "at": .string(point.at.rfc3339), "ranking": .array(rows),
                "top": point.top.map(JSONValue.string) ?? .null,
            ]
        }
        var object = JSONObject(self.settings.entries)
        object["stack"] = .string(self.stack)
        object["from"] = .string(self.from.rfc3339)
        object["to"] = .string(self.from.adding(seconds: self.hours * 3600).rfc3339)
        object["hours"] = .number(self.hours)
        object["stepSeconds"] = .number(self.stepSeconds)
        object["trial"] = .bool(self.trial)
        object["points"] = .array(points)
        object["rotations"] = .array(self.rotations)
        object["reloadsDue"] = .array(
            self.reloadsDue.map { ["at": .string($0.at.rfc3339), "widget": .string($0.widget)] })
        return .object(object)
    }
}

extension Engine {
    /// The forecast of one stack from `now`: a sample every `stepSeconds` for `hours`.
    /// - Throws: `not_found` for an unknown stack (no field: the id is in the route).
    /// - Complexity: O(n) to select the stack's deadlines, then O(k log k) for the k transitions
    ///   of the stack and its ≤ 10 widgets in the horizon. The live engine is not changed.
    public func forecast(stack id: String, _ request: ForecastRequest = ForecastRequest()) throws(APIError) -> Forecast
    {
        guard let stack = self.stacks[id] else { throw APIError(.notFound, "no stack \"\(id)\"") }
        var copy = self
        let members = Set(stack.members.map(\.widgetSlot))
        let stackSlot = self.stacks.slot(of: id)!
        copy.scheduler = self.scheduler.keeping { deadline in
            switch deadline.kind {
            case .widgetEntry(let widget), .widgetReload(let widget), .widgetChargeExpiry(let widget):
                return members.contains(widget)
            case .stackEvaluation(let other): return other == stackSlot
            default: return false
            }
        }
        if request.isTrial {
            let trial = RelevanceSetWeights(
                stack: id, weights: request.weights.mapValues { $0 }, hysteresis: request.hysteresis,
                minDwellSeconds: request.minDwellSeconds)
            _ = try copy.setWeights(trial)
            copy.evaluatePendingStacks()
        }
        let from = copy.now
        var seen = copy.stacks[id]?.rotationCount ?? 0
        var rotations: [JSONValue] = []
        var points: [Forecast.Point] = []
        let count = Int((request.hours * 3600 / request.stepSeconds).rounded(.down))
        for index in 0..<count {
            let at = from.adding(seconds: Double(index) * request.stepSeconds)
            copy.runDeadlines(upTo: at)
            guard let current = copy.stacks[id] else { break }
            let fresh = current.rotationCount - seen
            rotations += current.rotations.suffix(min(fresh, current.rotations.count)).map(\.json)
            seen = current.rotationCount
            let rows = current.ranking.map {
                Forecast.Row(
                    widget: current.widget($0), score: $0.score, eligible: $0.eligible, contributions: $0.contributions)
            }
            points.append(Forecast.Point(at: at, top: current.top, ranking: rows))
        }
        let end = from.adding(seconds: request.hours * 3600)
        let reloadsDue = stack.widgetIDs.compactMap { widget -> (widget: String, at: Instant)? in
            guard let since = copy.widgets[widget]?.reload.pendingSince, since < end else { return nil }
            return (widget, since)
        }
        return Forecast(
            stack: id, from: from, hours: request.hours, stepSeconds: request.stepSeconds,
            settings: self.relevance.applying(copy.stacks[id]?.overrides ?? stack.overrides), trial: request.isTrial,
            points: points, rotations: rotations, reloadsDue: reloadsDue)
    }
}
