import IsletCore

/// Filters a revision's operations to a set of subscription paths (pure; the fan-out's core).
///
/// An operation is kept as it is when its path is at or under one of the paths. When a path
/// lies strictly under the operation's path (the operation adds, replaces or removes an
/// ancestor of the subscribed value), the operation is narrowed to that path: `replace` (or
/// `add` when the value did not exist) with the sub-value, or `remove` when the value existed
/// and no longer does. Narrowed removes come just before the operation (deepest first), narrowed
/// adds and replaces just after it (shallowest first), so that a client applying every
/// operation to every subscription whose path is at or above the operation's path ends with
/// exactly the document's values. See docs/API.md "Stream semantics".
enum PatchFilter {
    /// What a set of paths receives of a revision.
    enum Result: Equatable {
        /// Nothing falls under the paths.
        case none
        /// Every operation, unchanged: the revision's own encoding can be sent.
        case all
        /// These operations.
        case some([PatchOperation])
    }

    /// Filters `ops` for `paths`.
    /// - Parameters:
    ///   - paths: The subscription paths (any order, no duplicates).
    ///   - existed: Whether each path existed before the revision; `nil` when unknown (a resumed
    ///     subscription's history), in which case narrowing prefers `add` and `remove`, which a
    ///     client applies the same way whether or not the value was there.
    /// - Complexity: O(ops × paths × path depth).
    static func filter(_ ops: [PatchOperation], paths: [JSONPointer], existed: (JSONPointer) -> Bool?) -> Result {
        var out: [PatchOperation] = []
        var unchanged = true
        var known: [JSONPointer: Bool?] = [:]
        for op in ops {
            var covered = false
            var below: [JSONPointer] = []
            for path in paths {
                if op.path.isWithin(path) {
                    covered = true
                    // An operation inside a value implies the value exists; one at it decides.
                    known[path] = op.path != path || op.kind != .remove
                } else if path.isWithin(op.path) {
                    below.append(path)
                }
            }
            if below.isEmpty {
                if covered { out.append(op) } else { unchanged = false }
                continue
            }
            unchanged = false
            below.sort { $0.tokens.count < $1.tokens.count }
            var before: [PatchOperation] = []
            var after: [PatchOperation] = []
            for path in below {
                let had = known[path] ?? existed(path)
                let value =
                    op.kind == .remove
                    ? nil : op.value?[JSONPointer(tokens: Array(path.tokens.dropFirst(op.path.tokens.count)))]
                switch (had, value) {
                case (true?, let value?): after.append(.replace(path, value))
                case (_, let value?): after.append(.add(path, value))
                case (false?, nil): break
                case (_, nil): before.insert(.remove(path), at: 0)
                }
                known[path] = value != nil
            }
            out += before
            if covered { out.append(op) }
            out += after
        }
        if unchanged { return out.isEmpty ? .none : .all }
        return out.isEmpty ? .none : .some(out)
    }

    /// Whether `path` exists after `ops`, given whether it existed before (`nil`: unknown and
    /// not decided by the operations).
    static func exists(_ path: JSONPointer, after ops: [PatchOperation], existedBefore: Bool?) -> Bool? {
        var state = existedBefore
        for op in ops {
            if op.path.isWithin(path) {
                if op.path != path { state = true } else { state = op.kind != .remove }
            } else if path.isWithin(op.path) {
                let relative = JSONPointer(tokens: Array(path.tokens.dropFirst(op.path.tokens.count)))
                state = op.kind == .remove ? false : op.value?[relative] != nil
            }
        }
        return state
    }
}
