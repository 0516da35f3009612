/// Reads the members of one command object, naming the offending member in every error.
///
/// `path` is the location of the object inside the command (`""` for the command itself,
/// `/content` for its content…); the engine nests the whole thing under `/commands/<i>`.
struct FieldReader {
    let object: JSONObject
    let path: JSONPointer

    init(_ value: JSONValue, at path: JSONPointer = .root) throws(APIError) {
        guard case .object(let object) = value else {
            throw APIError(.invalidArgument, "expected an object, got \(value.typeName)", field: path)
        }
        self.object = object
        self.path = path
    }

    func field(_ key: String) -> JSONPointer { self.path.appending(key) }

    func fail(_ key: String, _ message: String) -> APIError {
        APIError(.invalidArgument, message, field: self.field(key))
    }

    /// Rejects members not in `allowed`, so that a misspelt field is an error, not a no-op.
    func rejectUnknown(_ allowed: [String]) throws(APIError) {
        for member in self.object.members where !allowed.contains(where: member.key.hasSameCodePoints) {
            throw self.fail(member.key, "unknown field \"\(member.key)\"")
        }
    }

    /// The member's value, treating JSON `null` as absent.
    func value(_ key: String) -> JSONValue? {
        guard let value = self.object[key], value != .null else { return nil }
        return value
    }

    func required<T>(_ key: String, _ read: (String) throws(APIError) -> T?) throws(APIError) -> T {
        guard let value = try read(key) else { throw self.fail(key, "\"\(key)\" is required") }
        return value
    }

    func string(_ key: String) throws(APIError) -> String? {
        try self.string(key, maxLength: 4096)
    }

    func string(_ key: String, maxLength: Int) throws(APIError) -> String? {
        guard let value = self.value(key) else { return nil }
        guard let text = value.stringValue else { throw self.fail(key, "expected a string, got \(value.typeName)") }
        guard text.utf8.count <= maxLength else { throw self.fail(key, "longer than \(maxLength) bytes") }
        return text
    }

    /// An identifier of API.md: 1–128 characters of `A-Z a-z 0-9 . _ : -`.
    func identifier(_ key: String) throws(APIError) -> String? {
        guard let text = try self.string(key) else { return nil }
        guard isIdentifier(text) else {
            throw self.fail(key, "an identifier is 1-128 characters of A-Z a-z 0-9 . _ : -, got \"\(text)\"")
        }
        return text
    }

    func bool(_ key: String) throws(APIError) -> Bool? {
        guard let value = self.value(key) else { return nil }
        guard let flag = value.boolValue else { throw self.fail(key, "expected a boolean, got \(value.typeName)") }
        return flag
    }

    func number(_ key: String) throws(APIError) -> Double? {
        guard let value = self.value(key) else { return nil }
        guard let number = value.numberValue else { throw self.fail(key, "expected a number, got \(value.typeName)") }
        return number
    }

    /// An RFC 3339 date.
    func instant(_ key: String) throws(APIError) -> Instant? {
        guard let text = try self.string(key, maxLength: 64) else {
            if let value = self.value(key), value.stringValue == nil {
                throw self.fail(key, "expected an RFC 3339 date string, got \(value.typeName)")
            }
            return nil
        }
        do {
            return try Instant(rfc3339: text)
        } catch {
            throw APIError(.invalidArgument, error.message, field: self.field(key))
        }
    }

    func object(_ key: String) throws(APIError) -> JSONObject? {
        guard let value = self.value(key) else { return nil }
        guard let object = value.objectValue else { throw self.fail(key, "expected an object, got \(value.typeName)") }
        return object
    }

    /// A nested reader for an object member.
    func nested(_ key: String) throws(APIError) -> FieldReader? {
        guard let value = self.value(key) else { return nil }
        return try FieldReader(value, at: self.field(key))
    }

    /// One of an enumeration's raw values.
    func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type) throws(APIError) -> T?
    where T.RawValue == String {
        guard let text = try self.string(key) else { return nil }
        guard let choice = T(rawValue: text) else {
            let names = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw self.fail(key, "expected one of \(names), got \"\(text)\"")
        }
        return choice
    }
}

/// API.md identifiers: 1–128 characters of `A-Z a-z 0-9 . _ : -`.
func isIdentifier(_ text: String) -> Bool {
    let utf8 = text.utf8
    guard (1...128).contains(utf8.count) else { return false }
    return utf8.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"),
            UInt8(ascii: "-"):
            true
        default: false
        }
    }
}
