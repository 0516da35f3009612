/// The table that maps `/config` names to configuration fields, with their validation.
///
/// One table drives the document (`/config`), `config.set` and snapshots, so a field added to
/// ``SimulatorConfiguration`` and to this table appears everywhere at once.
extension SimulatorConfiguration {
    /// One named, typed field.
    struct Field: Sendable {
        let name: String
        let read: @Sendable (SimulatorConfiguration) -> JSONValue
        /// Validates `value` and stores it; returns a problem description on bad input.
        let write: @Sendable (inout SimulatorConfiguration, JSONValue) -> String?
    }

    /// Every field, sorted by name.
    static let fields: [Field] = [
        .count("activityPayloadMaxBytes", \.activityPayloadMaxBytes, minimum: 1),
        .seconds("activityMaxSeconds", \.activityMaxSeconds, minimum: 1),
        .seconds("alertExpandedSeconds", \.alertExpandedSeconds, minimum: 0),
        .seconds("budgetWindowSeconds", \.budgetWindowSeconds, minimum: 1),
        .seconds("defaultPresentationHeight", \.defaultPresentationHeight, minimum: 0),
        .count("deliveriesKept", \.deliveriesKept, minimum: 1),
        .seconds("dismissAfterEndSeconds", \.dismissAfterEndSeconds, minimum: 0),
        .seconds("dismissedRetentionSeconds", \.dismissedRetentionSeconds, minimum: 0),
        .count("frequentPushBudgetPerHour", \.frequentPushBudgetPerHour, minimum: 0),
        .seconds("habitHalfLifeSeconds", \.habitHalfLifeSeconds, minimum: 60),
        .seconds("lowPriorityDelaySeconds", \.lowPriorityDelaySeconds, minimum: 0),
        .count("maxActivitiesPerApp", \.maxActivitiesPerApp, minimum: 1),
        .count("maxActivitiesPerDevice", \.maxActivitiesPerDevice, minimum: 1),
        .seconds("maxAnimationSeconds", \.maxAnimationSeconds, minimum: 0),
        .choice("minimalPolicy", \.minimalPolicy),
        .seconds("minimalWidth", \.minimalWidth, minimum: 0),
        .seconds("pressExpandedSeconds", \.pressExpandedSeconds, minimum: 0),
        .count("pushBudgetPerHour", \.pushBudgetPerHour, minimum: 0),
        .count("pushToStartPerHour", \.pushToStartPerHour, minimum: 0),
        .text("relevanceZeroDuration", \.relevanceZeroDuration, allowed: ["untilNextEntry", "zero"]),
        .seconds("shortBandMaxHeight", \.shortBandMaxHeight, minimum: 0),
        .count("stackRotationsPerWidgetPerDay", \.stackRotationsPerWidgetPerDay, minimum: 0),
        .seconds("tallBandMinHeight", \.tallBandMinHeight, minimum: 0),
        .count("widgetMaxTimelineEntries", \.widgetMaxTimelineEntries, minimum: 1),
        .seconds("widgetMinReloadIntervalSeconds", \.widgetMinReloadIntervalSeconds, minimum: 0),
        .count("widgetReloadsPerDay", \.widgetReloadsPerDay, minimum: 0),
        .seconds("widgetSingleEntryReloadSeconds", \.widgetSingleEntryReloadSeconds, minimum: 0),
    ]

    static func field(named name: String) -> Field? {
        self.fields.first { $0.name == name }
    }

    /// The `/config` section: field name → value.
    var entries: [(String, JSONValue)] {
        Self.fields.map { ($0.name, $0.read(self)) }
    }

    /// The whole configuration as one JSON object.
    public var json: JSONValue {
        .object(JSONObject(self.entries))
    }

    /// Reads a configuration from a `/config`-shaped object; absent names keep their defaults.
    /// - Throws: `invalid_argument` with the offending name as the field.
    public init(json: JSONValue) throws(APIError) {
        self.init()
        guard case .object(let object) = json else { throw APIError(.invalidArgument, "expected an object") }
        for member in object.members {
            guard let field = Self.field(named: member.key) else {
                throw APIError(.invalidArgument, "unknown configuration name", field: JSONPointer(tokens: [member.key]))
            }
            if let problem = field.write(&self, member.value) {
                throw APIError(.invalidArgument, problem, field: JSONPointer(tokens: [member.key]))
            }
        }
    }
}

extension SimulatorConfiguration.Field {
    typealias Configuration = SimulatorConfiguration

    /// A whole number of things, at least `minimum`.
    static func count(_ name: String, _ path: any WritableKeyPath<Configuration, Int> & Sendable, minimum: Int) -> Self
    {
        Self(name: name, read: { .number(Double($0[keyPath: path])) }) { configuration, value in
            guard let number = value.numberValue, number == number.rounded(), number >= Double(minimum),
                number <= 1e9
            else { return "expected a whole number from \(minimum) to 1000000000, got \(value)" }
            configuration[keyPath: path] = Int(number)
            return nil
        }
    }

    /// A quantity (seconds, points) that may have a fraction, at least `minimum`.
    static func seconds(_ name: String, _ path: any WritableKeyPath<Configuration, Double> & Sendable, minimum: Double)
        -> Self
    {
        Self(name: name, read: { .number($0[keyPath: path]) }) { configuration, value in
            guard let number = value.numberValue, number >= minimum, number <= 1e10 else {
                return "expected a number from \(minimum) to 10000000000, got \(value)"
            }
            configuration[keyPath: path] = number
            return nil
        }
    }

    /// One of a fixed set of strings.
    static func text(_ name: String, _ path: any WritableKeyPath<Configuration, String> & Sendable, allowed: [String])
        -> Self
    {
        Self(name: name, read: { .string($0[keyPath: path]) }) { configuration, value in
            guard let text = value.stringValue, allowed.contains(text) else {
                return "expected one of \(allowed.joined(separator: ", ")), got \(value)"
            }
            configuration[keyPath: path] = text
            return nil
        }
    }

    static func choice(
        _ name: String, _ path: any WritableKeyPath<Configuration, Configuration.MinimalPolicy> & Sendable
    ) -> Self {
        Self(name: name, read: { .string($0[keyPath: path].rawValue) }) { configuration, value in
            guard let text = value.stringValue, let policy = Configuration.MinimalPolicy(rawValue: text) else {
                return "expected \"score\" or \"start\", got \(value)"
            }
            configuration[keyPath: path] = policy
            return nil
        }
    }
}
