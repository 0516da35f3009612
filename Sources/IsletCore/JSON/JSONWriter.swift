/// Encodes JSON values to compact UTF-8 bytes, deterministically.
///
/// The same value always gives the same bytes: object members come out sorted by key (their
/// stored order), numbers in ``JSONNumber``'s canonical form (integers in plain digits, never
/// with an exponent; -0 as 0). Patches and snapshots are compared and replayed byte for byte, so
/// there is exactly one encoding.
public struct JSONWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    public init(reservingCapacity capacity: Int = 256) {
        self.bytes = []
        self.bytes.reserveCapacity(capacity)
    }

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: self.writeRaw("null")
        case .bool(let flag): self.writeRaw(flag ? "true" : "false")
        case .number(let number): self.write(number: number)
        case .string(let text): self.write(string: text)
        case .array(let elements): self.write(array: elements)
        case .object(let object): self.write(object: object)
        }
    }

    public mutating func write(number: JSONNumber) {
        number.write(to: &self.bytes)
    }

    /// A JSON Pointer as a JSON string, without building its text first.
    public mutating func write(pointer: JSONPointer) {
        let start = self.bytes.count
        self.bytes.append(UInt8(ascii: "\""))
        for token in pointer.tokens {
            self.bytes.append(UInt8(ascii: "/"))
            // Copy the token's bytes in one go, unless one needs an escape: then start over.
            var token = token
            let plain = token.withUTF8 { buffer in
                for byte in buffer
                where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                    || byte == UInt8(ascii: "~") || byte == UInt8(ascii: "/")
                {
                    return false
                }
                self.bytes.append(contentsOf: buffer)
                return true
            }
            guard plain else {
                self.bytes.removeSubrange(start...)
                self.write(string: pointer.description)
                return
            }
        }
        self.bytes.append(UInt8(ascii: "\""))
    }

    public mutating func write(string: String) {
        self.bytes.append(UInt8(ascii: "\""))
        // Read the bytes in place; only a string without contiguous UTF-8 is copied.
        if string.utf8.withContiguousStorageIfAvailable({ self.writeEscaping($0) }) == nil {
            var text = string
            text.withUTF8 { self.writeEscaping($0) }
        }
        self.bytes.append(UInt8(ascii: "\""))
    }

    /// One pass over the UTF-8 bytes, copying the runs between characters that need an escape
    /// whole (most strings have none).
    private mutating func writeEscaping(_ buffer: UnsafeBufferPointer<UInt8>) {
        var start = 0
        for index in 0..<buffer.count {
            let byte = buffer[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            self.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<index]))
            self.writeEscaped(byte)
            start = index + 1
        }
        self.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
    }

    /// Two-character escapes are appended byte by byte: rendered HTML has a quote in every
    /// attribute, so this runs dozens of times per widget of a large patch.
    private mutating func writeEscaped(_ byte: UInt8) {
        let short: UInt8
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): short = byte
        case 0x0A: short = UInt8(ascii: "n")
        case 0x0D: short = UInt8(ascii: "r")
        case 0x09: short = UInt8(ascii: "t")
        case 0x08: short = UInt8(ascii: "b")
        case 0x0C: short = UInt8(ascii: "f")
        default:
            self.writeRaw("\\u00")
            self.bytes.append(hexDigit(byte >> 4))
            self.bytes.append(hexDigit(byte & 0x0F))
            return
        }
        self.bytes.append(UInt8(ascii: "\\"))
        self.bytes.append(short)
    }

    // Elements are read in place through buffer pointers: iterating, or even subscripting the
    // array, would copy each member and retain its strings and buffers, a large share of
    // encoding a big patch.

    public mutating func write(array: [JSONValue]) {
        self.bytes.append(UInt8(ascii: "["))
        array.withUnsafeBufferPointer { elements in
            for index in elements.indices {
                if index > 0 { self.bytes.append(UInt8(ascii: ",")) }
                self.write(elements[index])
            }
        }
        self.bytes.append(UInt8(ascii: "]"))
    }

    public mutating func write(object: JSONObject) {
        self.bytes.append(UInt8(ascii: "{"))
        object.members.withUnsafeBufferPointer { members in
            for index in members.indices {
                if index > 0 { self.bytes.append(UInt8(ascii: ",")) }
                self.write(string: members[index].key)
                self.bytes.append(UInt8(ascii: ":"))
                self.write(members[index].value)
            }
        }
        self.bytes.append(UInt8(ascii: "}"))
    }

    /// Appends bytes that are already valid JSON (for example a value encoded earlier).
    /// - Warning: the caller vouches that `json` is one complete JSON value.
    public mutating func writeEncoded(_ json: some Sequence<UInt8>) {
        self.bytes.append(contentsOf: json)
    }

    /// Appends a count as a JSON number (revision numbers, exact past 2^53).
    public mutating func write(integer value: UInt64) {
        writeDigits(value, to: &self.bytes)
    }

    /// Appends raw punctuation or a literal, for callers streaming a larger document.
    public mutating func writeRaw(_ text: StaticString) {
        text.withUTF8Buffer { self.bytes.append(contentsOf: $0) }
    }
}

extension JSONValue {
    /// The canonical compact encoding.
    public var encoded: [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return writer.bytes
    }

    /// The canonical compact encoding, as a string.
    public var encodedString: String {
        String(decoding: self.encoded, as: UTF8.self)
    }
}

extension JSONValue {
    /// The length of ``encoded``, counted without writing it.
    var encodedCount: Int {
        switch self {
        case .null: return 4
        case .bool(let flag): return flag ? 4 : 5
        case .number(let number): return number.encodedCount
        case .string(let text): return jsonCount(string: text)
        case .array(let elements):
            var count = 1 + max(1, elements.count)
            for index in elements.indices { count += elements[index].encodedCount }
            return count
        case .object(let object):
            let members = object.members
            var count = 1 + max(1, members.count)
            for index in members.indices {
                count += jsonCount(string: members[index].key) + 1 + members[index].value.encodedCount
            }
            return count
        }
    }
}

/// The length of ``JSONWriter/write(string:)``'s output.
private func jsonCount(string: String) -> Int {
    var count = 2
    for byte in string.utf8 {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09, 0x08, 0x0C: count += 2
        case 0..<0x20: count += 6
        default: count += 1
        }
    }
    return count
}

extension JSONValue: CustomStringConvertible {
    public var description: String { self.encodedString }
}

private func hexDigit(_ nibble: UInt8) -> UInt8 {
    nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
}
