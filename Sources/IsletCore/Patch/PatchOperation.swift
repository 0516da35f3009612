/// One RFC 6902 operation: what a revision's patch is made of.
///
/// The engine emits only `add`, `remove` and `replace`; `move`, `copy` and `test` exist so that
/// ``JSONPatch/apply(_:to:)`` implements the whole RFC (clients and tests use it).
public struct PatchOperation: Sendable, Hashable, CustomStringConvertible {
    /// The six operations of RFC 6902.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case add, remove, replace, move, copy, test
    }

    public var kind: Kind
    public var path: JSONPointer
    /// The source of `move` and `copy`; `nil` for the others.
    public var from: JSONPointer?
    /// The value of `add`, `replace` and `test`; `nil` for the others.
    public var value: JSONValue?

    public init(kind: Kind, path: JSONPointer, from: JSONPointer? = nil, value: JSONValue? = nil) {
        self.kind = kind
        self.path = path
        self.from = from
        self.value = value
    }

    public static func add(_ path: JSONPointer, _ value: JSONValue) -> PatchOperation {
        PatchOperation(kind: .add, path: path, value: value)
    }

    public static func remove(_ path: JSONPointer) -> PatchOperation {
        PatchOperation(kind: .remove, path: path)
    }

    public static func replace(_ path: JSONPointer, _ value: JSONValue) -> PatchOperation {
        PatchOperation(kind: .replace, path: path, value: value)
    }

    /// Reads one operation object.
    /// - Throws: `invalid_argument` for an unknown `op`, a missing or malformed `path`, `from` or
    ///   `value`.
    public init(json: JSONValue) throws(APIError) {
        guard case .object(let object) = json else {
            throw APIError(.invalidArgument, "a patch operation must be an object")
        }
        guard let name = object["op"]?.stringValue, let kind = Kind(rawValue: name) else {
            throw APIError(.invalidArgument, "unknown or missing \"op\"", field: "/op")
        }
        guard let pathText = object["path"]?.stringValue else {
            throw APIError(.invalidArgument, "\"path\" must be a string", field: "/path")
        }
        self.kind = kind
        self.path = try JSONPointer(parsing: pathText)
        switch kind {
        case .move, .copy:
            guard let fromText = object["from"]?.stringValue else {
                throw APIError(.invalidArgument, "\"\(name)\" needs a string \"from\"", field: "/from")
            }
            self.from = try JSONPointer(parsing: fromText)
        case .add, .replace, .test:
            guard let value = object["value"] else {
                throw APIError(.invalidArgument, "\"\(name)\" needs a \"value\"", field: "/value")
            }
            self.value = value
        case .remove:
            break
        }
    }

    /// The operation as a JSON object (`{"op", "path", "from"?, "value"?}`).
    public var json: JSONValue {
        var object: JSONObject = ["op": .string(self.kind.rawValue), "path": .string(self.path.description)]
        if let from = self.from { object["from"] = .string(from.description) }
        if let value = self.value { object["value"] = value }
        return .object(object)
    }

    /// Writes the canonical encoding (members in key order: from, op, path, value) without
    /// building an intermediate object.
    public func write(to writer: inout JSONWriter) {
        writer.writeRaw("{")
        if let from = self.from {
            writer.writeRaw("\"from\":")
            writer.write(pointer: from)
            writer.writeRaw(",")
        }
        switch self.kind {
        case .add: writer.writeRaw("\"op\":\"add\",\"path\":")
        case .remove: writer.writeRaw("\"op\":\"remove\",\"path\":")
        case .replace: writer.writeRaw("\"op\":\"replace\",\"path\":")
        case .move: writer.writeRaw("\"op\":\"move\",\"path\":")
        case .copy: writer.writeRaw("\"op\":\"copy\",\"path\":")
        case .test: writer.writeRaw("\"op\":\"test\",\"path\":")
        }
        writer.write(pointer: self.path)
        if let value = self.value {
            writer.writeRaw(",\"value\":")
            writer.write(value)
        }
        writer.writeRaw("}")
    }

    public var description: String {
        var writer = JSONWriter()
        self.write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// Where computed operations go: a list, or a patch encoded as it grows.
protocol PatchSink {
    mutating func append(_ operation: PatchOperation)
}

extension [PatchOperation]: PatchSink {}

extension [PatchOperation] {
    /// The canonical encoding of a whole patch (a JSON array of operations).
    public var encoded: [UInt8] {
        var patch = EncodedPatch(reservingCapacity: 64 + self.count * 384)
        // Operations are read in place: iterating would copy each one, retaining its path and value.
        self.withUnsafeBufferPointer { operations in
            for index in operations.indices { patch.append(operations[index]) }
        }
        return patch.finish()
    }

    /// The operations of a patch document (a JSON array of operation objects).
    /// - Throws: `invalid_argument`, naming the failing operation as `/<index>`.
    public init(json patch: JSONValue) throws(APIError) {
        guard case .array(let elements) = patch else {
            throw APIError(.invalidArgument, "a JSON Patch must be an array of operations")
        }
        self = []
        self.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            do throws(APIError) {
                self.append(try PatchOperation(json: element))
            } catch {
                throw error.nested(under: JSONPointer(tokens: [String(index)]))
            }
        }
    }

    /// The operations of an encoded patch document.
    public init(decoding encoded: [UInt8]) throws(APIError) {
        try self.init(json: try JSONParser.stored.parse(encoded))
    }
}

/// A patch written out as its operations are produced, so that a revision of hundreds of
/// thousands of operations never holds them all as trees (issue 17: the 24 h jump's peak).
struct EncodedPatch: PatchSink {
    private var writer: JSONWriter
    /// How many operations were appended.
    private(set) var count = 0

    /// - Parameter capacity: A guess of the encoded size; untouched capacity costs address
    ///   space, not memory, and regrowing a patch of hundreds of megabytes would copy it.
    init(reservingCapacity capacity: Int) {
        self.writer = JSONWriter(reservingCapacity: capacity)
        self.writer.writeRaw("[")
    }

    mutating func append(_ operation: PatchOperation) {
        if self.count > 0 { self.writer.writeRaw(",") }
        operation.write(to: &self.writer)
        self.count += 1
    }

    /// Appends the operations of `other` (left empty), in their order.
    mutating func append(contentsOf other: inout EncodedPatch) {
        guard other.count > 0 else { return }
        if self.count > 0 { self.writer.writeRaw(",") }
        self.writer.writeEncoded(other.writer.bytes.dropFirst())
        self.count += other.count
        other = EncodedPatch(reservingCapacity: 0)
    }

    /// Closes the JSON array and returns it; a small patch is copied to its size, so that a
    /// history of small revisions does not keep the guessed capacity. (Mutating, not consuming:
    /// a consumed copy would share the buffer, and closing the array would then copy it whole.)
    mutating func finish() -> [UInt8] {
        self.writer.writeRaw("]")
        let bytes = self.writer.bytes
        guard bytes.count < 65_536, bytes.capacity > 2 * bytes.count else { return bytes }
        // `Array(bytes)` would share the buffer: copy into one of the right size.
        var trimmed: [UInt8] = []
        trimmed.reserveCapacity(bytes.count)
        trimmed.append(contentsOf: bytes)
        return trimmed
    }
}
