import IsletCore

/// Whether each subscribed path exists in the document at the latest published revision, so
/// that narrowed operations say `replace` or `add`, and skip `remove` for what was never there.
/// Reference-counted by the live subscriptions that use each path. Loop-confined.
struct PathPresence {
    private var entries: [JSONPointer: (count: Int, exists: Bool)] = [:]

    /// The paths tracked now.
    var paths: Dictionary<JSONPointer, (count: Int, exists: Bool)>.Keys { self.entries.keys }

    /// Whether a path below the root is tracked (the root always exists).
    var tracksBelowRoot: Bool { self.entries.keys.contains { !$0.isRoot } }

    /// Whether `path` existed at the latest published revision; nil if not tracked.
    func existed(_ path: JSONPointer) -> Bool? { self.entries[path]?.exists }

    /// A subscription to `path` went live; `exists` is read from the published document.
    mutating func retain(_ path: JSONPointer, exists: @autoclosure () -> Bool) {
        if let entry = self.entries[path] {
            self.entries[path] = (entry.count + 1, entry.exists)
        } else {
            self.entries[path] = (1, exists())
        }
    }

    /// A live subscription to `path` ended.
    mutating func release(_ path: JSONPointer) {
        guard let entry = self.entries[path] else { return }
        self.entries[path] = entry.count > 1 ? (entry.count - 1, entry.exists) : nil
    }

    /// Moves every tracked path past a published revision.
    /// - Complexity: O(ops × tracked paths).
    mutating func apply(_ ops: [PatchOperation]) {
        for (path, entry) in self.entries {
            let after = PatchFilter.exists(path, after: ops, existedBefore: entry.exists) ?? entry.exists
            if after != entry.exists { self.entries[path] = (entry.count, after) }
        }
    }
}
