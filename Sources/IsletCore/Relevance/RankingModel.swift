/// Islet's Smart Stack ranking model (SS-4). It is Islet's own, operator-tunable, and never
/// presented as Apple's algorithm: `score = Σ weightᵢ × featureᵢ` with every feature in [0, 1].
public enum RankingFeature: String, Sendable, Hashable, CaseIterable, Comparable {
    /// How recently the shown content changed: 1 in the hour of the change, then halving at each
    /// top of the hour, 0 from the fourth.
    case freshness
    /// How often the person used the widget at this hour of day, relative to the stack's most
    /// used widget at this hour (exponentially decayed uses, see `habitHalfLifeSeconds`).
    case habit
    /// How recently the widget lost the top of the stack: 1 in that hour, halving at each top of
    /// the hour, 0 from the fourth. Its weight is negative, so a widget does not bounce back.
    case rotationPenalty
    /// SS-3: the current entry's relevance score over the highest score its app and kind ever
    /// sent; 0 when the widget is not eligible (SS-2).
    case timeline

    public static func < (lhs: RankingFeature, rhs: RankingFeature) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// One number per feature, in the canonical (sorted) order of ``RankingFeature``.
public struct FeatureVector: Sendable, Hashable {
    public var freshness = 0.0
    public var habit = 0.0
    public var rotationPenalty = 0.0
    public var timeline = 0.0

    public init() {}

    public subscript(feature: RankingFeature) -> Double {
        get {
            switch feature {
            case .freshness: self.freshness
            case .habit: self.habit
            case .rotationPenalty: self.rotationPenalty
            case .timeline: self.timeline
            }
        }
        set {
            switch feature {
            case .freshness: self.freshness = newValue
            case .habit: self.habit = newValue
            case .rotationPenalty: self.rotationPenalty = newValue
            case .timeline: self.timeline = newValue
            }
        }
    }

    /// The sum in key order, the order in which a client adds the JSON members up: the score
    /// is this sum, so contributions add up to it exactly.
    var sum: Double { ((self.freshness + self.habit) + self.rotationPenalty) + self.timeline }

    /// Element-wise product.
    func times(_ other: FeatureVector) -> FeatureVector {
        var result = FeatureVector()
        result.freshness = self.freshness * other.freshness
        result.habit = self.habit * other.habit
        result.rotationPenalty = self.rotationPenalty * other.rotationPenalty
        result.timeline = self.timeline * other.timeline
        return result
    }

    /// Appends a `replace` of each member that differs in `new`, in key order (what the diff of
    /// their JSON gives).
    func diff(_ new: FeatureVector, _ path: JSONPointer, _ operations: inout some PatchSink) {
        guard self != new else { return }
        if self.freshness != new.freshness {
            operations.append(.replace(path.appending("freshness"), .number(new.freshness)))
        }
        if self.habit != new.habit { operations.append(.replace(path.appending("habit"), .number(new.habit))) }
        if self.rotationPenalty != new.rotationPenalty {
            operations.append(.replace(path.appending("rotationPenalty"), .number(new.rotationPenalty)))
        }
        if self.timeline != new.timeline { operations.append(.replace(path.appending("timeline"), .number(new.timeline))) }
    }

    var json: JSONValue {
        let object: JSONObject = [
            "freshness": .number(self.freshness), "habit": .number(self.habit),
            "rotationPenalty": .number(self.rotationPenalty), "timeline": .number(self.timeline),
        ]
        return .object(object)
    }
}

/// The relevance settings of `/relevance` or of one stack: weights, hysteresis and dwell.
public struct RelevanceSettings: Sendable, Hashable {
    public var weights: FeatureVector
    /// SS-5: a candidate must beat the top by more than this to take its place.
    public var hysteresis: Double
    /// SS-5: the top stays at least this long.
    public var minDwellSeconds: Double

    /// Islet's defaults: timeline and habit count fully, freshness a little, and a widget that
    /// just lost the top is held back.
    public static let defaults: RelevanceSettings = {
        var weights = FeatureVector()
        weights.timeline = 1
        weights.habit = 1
        weights.freshness = 0.1
        weights.rotationPenalty = -0.3
        return RelevanceSettings(weights: weights, hysteresis: 0.05, minDwellSeconds: 900)
    }()

    /// These settings with a stack's overrides applied.
    func applying(_ overrides: RelevanceOverrides) -> RelevanceSettings {
        var result = self
        for (feature, weight) in overrides.weights { result.weights[feature] = weight }
        if let hysteresis = overrides.hysteresis { result.hysteresis = hysteresis }
        if let dwell = overrides.minDwellSeconds { result.minDwellSeconds = dwell }
        return result
    }

    /// `/relevance`'s members, or a stack's effective settings.
    var entries: [(String, JSONValue)] {
        [
            ("hysteresis", .number(self.hysteresis)), ("minDwellSeconds", .number(self.minDwellSeconds)),
            ("weights", self.weights.json),
        ]
    }
}

/// What one stack sets differently from `/relevance` (`relevance.setWeights` with `stack`).
struct RelevanceOverrides: Sendable, Hashable {
    var weights: [RankingFeature: Double] = [:]
    var hysteresis: Double?
    var minDwellSeconds: Double?

    var isEmpty: Bool { self.weights.isEmpty && self.hysteresis == nil && self.minDwellSeconds == nil }

    var json: JSONValue {
        var object = JSONObject()
        if !self.weights.isEmpty {
            object["weights"] = .object(JSONObject(self.weights.map { ($0.key.rawValue, JSONValue.number($0.value)) }))
        }
        if let hysteresis = self.hysteresis { object["hysteresis"] = .number(hysteresis) }
        if let dwell = self.minDwellSeconds { object["minDwellSeconds"] = .number(dwell) }
        return .object(object)
    }
}

/// A step decay on the hour grid: 1 in the hour of `since`, halving at each top of the hour
/// after it, 0 from the fourth; piecewise constant, so rankings change only at tops of hours.
/// `current` is the start of the hour being evaluated, in `zone`.
func hourlyDecay(since: Instant?, hourStart current: Instant, zone: TimeZoneRule) -> Double {
    guard let since, since < current.adding(milliseconds: millisecondsPerHour) else { return 0 }
    let hours = current.milliseconds(since: zone.hourStart(since)) / millisecondsPerHour
    switch hours {
    case 0: return 1
    case 1: return 0.5
    case 2: return 0.25
    case 3: return 0.125
    default: return 0
    }
}
