/// An App Shortcut (SC-1, SC-2): phrases that include the app name, at most one parameter
/// whose values come from a finite list, and the intent it runs.
struct Shortcut: Sendable, Hashable {
    var id: String
    var title: String
    var phrases: [String]
    var parameter: ShortcutParameter?
    var intent: ShortcutIntent
    /// SC-2: the declared order (the order shortcuts were first upserted in).
    var order: Int
    /// SC-2: how often it ran; ordering follows use frequency once it is used.
    var runs = 0
    var lastRunAt: Instant?

    var json: JSONValue {
        let object: JSONObject = [
            "id": .string(self.id), "intent": self.intent.json, "lastRunAt": date(self.lastRunAt),
            "order": .number(Double(self.order)),
            "parameter": self.parameter?.json ?? .null,
            "phrases": .array(self.phrases.map(JSONValue.string)), "runs": .number(Double(self.runs)),
            "title": .string(self.title),
        ]
        return .object(object)
    }

    /// SC-2: more runs first, then the declared order.
    static func precedes(_ lhs: Shortcut, _ rhs: Shortcut) -> Bool {
        if lhs.runs != rhs.runs { return lhs.runs > rhs.runs }
        return lhs.order < rhs.order
    }
}

/// SC-1: the one parameter of a shortcut, with its finite list of values.
struct ShortcutParameter: Sendable, Hashable {
    var name: String
    var values: [String]

    var json: JSONValue { ["name": .string(self.name), "values": .array(self.values.map(JSONValue.string))] }
}

/// What running a shortcut does.
struct ShortcutIntent: Sendable, Hashable {
    enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A `LiveActivityIntent`: starts a Live Activity, even with the app in the background (SC-2).
        case liveActivity
        /// Opens the app (`openAppWhenRun`): the app comes to the foreground.
        case openApp
        /// Runs in the background and changes nothing Islet shows.
        case action
    }

    var kind: Kind
    var attributesType: String?
    var attributes = JSONObject()
    var state = JSONObject()
    var relevanceScore: Double?

    var json: JSONValue {
        var object: JSONObject = ["type": .string(self.kind.rawValue)]
        if let type = self.attributesType {
            object["attributesType"] = .string(type)
            object["attributes"] = .object(self.attributes)
            var content: JSONObject = ["state": .object(self.state)]
            if let score = self.relevanceScore { content["relevanceScore"] = .number(score) }
            object["content"] = .object(content)
        }
        return .object(object)
    }
}
