/// A JSON value: the one data type of Islet's state document, commands and wire messages.
///
/// Objects keep their members sorted by key, so the same value always encodes to the same bytes
/// (the engine's determinism rests on it) and equality ignores the order members arrived in.
/// Numbers are exact decimal values (``JSONNumber``): Doubles, as in JavaScript, unless a Double
/// would lose what the input said. Strings and keys compare by code point, as JSON Pointer and
/// JSON Patch do (RFC 6901 §4, RFC 6902 §4.6), not by Swift's canonical equivalence: "é" and
/// "e\u{301}" are different values, so a change from one to the other is a change on the wire.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    // Hashing stays synthesized: values equal by code point are canonically equivalent, so
    // their hashes agree.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.string(let a), .string(let b)): a.hasSameCodePoints(as: b)
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)): a == b
        default: false
        }
    }

    /// The number a computed Double stands for.
    /// - Precondition: `value` is finite.
    public static func number(_ value: Double) -> JSONValue { .number(JSONNumber(value)) }

    /// The member named `key` when this is an object; `nil` otherwise or when absent.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The nearest Double of a number, for the numbers the engine interprets.
    public var numberValue: Double? {
        if case .number(let value) = self { return value.double }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// This object without the member `key`; other values are returned unchanged.
    public func removingMember(_ key: String) -> JSONValue {
        guard case .object(var object) = self else { return self }
        object[key] = nil
        return .object(object)
    }

    /// The JSON type name, as used in error messages ("expected a string, got a number").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}

/// A JSON object whose members are kept sorted by key (`String.sortsBefore`: code point order for keys in NFC).
///
/// Sorted storage gives deterministic encoding without a sort per encode, cheap equality, and
/// ordered iteration for diffs.
/// - Complexity: lookup O(log n); insertion and removal O(n), which suits the small objects of
///   the state document (large collections live in the document's own maps).
public struct JSONObject: Sendable, Hashable {
    /// One member of an object.
    public struct Member: Sendable, Hashable {
        public var key: String
        public var value: JSONValue

        public static func == (lhs: Member, rhs: Member) -> Bool {
            lhs.key.hasSameCodePoints(as: rhs.key) && lhs.value == rhs.value
        }
    }

    /// The members, sorted by key, keys unique.
    public private(set) var members: [Member]

    /// Member by member, read in place: comparing the arrays would copy each member out and
    /// retain its key and value (equal objects that share storage answer at once).
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.withUnsafeBufferPointer { a in
            rhs.members.withUnsafeBufferPointer { b in
                guard a.count == b.count else { return false }
                guard a.baseAddress != b.baseAddress else { return true }
                for index in a.indices {
                    guard a[index].key.hasSameCodePoints(as: b[index].key), a[index].value == b[index].value else {
                        return false
                    }
                }
                return true
            }
        }
    }

    public init() { self.members = [] }

    /// Builds an object from key/value pairs; a repeated key keeps its last value.
    public init(_ pairs: some Sequence<(String, JSONValue)>) {
        var members = pairs.map { Member(key: $0.0, value: $0.1) }
        members.sortKeepingLastOfEqualKeys()
        self.members = members
    }

    /// Builds an object from members already sorted by key with unique keys.
    init(sortedUniqueMembers members: [Member]) {
        assert(members.isStrictlySortedByKey, "members out of order: \(members.map(\.key))")
        self.members = members
    }

    public var count: Int { self.members.count }
    public var isEmpty: Bool { self.members.isEmpty }
    public var keys: [String] { self.members.map(\.key) }

    public subscript(key: String) -> JSONValue? {
        get {
            let index = self.insertionIndex(of: key)
            guard index < self.members.count, self.members[index].key.hasSameCodePoints(as: key) else { return nil }
            return self.members[index].value
        }
        set {
            let index = self.insertionIndex(of: key)
            let present = index < self.members.count && self.members[index].key.hasSameCodePoints(as: key)
            switch (present, newValue) {
            case (true, let value?): self.members[index].value = value
            case (true, nil): self.members.remove(at: index)
            case (false, let value?): self.members.insert(Member(key: key, value: value), at: index)
            case (false, nil): break
            }
        }
    }

    /// Removes the member named `key` and returns its value, or `nil` when there was none.
    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        let old = self[key]
        self[key] = nil
        return old
    }

    private func insertionIndex(of key: String) -> Int {
        var low = 0
        var high = self.members.count
        while low < high {
            let mid = (low + high) / 2
            if self.members[mid].key.sortsBefore(key) { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

extension [JSONObject.Member] {
    /// Sorts by key; of several members with one key, keeps the one that came last.
    mutating func sortKeepingLastOfEqualKeys() {
        if self.isStrictlySortedByKey { return }
        if self.count <= 32 {
            self.insertionSortKeepingLastOfEqualKeys()
            return
        }
        let indexed = self.enumerated().sorted { a, b in
            a.element.key.hasSameCodePoints(as: b.element.key)
                ? a.offset < b.offset : a.element.key.sortsBefore(b.element.key)
        }
        var result: [JSONObject.Member] = []
        result.reserveCapacity(indexed.count)
        for (_, member) in indexed {
            if let last = result.last, last.key.hasSameCodePoints(as: member.key) {
                result[result.count - 1] = member
            } else {
                result.append(member)
            }
        }
        self = result
    }

    fileprivate var isStrictlySortedByKey: Bool {
        var index = 1
        while index < self.count {
            if !self[index - 1].key.sortsBefore(self[index].key) { return false }
            index += 1
        }
        return true
    }

    /// A stable insertion sort (equal keys keep their order), then a pass keeping the last of
    /// each run of equal keys: no allocation for the small objects literals build.
    private mutating func insertionSortKeepingLastOfEqualKeys() {
        for index in 1..<self.count {
            let member = self[index]
            var slot = index
            while slot > 0, member.key.sortsBefore(self[slot - 1].key) {
                self[slot] = self[slot - 1]
                slot -= 1
            }
            self[slot] = member
        }
        var kept = 0
        for index in 0..<self.count {
            if index + 1 < self.count, self[index + 1].key.hasSameCodePoints(as: self[index].key) { continue }
            self[kept] = self[index]
            kept += 1
        }
        self.removeLast(self.count - kept)
    }
}

extension String {
    /// Whether the two strings are the same code points: JSON's equality of strings and names.
    /// Swift's `==` also equates canonically equivalent strings ("é" and "e\u{301}"), so the
    /// UTF-8 bytes are compared instead (the same code points are the same bytes), eight at a
    /// time; the same storage (`_isIdentical`) answers at once.
    func hasSameCodePoints(as other: String) -> Bool {
        if self._isIdentical(to: other) { return true }
        guard self.utf8.count == other.utf8.count else { return false }
        var (mine, theirs) = (self, other)
        return mine.withUTF8 { mine in theirs.withUTF8 { theirs in sameBytes(mine, theirs) } }
    }

    /// Whether this key comes first in an object: in Swift's order of strings (code point order
    /// of their NFC forms, so code point order for keys in NFC), and canonically equivalent keys
    /// in the order of their bytes.
    func sortsBefore(_ other: String) -> Bool {
        // The same storage (a literal key, or any key of up to 15 bytes, which is stored inline)
        // is the common case of a merge walk over two objects.
        if self._isIdentical(to: other) { return false }
        if self < other { return true }
        guard self == other else { return false }
        return self.compareBytes(other) < 0
    }

    /// Negative, zero or positive as this string's UTF-8 bytes come before, equal or after the other's.
    private func compareBytes(_ other: String) -> Int {
        var (mine, theirs) = (self, other)
        return mine.withUTF8 { mine in
            theirs.withUTF8 { theirs in
                for (a, b) in zip(mine, theirs) where a != b { return Int(a) - Int(b) }
                return mine.count - theirs.count
            }
        }
    }
}

/// Whether two buffers of the same length hold the same bytes.
private func sameBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let first = a.baseAddress, let second = b.baseAddress, first != second else { return true }
    let (x, y) = (UnsafeRawPointer(first), UnsafeRawPointer(second))
    var offset = 0
    while offset + 8 <= a.count {
        if x.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            != y.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        {
            return false
        }
        offset += 8
    }
    while offset < a.count {
        if first[offset] != second[offset] { return false }
        offset += 1
    }
    return true
}
