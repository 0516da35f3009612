/// An error in the vocabulary of API.md: every rejected request, command or message is one.
///
/// Engine, server and stream all throw this one type; the server turns it into an HTTP reply or
/// a WebSocket `error` message in one place. Equality compares the code only, so callers can
/// match `error == .notFound` while the message carries the detail.
public struct APIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The machine-readable code, one of API.md's.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        public static let invalidJSON = Code("invalid_json")
        public static let invalidArgument = Code("invalid_argument")
        public static let notFound = Code("not_found")
        public static let conflict = Code("conflict")
        public static let limitExceeded = Code("limit_exceeded")
        public static let payloadTooLarge = Code("payload_too_large")
        public static let unauthorized = Code("unauthorized")
        public static let forbidden = Code("forbidden")
        public static let rateLimited = Code("rate_limited")
        public static let unsupportedMediaType = Code("unsupported_media_type")
        public static let methodNotAllowed = Code("method_not_allowed")
        public static let `internal` = Code("internal")
        /// Something the server depends on cannot be reached now (a cluster's Redis); retry later.
        public static let unavailable = Code("unavailable")

        public var description: String { self.rawValue }
    }

    public var code: Code
    /// Human text saying what was wrong and, where it helps, what to do.
    public var message: String
    /// Where in the request body the problem is, when it is in one place.
    public var field: JSONPointer?
    /// For a `limit_exceeded` from one of Islet's own hard bounds (not a platform rule), which
    /// one (`apps`, `devices`…): `/metrics` counts refusals by it. Not part of the wire form.
    public var limit: String?

    public init(_ code: Code, _ message: String, field: JSONPointer? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    /// The same error with its field placed under `prefix` (a command's error inside a batch
    /// becomes `/commands/3/...`).
    public func nested(under prefix: JSONPointer) -> APIError {
        var copy = self
        copy.field = prefix.appending(self.field ?? .root)
        return copy
    }

    /// The `{"code", "message", "field"}` object of API.md.
    public var json: JSONValue {
        var object: JSONObject = ["code": .string(self.code.rawValue), "message": .string(self.message)]
        if let field = self.field { object["field"] = .string(field.description) }
        return .object(object)
    }

    public var description: String {
        if let field = self.field { return "\(self.code) at \(field): \(self.message)" }
        return "\(self.code): \(self.message)"
    }

    public static func == (lhs: APIError, rhs: APIError) -> Bool { lhs.code == rhs.code }
}

extension APIError {
    public static let notFound = APIError(.notFound, "not found")
    public static let invalidJSON = APIError(.invalidJSON, "malformed JSON")
    public static let invalidArgument = APIError(.invalidArgument, "invalid argument")
}
