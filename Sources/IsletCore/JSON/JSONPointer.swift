/// A JSON Pointer (RFC 6901): the address of a value inside a JSON document.
///
/// Islet uses pointers for subscriptions (`/devices/demo`), state reads, patch paths and the
/// `field` of an error.
public struct JSONPointer: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The unescaped reference tokens; empty for the whole document.
    public private(set) var tokens: [String]

    /// The whole document.
    public static let root = JSONPointer(tokens: [])

    public init(tokens: [String]) {
        self.tokens = tokens
    }

    /// Parses the string form (`""`, `"/a/b~1c"`).
    /// - Throws: `invalid_argument` when the text does not start with `/` or has a bad escape.
    public init(parsing text: String) throws(APIError) {
        if text.isEmpty {
            self.tokens = []
            return
        }
        guard text.hasPrefix("/") else {
            throw APIError(.invalidArgument, "a JSON Pointer must be empty or start with '/': \"\(text)\"")
        }
        var tokens: [String] = []
        for raw in text.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst() {
            guard let token = unescape(raw) else {
                throw APIError(.invalidArgument, "a JSON Pointer has '~' not followed by 0 or 1: \"\(text)\"")
            }
            tokens.append(token)
        }
        self.tokens = tokens
    }

    /// The string form, with `~` written `~0` and `/` written `~1`.
    public var description: String {
        var text = ""
        for token in self.tokens {
            text += "/"
            // Most tokens need no escape; checking the bytes first keeps patch encoding fast.
            if token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) {
                text += token.replacing("~", with: "~0").replacing("/", with: "~1")
            } else {
                text += token
            }
        }
        return text
    }

    public var isRoot: Bool { self.tokens.isEmpty }
    public var lastToken: String? { self.tokens.last }

    /// The array this pointer goes through, when it does: the pointer before its first token
    /// that is an array index (`/d/list` for `/d/list/0/x`). A stream subscription there is kept
    /// by snapshots: the element at an index changes when one before it comes or goes.
    public var arrayGoneThrough: JSONPointer? {
        guard let index = self.tokens.firstIndex(where: { arrayIndex($0) != nil }) else { return nil }
        return JSONPointer(tokens: Array(self.tokens[..<index]))
    }

    /// The pointer to the value that contains this one; `nil` for the root.
    public var parent: JSONPointer? {
        self.tokens.isEmpty ? nil : JSONPointer(tokens: Array(self.tokens.dropLast()))
    }

    /// This pointer extended by one token.
    public func appending(_ token: String) -> JSONPointer {
        // One allocation of the exact size (`tokens + [token]` makes two, and a spare capacity).
        var tokens: [String] = []
        tokens.reserveCapacity(self.tokens.count + 1)
        tokens.append(contentsOf: self.tokens)
        tokens.append(token)
        return JSONPointer(tokens: tokens)
    }

    /// This pointer extended by an array index.
    public func appending(_ index: Int) -> JSONPointer {
        self.appending(String(index))
    }

    /// This pointer extended by all tokens of `other`.
    public func appending(_ other: JSONPointer) -> JSONPointer {
        var tokens: [String] = []
        tokens.reserveCapacity(self.tokens.count + other.tokens.count)
        tokens.append(contentsOf: self.tokens)
        tokens.append(contentsOf: other.tokens)
        return JSONPointer(tokens: tokens)
    }

    /// True when `self` addresses `other` or something inside it.
    public func isWithin(_ other: JSONPointer) -> Bool {
        self.tokens.count >= other.tokens.count && self.tokens.starts(with: other.tokens)
    }

    /// Orders pointers token by token, parents before children.
    public static func < (lhs: JSONPointer, rhs: JSONPointer) -> Bool {
        lhs.tokens.lexicographicallyPrecedes(rhs.tokens)
    }
}

extension JSONPointer: ExpressibleByStringLiteral {
    /// A pointer literal; the literal must be valid (a programmer's error otherwise).
    public init(stringLiteral value: String) {
        do {
            try self.init(parsing: value)
        } catch {
            preconditionFailure("invalid JSON Pointer literal \"\(value)\": \(error)")
        }
    }
}

extension JSONValue {
    /// The value at `pointer`, or `nil` when nothing is there.
    ///
    /// Array indexes must be canonical decimal (`0`, `12`, never `01` or `1e0`); `-` addresses
    /// nothing when reading.
    public subscript(pointer: JSONPointer) -> JSONValue? {
        var current = self
        for token in pointer.tokens {
            switch current {
            case .object(let object):
                guard let next = object[token] else { return nil }
                current = next
            case .array(let elements):
                guard let index = arrayIndex(token), index < elements.count else { return nil }
                current = elements[index]
            default:
                return nil
            }
        }
        return current
    }
}

/// The array index a reference token names, or `nil` when the token is not a canonical index.
public func arrayIndex(_ token: String) -> Int? {
    let utf8 = token.utf8
    guard let first = utf8.first, utf8.count <= 15 else { return nil }
    if first == UInt8(ascii: "0") { return utf8.count == 1 ? 0 : nil }
    var value = 0
    for byte in utf8 {
        guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
        value = value * 10 + Int(byte - UInt8(ascii: "0"))
    }
    return value
}

private func unescape(_ raw: Substring.UTF8View.SubSequence) -> String? {
    guard raw.contains(UInt8(ascii: "~")) else { return String(decoding: raw, as: UTF8.self) }
    var bytes: [UInt8] = []
    var iterator = raw.makeIterator()
    while let byte = iterator.next() {
        guard byte == UInt8(ascii: "~") else {
            bytes.append(byte)
            continue
        }
        switch iterator.next() {
        case UInt8(ascii: "0"): bytes.append(UInt8(ascii: "~"))
        case UInt8(ascii: "1"): bytes.append(UInt8(ascii: "/"))
        default: return nil
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}
