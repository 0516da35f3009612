/// Parses JSON text (RFC 8259) strictly, for input that comes from outside.
///
/// Strict means: invalid UTF-8, lone surrogate escapes, control characters in strings, leading
/// zeros, trailing commas, numbers beyond a Double's magnitude (`1e400`), nesting deeper than
/// `maxDepth` and (by default) repeated keys are all rejected with an `invalid_json` error that
/// says where. Numbers keep their exact value (``JSONNumber``).
public struct JSONParser: Sendable {
    /// What to do when an object names the same key twice.
    public enum DuplicateKeys: Sendable {
        /// Reject the document: the sender's intent is ambiguous.
        case reject
        /// Keep the last value, as JavaScript's `JSON.parse` does (for trusted fixtures).
        case keepLast
    }

    /// The deepest nesting of arrays and objects accepted.
    public var maxDepth: Int
    public var duplicateKeys: DuplicateKeys

    /// How deep input from outside may nest: request bodies, stream messages, APNs payloads.
    public static let inputDepth = 64
    /// How deep what Islet wrote from accepted input may nest: a log record's batch, a scenario
    /// line, a patch operation or a stream message wraps the input in fewer than 64 more levels,
    /// so everything acknowledged at ``inputDepth`` parses again (and replays) at this depth.
    public static let storedDepth = inputDepth + 64

    /// The parser for input from outside.
    public static let input = JSONParser(maxDepth: inputDepth)
    /// The parser for what Islet wrote itself: log records, scenario files, history, its own messages.
    public static let stored = JSONParser(maxDepth: storedDepth)

    public init(maxDepth: Int = JSONParser.inputDepth, duplicateKeys: DuplicateKeys = .reject) {
        self.maxDepth = maxDepth
        self.duplicateKeys = duplicateKeys
    }

    /// Parses one JSON text; only whitespace may surround the value.
    /// - Throws: `APIError` with code `invalid_json`.
    /// - Complexity: O(n) in the length of the text (plus sorting each object's keys).
    public func parse(_ bytes: some Collection<UInt8>) throws(APIError) -> JSONValue {
        let result: Result<JSONValue, APIError>? = bytes.withContiguousStorageIfAvailable { buffer in
            self.parse(buffer: buffer)
        }
        if let result { return try result.get() }
        return try Array(bytes).withUnsafeBufferPointer { self.parse(buffer: $0) }.get()
    }

    /// Parses one JSON text given as a string.
    public func parse(_ text: String) throws(APIError) -> JSONValue {
        var text = text
        return try text.withUTF8 { self.parse(buffer: $0) }.get()
    }

    private func parse(buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, APIError> {
        var reader = Reader(bytes: buffer, options: self)
        do throws(APIError) {
            reader.skipWhitespace()
            let value = try reader.readValue(depth: 0)
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw reader.failure("unexpected text after the value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }
}

/// The cursor over the bytes; lives only for one `parse` call.
private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let options: JSONParser
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, options: JSONParser) {
        self.bytes = bytes
        self.options = options
    }

    func failure(_ message: String) -> APIError {
        APIError(.invalidJSON, "malformed JSON at byte \(self.index): \(message)")
    }

    var current: UInt8? { self.index < self.bytes.count ? self.bytes[self.index] : nil }

    mutating func skipWhitespace() {
        while let byte = self.current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
            self.index += 1
        }
    }

    mutating func expect(_ literal: StaticString, value: JSONValue) throws(APIError) -> JSONValue {
        let count = literal.utf8CodeUnitCount
        guard self.bytes.count - self.index >= count else { throw self.failure("unexpected end of input") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where self.bytes[self.index + offset] != expected[offset] {
            throw self.failure("unexpected character")
        }
        self.index += count
        return value
    }

    mutating func readValue(depth: Int) throws(APIError) -> JSONValue {
        guard let byte = self.current else { throw self.failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try self.readObject(depth: depth + 1)
        case UInt8(ascii: "["): return try self.readArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try self.readString())
        case UInt8(ascii: "t"): return try self.expect("true", value: .bool(true))
        case UInt8(ascii: "f"): return try self.expect("false", value: .bool(false))
        case UInt8(ascii: "n"): return try self.expect("null", value: .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try self.readNumber())
        default: throw self.failure("unexpected character")
        }
    }

    mutating func enter(depth: Int) throws(APIError) {
        guard depth <= self.options.maxDepth else {
            throw self.failure("nesting deeper than \(self.options.maxDepth) levels")
        }
        self.index += 1
        self.skipWhitespace()
    }

    mutating func readArray(depth: Int) throws(APIError) -> JSONValue {
        try self.enter(depth: depth)
        var elements: [JSONValue] = []
        if self.current == UInt8(ascii: "]") {
            self.index += 1
            return .array(elements)
        }
        while true {
            elements.append(try self.readValue(depth: depth))
            self.skipWhitespace()
            switch self.current {
            case UInt8(ascii: ","): self.index += 1; self.skipWhitespace()
            case UInt8(ascii: "]"): self.index += 1; return .array(elements)
            case nil: throw self.failure("unexpected end of input in an array")
            default: throw self.failure("expected ',' or ']'")
            }
        }
    }

    mutating func readObject(depth: Int) throws(APIError) -> JSONValue {
        try self.enter(depth: depth)
        var members: [JSONObject.Member] = []
        if self.current == UInt8(ascii: "}") {
            self.index += 1
            return .object(JSONObject())
        }
        while true {
            guard self.current == UInt8(ascii: "\"") else { throw self.failure("expected a string key") }
            let key = try self.readString()
            self.skipWhitespace()
            guard self.current == UInt8(ascii: ":") else { throw self.failure("expected ':'") }
            self.index += 1
            self.skipWhitespace()
            members.append(JSONObject.Member(key: key, value: try self.readValue(depth: depth)))
            self.skipWhitespace()
            switch self.current {
            case UInt8(ascii: ","): self.index += 1; self.skipWhitespace()
            case UInt8(ascii: "}"): self.index += 1; return .object(try self.makeObject(members))
            case nil: throw self.failure("unexpected end of input in an object")
            default: throw self.failure("expected ',' or '}'")
            }
        }
    }

    func makeObject(_ members: [JSONObject.Member]) throws(APIError) -> JSONObject {
        var sorted = members
        let before = sorted.count
        sorted.sortKeepingLastOfEqualKeys()
        if sorted.count != before, self.options.duplicateKeys == .reject {
            // The first key seen twice, in O(n): an object of 20,000 keys must not cost 10^8 steps.
            var seen = Set<[UInt8]>()
            let repeated = members.first { !seen.insert(Array($0.key.utf8)).inserted }?.key ?? ""
            throw APIError(.invalidJSON, "malformed JSON: the key \"\(repeated)\" appears twice in one object")
        }
        return JSONObject(sortedUniqueMembers: sorted)
    }

    mutating func readNumber() throws(APIError) -> JSONNumber {
        let start = self.index
        if self.current == UInt8(ascii: "-") { self.index += 1 }
        guard let first = self.current, isDigit(first) else { throw self.failure("expected a digit") }
        self.index += 1
        if first == UInt8(ascii: "0"), let next = self.current, isDigit(next) {
            throw self.failure("leading zeros are not allowed")
        }
        self.skipDigits()
        var isInteger = true
        if self.current == UInt8(ascii: ".") {
            isInteger = false
            self.index += 1
            guard let digit = self.current, isDigit(digit) else { throw self.failure("expected a digit after '.'") }
            self.skipDigits()
        }
        if self.current == UInt8(ascii: "e") || self.current == UInt8(ascii: "E") {
            isInteger = false
            self.index += 1
            if self.current == UInt8(ascii: "+") || self.current == UInt8(ascii: "-") { self.index += 1 }
            guard let digit = self.current, isDigit(digit) else { throw self.failure("expected an exponent") }
            self.skipDigits()
        }
        let text = UnsafeBufferPointer(rebasing: self.bytes[start..<self.index])
        if isInteger, text.count <= 16, let small = smallInteger(text) { return JSONNumber(small) }
        guard let number = JSONNumber(literal: text) else {
            throw APIError(.invalidJSON, "malformed JSON at byte \(start): the number is out of range")
        }
        return number
    }

    mutating func skipDigits() {
        while let byte = self.current, isDigit(byte) { self.index += 1 }
    }

    mutating func readString() throws(APIError) -> String {
        self.index += 1
        let start = self.index
        var high: UInt8 = 0
        while let byte = self.current, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 {
            high |= byte
            self.index += 1
        }
        if self.current == UInt8(ascii: "\"") {
            let text = try self.validatedString(
                UnsafeBufferPointer(rebasing: self.bytes[start..<self.index]), at: start, ascii: high < 0x80)
            self.index += 1
            return text
        }
        var buffer = Array(self.bytes[start..<self.index])
        return try self.readEscapedString(into: &buffer, start: start)
    }

    mutating func readEscapedString(into buffer: inout [UInt8], start: Int) throws(APIError) -> String {
        while true {
            guard let byte = self.current else { throw self.failure("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                self.index += 1
                return try buffer.withUnsafeBufferPointer { bytes throws(APIError) in
                    try self.validatedString(bytes, at: start, ascii: false)
                }
            case UInt8(ascii: "\\"):
                self.index += 1
                try self.readEscape(into: &buffer)
            case 0..<0x20:
                throw self.failure("control character in a string")
            default:
                buffer.append(byte)
                self.index += 1
            }
        }
    }

    mutating func readEscape(into buffer: inout [UInt8]) throws(APIError) {
        guard let byte = self.current else { throw self.failure("unterminated escape") }
        self.index += 1
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(byte)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"): try self.readUnicodeEscape(into: &buffer)
        default: throw self.failure("invalid escape")
        }
    }

    mutating func readUnicodeEscape(into buffer: inout [UInt8]) throws(APIError) {
        var scalar = try self.readHex4()
        if (0xD800..<0xDC00).contains(scalar) {
            guard self.current == UInt8(ascii: "\\"), self.index + 1 < self.bytes.count,
                self.bytes[self.index + 1] == UInt8(ascii: "u")
            else { throw self.failure("lone high surrogate") }
            self.index += 2
            let low = try self.readHex4()
            guard (0xDC00..<0xE000).contains(low) else { throw self.failure("invalid low surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00..<0xE000).contains(scalar) {
            throw self.failure("lone low surrogate")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw self.failure("invalid code point") }
        buffer.append(contentsOf: UTF8.encode(unicode)!)
    }

    mutating func readHex4() throws(APIError) -> UInt32 {
        guard self.bytes.count - self.index >= 4 else { throw self.failure("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = self.bytes[self.index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw self.failure("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            self.index += 1
        }
        return value
    }

    /// - Parameter ascii: No byte is ≥ 0x80 (the scan that found the string's end says so).
    func validatedString(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, ascii: Bool) throws(APIError) -> String {
        // ASCII is valid UTF-8 as it is: most strings take this path, which skips the generic
        // validating initializer (its type metadata is looked up at run time, call by call).
        if ascii { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw APIError(.invalidJSON, "malformed JSON at byte \(start): a string is not valid UTF-8")
        }
        return text
    }
}

private func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
}

/// Integers of up to 15 digits convert exactly without going through `strtod`.
private func smallInteger(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
    var negative = false
    var value: Int64 = 0
    var digits = 0
    for byte in text {
        if byte == UInt8(ascii: "-") {
            negative = true
            continue
        }
        value = value * 10 + Int64(byte - UInt8(ascii: "0"))
        digits += 1
    }
    guard digits <= 15 else { return nil }
    return Double(negative ? -value : value)
}
