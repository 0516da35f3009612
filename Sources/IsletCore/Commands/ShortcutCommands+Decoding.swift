/// Decoding `shortcut.upsert`, `shortcut.run` and `shortcut.delete`.
extension ShortcutUpsert {
    /// The phrase token that stands for the app's name (App Intents' `\(.applicationName)`).
    static let applicationNameToken = "${applicationName}"

    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "app", "id", "title", "phrases", "parameter", "intent"])
        self.app = try reader.required("app", reader.identifier)
        self.id = try reader.required("id", reader.identifier)
        self.title = try reader.string("title", maxLength: 256)
        self.phrases = try reader.strings("phrases", maxCount: 1000)
        if let phrases = self.phrases, phrases.isEmpty { throw reader.fail("phrases", "give at least one phrase") }
        if reader.object["parameter"] == .null {
            self.parameter = .some(nil)
        } else if let parameter = try reader.nested("parameter") {
            try parameter.rejectUnknown(["name", "values"])
            let name = try parameter.required("name", parameter.identifier)
            let values = try parameter.required("values") { key throws(APIError) in
                try parameter.strings(key, maxCount: 1000)
            }
            // SC-1: the values come from a finite list: non-empty, each once.
            guard !values.isEmpty else { throw parameter.fail("values", "SC-1: a parameter lists its values") }
            for (index, value) in values.enumerated() where values[..<index].contains(value) {
                throw APIError(
                    .invalidArgument, "\"\(value)\" is listed twice", field: parameter.field("values").appending(index))
            }
            self.parameter = Parameter(name: name, values: values)
        }
        self.intent = try reader.nested("intent").map { intent throws(APIError) in try Intent(intent) }
    }
}

extension ShortcutUpsert.Intent {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "attributesType", "attributes", "content"])
        let kind = try reader.required("type") { key throws(APIError) in
            try reader.choice(key, ShortcutIntent.Kind.self)
        }
        self.type = kind.rawValue
        self.attributesType = try reader.identifier("attributesType")
        self.attributes = try reader.object("attributes") ?? JSONObject()
        self.state = JSONObject()
        if let content = try reader.nested("content") {
            try content.rejectUnknown(["state", "relevanceScore"])
            self.state = try content.object("state") ?? JSONObject()
            self.relevanceScore = try content.number("relevanceScore")
        }
        if kind == .liveActivity, self.attributesType == nil {
            throw reader.fail("attributesType", "a Live Activity intent names the activity's attributesType")
        }
        if kind != .liveActivity, self.attributesType != nil {
            throw reader.fail("attributesType", "only a liveActivity intent starts an activity")
        }
        let size = payloadSize(attributes: self.attributes, state: self.state)
        if size > 4096 {
            throw reader.fail("attributes", "LA-2: attributes and state encode to \(size) bytes, over 4096")
        }
    }
}

extension ShortcutRun {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "app", "id", "parameterValue", "activityId", "device"])
        self.app = try reader.required("app", reader.identifier)
        self.id = try reader.required("id", reader.identifier)
        self.parameterValue = try reader.string("parameterValue", maxLength: 256)
        self.activityId = try reader.identifier("activityId")
        self.device = try reader.identifier("device")
    }
}

/// The phrase rules: SC-3's application-name token exactly once (SC-1's looser "the app name
/// or the token" for phrases replayed from a revision-1 log), and at most one parameter token,
/// which must be the shortcut's parameter.
/// - Returns: a problem description, or `nil` when the phrase is acceptable.
func phraseProblem(_ phrase: String, appName: String, parameter: String?, admission: Admission) -> String? {
    var tokens: [String] = []
    var rest = phrase[...]
    while let open = rest.firstRange(of: "${") {
        guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
            return "an unclosed ${…} token"
        }
        tokens.append(String(rest[open.upperBound..<close]))
        rest = rest[rest.index(after: close)...]
    }
    let nameTokens = tokens.count { $0 == "applicationName" }
    switch admission {
    case .new where nameTokens != 1:
        return nameTokens == 0
            ? "SC-3: every phrase contains ${applicationName} once (the app's name as plain text does not count)"
            : "SC-3: ${applicationName} appears \(nameTokens) times; a phrase contains it exactly once"
    case .logged where nameTokens == 0 && !phrase.lowercased().contains(appName.lowercased()):
        return "SC-1: every phrase includes the app name (\"\(appName)\" or ${applicationName})"
    default: break
    }
    let parameters = tokens.filter { $0 != "applicationName" }
    if parameters.count > 1 { return "SC-1: a phrase holds at most one parameter" }
    if let used = parameters.first, used != parameter {
        return parameter == nil
            ? "the phrase uses ${\(used)} but the shortcut has no parameter"
            : "the phrase uses ${\(used)}; the shortcut's parameter is ${\(parameter!)}"
    }
    return nil
}
