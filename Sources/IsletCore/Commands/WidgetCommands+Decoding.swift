/// Decoding and validating the widget, stack, relevance and shortcut commands.
extension FieldReader {
    /// A widget family of iPhone (WK-1); iPad, Mac and watch families are named in the error.
    func family(_ key: String) throws(APIError) -> WidgetFamily? {
        guard let text = try self.string(key, maxLength: 64) else { return nil }
        if let family = WidgetFamily(rawValue: text) { return family }
        switch text {
        case "systemExtraLarge", "systemExtraLargePortrait":
            throw self.fail(key, "WK-1: \(text) exists on iPad and Mac only, not on iPhone")
        case "accessoryCorner":
            throw self.fail(key, "WK-1: accessoryCorner exists on Apple Watch only")
        default:
            let names = WidgetFamily.allCases.map(\.rawValue).joined(separator: ", ")
            throw self.fail(key, "expected one of \(names), got \"\(text)\"")
        }
    }

    /// An object whose canonical encoding is at most `maxBytes`.
    func boundedObject(_ key: String, maxBytes: Int = 4096) throws(APIError) -> JSONObject? {
        guard let object = try self.object(key) else { return nil }
        let size = JSONValue.object(object).encoded.count
        guard size <= maxBytes else { throw self.fail(key, "encodes to \(size) bytes, over \(maxBytes)") }
        return object
    }

    /// An identifier, or `""` meaning "none".
    func identifierOrEmpty(_ key: String) throws(APIError) -> String? {
        if self.value(key) == .string("") { return "" }
        return try self.identifier(key)
    }

    /// A URL-like string: a scheme, no whitespace or control characters.
    func url(_ key: String) throws(APIError) -> String? {
        guard let text = try self.string(key, maxLength: 2048) else { return nil }
        if text.isEmpty { return text }
        let valid =
            text.contains(":")
            && text.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && $0 != "\"" && $0 != "<" }
        guard valid else { throw self.fail(key, "expected a URL such as \"myapp://item/42\"") }
        return text
    }

    /// A number within `range`.
    func number(_ key: String, in range: ClosedRange<Double>) throws(APIError) -> Double? {
        guard let number = try self.number(key) else { return nil }
        guard range.contains(number) else {
            throw self.fail(key, "expected a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// An array member, each element read by `read` with its own pointer.
    func array<T>(_ key: String, maxCount: Int, _ read: (JSONValue, JSONPointer) throws(APIError) -> T)
        throws(APIError) -> [T]?
    {
        guard let value = self.value(key) else { return nil }
        guard let elements = value.arrayValue else { throw self.fail(key, "expected an array, got \(value.typeName)") }
        guard elements.count <= maxCount else {
            throw APIError(.limitExceeded, "at most \(maxCount) elements", field: self.field(key).appending(maxCount))
        }
        var result: [T] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            result.append(try read(element, self.field(key).appending(index)))
        }
        return result
    }

    func strings(_ key: String, maxCount: Int, maxLength: Int = 256) throws(APIError) -> [String]? {
        try self.array(key, maxCount: maxCount) { value, field throws(APIError) in
            guard let text = value.stringValue, !text.isEmpty, text.utf8.count <= maxLength else {
                throw APIError(
                    .invalidArgument, "expected a non-empty string of at most \(maxLength) bytes", field: field)
            }
            return text
        }
    }
}

extension WidgetUpsert {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown([
            "type", "id", "app", "kind", "family", "device", "configuration", "placeholder", "url",
        ])
        self.id = try reader.required("id", reader.identifier)
        self.app = try reader.identifier("app")
        self.kind = try reader.identifier("kind")
        self.family = try reader.family("family")
        self.device = try reader.identifierOrEmpty("device")
        self.configuration = try reader.boundedObject("configuration")
        self.placeholder = try reader.boundedObject("placeholder")
        self.url = try reader.url("url")
    }
}

extension WidgetSetTimeline {
    /// A hard ceiling on entries per command; the configured limit (WK-7) is checked by the engine.
    static let entriesCeiling = 10_000

    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "id", "entries", "policy"])
        self.id = try reader.required("id", reader.identifier)
        self.entries = try reader.required("entries") { key throws(APIError) in
            try reader.array(key, maxCount: Self.entriesCeiling) { value, field throws(APIError) in
                try TimelineEntryInput(FieldReader(value, at: field))
            }
        }
        for index in self.entries.indices.dropFirst() where self.entries[index].date < self.entries[index - 1].date {
            throw APIError(
                .invalidArgument, "entries must be in date order (WK-2): this one is earlier than the one before",
                field: reader.field("entries").appending(index).appending("date"))
        }
        switch reader.value("policy") {
        case nil, .string("atEnd")?: self.policy = .atEnd
        case .string("never")?: self.policy = .never
        case .object?:
            let policy = try reader.required("policy", reader.nested)
            try policy.rejectUnknown(["after"])
            self.policy = .after(try policy.required("after", policy.instant))
        default:
            throw reader.fail("policy", "expected \"atEnd\", \"never\" or {\"after\": date}")
        }
    }
}

extension TimelineEntryInput {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["date", "content", "relevance", "links"])
        self.date = try reader.required("date", reader.instant)
        self.content = try reader.required("content", reader.object)
        self.duration = 0
        if let relevance = try reader.nested("relevance") {
            try relevance.rejectUnknown(["score", "duration"])
            let score = try relevance.required("score", relevance.number)
            guard score.isFinite else { throw relevance.fail("score", "expected a finite number") }
            self.score = score
            self.duration = try relevance.number("duration", in: 0...31_536_000) ?? 0
        }
        if let links = try reader.nested("links") {
            for member in links.object.members {
                guard isIdentifier(member.key) else { throw links.fail(member.key, "a link id is an identifier") }
                _ = try links.url(member.key)
            }
            self.links = links.object
        }
    }
}

extension WidgetReloadRequest {
    /// Reasons that charge the widget's budget (WK-4): the app asking, a WidgetKit push, the
    /// timeline's own policy.
    static let chargedReasons: Set<String> = ["app", "push", "policy"]
    /// Reasons that are free (WK-4, §4.2 of the reference).
    static let freeReasons: Set<String> = [
        "foreground", "intent", "locale", "standby", "system", "audio", "navigation", "location", "accessibility",
    ]

    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "id", "kind", "app", "reason", "at"])
        self.id = try reader.identifier("id")
        self.kind = try reader.identifier("kind")
        self.app = try reader.identifier("app")
        self.at = try reader.instant("at")
        guard (self.id == nil) != (self.kind == nil) else {
            throw reader.fail(self.id == nil ? "id" : "kind", "give exactly one of \"id\" and \"kind\"")
        }
        if self.id != nil, self.app != nil { throw reader.fail("app", "\"app\" goes with \"kind\" only") }
        let reason = try reader.string("reason", maxLength: 64) ?? "app"
        guard reason != "policy", Self.chargedReasons.contains(reason) || Self.freeReasons.contains(reason) else {
            let names = (Self.chargedReasons.subtracting(["policy"]).union(Self.freeReasons)).sorted()
            throw reader.fail("reason", "expected one of \(names.joined(separator: ", ")), got \"\(reason)\"")
        }
        self.reason = reason
    }
}

extension WidgetInteract {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "id", "action", "target", "at"])
        self.id = try reader.required("id", reader.identifier)
        self.action = try reader.choice("action", Action.self) ?? .tap
        self.target = try reader.identifier("target")
        self.at = try reader.instant("at")
        if self.action == .control, self.target == nil {
            throw reader.fail("target", "a control interaction names the button or toggle in \"target\"")
        }
    }
}

extension StackUpsert {
    /// SS-1: a stack holds at most 10 widgets.
    static let maxWidgets = 10

    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "id", "device", "family", "widgets", "smartRotate", "suggestions"])
        self.id = try reader.required("id", reader.identifier)
        self.device = try reader.identifier("device")
        self.family = try reader.family("family")
        if let family = self.family, family.isAccessory {
            throw reader.fail("family", "SS-1: stacks are not allowed on the Lock Screen; use a system family")
        }
        self.widgets = try reader.array("widgets", maxCount: 1000) { value, field throws(APIError) in
            guard let id = value.stringValue, isIdentifier(id) else {
                throw APIError(.invalidArgument, "expected a widget id", field: field)
            }
            return id
        }
        if let widgets = self.widgets {
            if widgets.count > Self.maxWidgets {
                throw APIError(
                    .limitExceeded, "SS-1: a stack holds at most \(Self.maxWidgets) widgets",
                    field: reader.field("widgets").appending(Self.maxWidgets))
            }
            for (index, id) in widgets.enumerated() where widgets[..<index].contains(id) {
                throw APIError(
                    .invalidArgument, "widget \"\(id)\" is listed twice",
                    field: reader.field("widgets").appending(index))
            }
        }
        self.smartRotate = try reader.bool("smartRotate")
        self.suggestions = try reader.bool("suggestions")
    }
}

extension RelevanceSetWeights {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "stack", "weights", "hysteresis", "minDwellSeconds", "reset"])
        self.stack = try reader.identifier("stack")
        guard case .object(let object)? = reader.object["weights"] ?? .object(JSONObject()) else {
            throw reader.fail("weights", "expected an object of feature names and numbers")
        }
        self.weights = [:]
        for member in object.members {
            let field = reader.field("weights").appending(member.key)
            guard let feature = RankingFeature(rawValue: member.key) else {
                let names = RankingFeature.allCases.map(\.rawValue).joined(separator: ", ")
                throw APIError(
                    .invalidArgument, "unknown feature \"\(member.key)\"; the features are \(names)", field: field)
            }
            switch member.value {
            case .null where self.stack != nil: self.weights[feature] = .some(nil)
            case .number(let weight) where (-100...100).contains(weight.double): self.weights[feature] = weight.double
            default:
                let message =
                    "expected a weight from -100 to 100" + (self.stack == nil ? "" : ", or null to drop the override")
                throw APIError(.invalidArgument, message, field: field)
            }
        }
        self.hysteresis = try reader.number("hysteresis", in: 0...100)
        self.minDwellSeconds = try reader.number("minDwellSeconds", in: 0...604_800)
        self.reset = try reader.bool("reset") ?? false
        if self.reset, self.stack == nil {
            throw reader.fail("reset", "\"reset\" drops a stack's overrides; name the stack")
        }
    }
}
