/// Typed access to snapshot members; every failure is an `invalid_argument` naming the member.
struct SnapshotReader {
    let object: JSONObject
    let path: JSONPointer

    init(_ value: JSONValue?, at path: JSONPointer) throws(APIError) {
        guard case .object(let object)? = value else {
            throw APIError(.invalidArgument, "snapshot: expected an object", field: path)
        }
        self.object = object
        self.path = path
    }

    func fail(_ key: String) -> APIError {
        APIError(.invalidArgument, "snapshot: missing or malformed member", field: self.path.appending(key))
    }

    func value(_ key: String) throws(APIError) -> JSONValue {
        guard let value = self.object[key] else { throw self.fail(key) }
        return value
    }

    func string(_ key: String) throws(APIError) -> String {
        guard let text = self.object[key]?.stringValue else { throw self.fail(key) }
        return text
    }

    func optionalString(_ key: String) throws(APIError) -> String? {
        guard let value = self.object[key], value != .null else { return nil }
        guard let text = value.stringValue else { throw self.fail(key) }
        return text
    }

    func bool(_ key: String) throws(APIError) -> Bool {
        guard let flag = self.object[key]?.boolValue else { throw self.fail(key) }
        return flag
    }

    func optionalBool(_ key: String) throws(APIError) -> Bool? {
        guard let value = self.object[key], value != .null else { return nil }
        guard let flag = value.boolValue else { throw self.fail(key) }
        return flag
    }

    func double(_ key: String) throws(APIError) -> Double {
        guard let number = self.object[key]?.numberValue else { throw self.fail(key) }
        return number
    }

    /// A whole number a Double holds exactly: below 2^53 (a fork's token salt uses all 53 bits).
    func count(_ key: String) throws(APIError) -> UInt64 {
        guard let number = self.object[key]?.numberValue, number >= 0, number == number.rounded(), number < 0x1p53
        else { throw self.fail(key) }
        return UInt64(number)
    }

    func optionalCount(_ key: String) throws(APIError) -> UInt64? {
        guard let value = self.object[key], value != .null else { return nil }
        return try self.count(key)
    }

    func instant(_ key: String) throws(APIError) -> Instant {
        guard let text = self.object[key]?.stringValue, let instant = Instant(recordedRFC3339: text) else {
            throw self.fail(key)
        }
        return instant
    }

    func optionalInstant(_ key: String) throws(APIError) -> Instant? {
        guard let value = self.object[key], value != .null else { return nil }
        return try self.instant(key)
    }

    func objectMember(_ key: String) throws(APIError) -> JSONObject {
        guard let object = self.object[key]?.objectValue else { throw self.fail(key) }
        return object
    }

    /// Reads each element of an array member with `read`.
    func array<T>(_ key: String, _ read: (SnapshotReader) throws(APIError) -> T) throws(APIError) -> [T] {
        guard let elements = self.object[key]?.arrayValue else { throw self.fail(key) }
        var result: [T] = []
        for (index, element) in elements.enumerated() {
            result.append(try read(try SnapshotReader(element, at: self.path.appending(key).appending(index))))
        }
        return result
    }

    func strings(_ key: String) throws(APIError) -> [String] {
        guard let elements = self.object[key]?.arrayValue else { throw self.fail(key) }
        var result: [String] = []
        for element in elements {
            guard let text = element.stringValue else { throw self.fail(key) }
            result.append(text)
        }
        return result
    }

    func nested(_ key: String) throws(APIError) -> SnapshotReader {
        try SnapshotReader(self.object[key], at: self.path.appending(key))
    }

    func optionalNested(_ key: String) throws(APIError) -> SnapshotReader? {
        guard let value = self.object[key], value != .null else { return nil }
        return try SnapshotReader(value, at: self.path.appending(key))
    }
}
