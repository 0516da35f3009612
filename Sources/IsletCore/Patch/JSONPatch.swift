/// JSON Patch (RFC 6902): applying patches and computing them.
///
/// `apply` implements all six operations, atomically (a failing operation leaves the input
/// untouched because values are copied). `diff` produces a small patch from one value to
/// another; the engine calls it only on the subtrees a revision touched.
public enum JSONPatch {
    /// Applies `operations` in order to `document`.
    /// - Throws: `invalid_argument` naming the failing operation as `/<index>` plus the reason
    ///   (missing target, bad index, failed `test`, move into its own child…).
    /// - Complexity: O(total size of the values the operations touch and copy).
    public static func apply(_ operations: [PatchOperation], to document: JSONValue) throws(APIError) -> JSONValue {
        var result = document
        for (index, operation) in operations.enumerated() {
            do throws(APIError) {
                try result.apply(operation)
            } catch {
                throw error.nested(under: JSONPointer(tokens: [String(index)]))
            }
        }
        return result
    }

    /// Parses a patch document (a JSON array of operation objects) and applies it.
    public static func apply(patch: JSONValue, to document: JSONValue) throws(APIError) -> JSONValue {
        try self.apply(try [PatchOperation](json: patch), to: document)
    }
}

extension JSONValue {
    /// Applies one RFC 6902 operation in place.
    public mutating func apply(_ operation: PatchOperation) throws(APIError) {
        switch operation.kind {
        case .add:
            try self.add(operation.value ?? .null, at: operation.path)
        case .remove:
            _ = try self.remove(at: operation.path)
        case .replace:
            guard self[operation.path] != nil else { throw missing(operation.path) }
            try self.set(operation.value ?? .null, at: operation.path)
        case .move:
            let from = operation.from ?? .root
            if from == operation.path { guard self[from] != nil else { throw missing(from) }; return }
            guard !operation.path.isWithin(from) else {
                throw APIError(.invalidArgument, "cannot move \(from) into its own child \(operation.path)")
            }
            let value = try self.remove(at: from)
            try self.add(value, at: operation.path)
        case .copy:
            let from = operation.from ?? .root
            guard let value = self[from] else { throw missing(from) }
            try self.add(value, at: operation.path)
        case .test:
            guard let actual = self[operation.path] else { throw missing(operation.path) }
            guard actual == operation.value else {
                throw APIError(.invalidArgument, "test failed at \(operation.path)")
            }
        }
    }

    /// RFC 6902 `add`: sets an object member, or inserts into an array (`-` appends).
    mutating func add(_ value: JSONValue, at pointer: JSONPointer) throws(APIError) {
        try self.place(value, at: pointer, insertingIntoArrays: true)
    }

    /// Replaces the value at an existing location (the root included).
    mutating func set(_ value: JSONValue, at pointer: JSONPointer) throws(APIError) {
        try self.place(value, at: pointer, insertingIntoArrays: false)
    }

    /// Sets an object member; in an array, inserts before the index (`-`: at the end) or
    /// replaces the element at it.
    private mutating func place(
        _ value: JSONValue, at pointer: JSONPointer, insertingIntoArrays inserting: Bool
    ) throws(APIError) {
        guard let last = pointer.lastToken, let parent = pointer.parent else {
            self = value
            return
        }
        try self.modify(at: parent) { (container: inout JSONValue) throws(APIError) in
            switch container {
            case .object(var object):
                container = .null
                object[last] = value
                container = .object(object)
            case .array(var elements):
                let index = inserting && last == "-" ? elements.count : arrayIndex(last)
                guard let index, inserting ? index <= elements.count : index < elements.count else {
                    throw badIndex(pointer)
                }
                container = .null
                if inserting { elements.insert(value, at: index) } else { elements[index] = value }
                container = .array(elements)
            default:
                throw missing(pointer)
            }
        }
    }

    /// RFC 6902 `remove`; returns the removed value.
    mutating func remove(at pointer: JSONPointer) throws(APIError) -> JSONValue {
        guard let last = pointer.lastToken, let parent = pointer.parent else {
            throw APIError(.invalidArgument, "cannot remove the whole document")
        }
        var removed = JSONValue.null
        try self.modify(at: parent) { (container: inout JSONValue) throws(APIError) in
            switch container {
            case .object(var object):
                guard let old = object[last] else { throw missing(pointer) }
                container = .null
                object[last] = nil
                container = .object(object)
                removed = old
            case .array(var elements):
                guard let index = arrayIndex(last), index < elements.count else { throw badIndex(pointer) }
                container = .null
                removed = elements.remove(at: index)
                container = .array(elements)
            default:
                throw missing(pointer)
            }
        }
        return removed
    }

    /// Runs `body` on the value at `pointer` in place (unique storage is reused, not copied).
    mutating func modify(
        at pointer: JSONPointer, _ body: (inout JSONValue) throws(APIError) -> Void
    ) throws(APIError) {
        try self.modify(tokens: pointer.tokens[...], full: pointer, body)
    }

    private mutating func modify(
        tokens: ArraySlice<String>, full: JSONPointer, _ body: (inout JSONValue) throws(APIError) -> Void
    ) throws(APIError) {
        guard let token = tokens.first else {
            try body(&self)
            return
        }
        switch self {
        case .object(var object):
            guard var child = object[token] else { throw missing(full) }
            self = .null
            object[token] = .null
            defer { object[token] = child; self = .object(object) }
            try child.modify(tokens: tokens.dropFirst(), full: full, body)
        case .array(var elements):
            guard let index = arrayIndex(token), index < elements.count else { throw badIndex(full) }
            self = .null
            var child = elements[index]
            elements[index] = .null
            defer { elements[index] = child; self = .array(elements) }
            try child.modify(tokens: tokens.dropFirst(), full: full, body)
        default:
            throw missing(full)
        }
    }
}

private func missing(_ pointer: JSONPointer) -> APIError {
    APIError(.invalidArgument, "nothing at \(pointer.isRoot ? "the root" : pointer.description)")
}

private func badIndex(_ pointer: JSONPointer) -> APIError {
    APIError(.invalidArgument, "bad or out-of-range array index in \(pointer)")
}
