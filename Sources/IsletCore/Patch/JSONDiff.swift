/// Computing a small RFC 6902 patch between two values.
///
/// Objects are compared member by member (members are sorted, so one merge walk suffices);
/// arrays are trimmed of their common prefix and suffix, then recognised as an insertion, a
/// removal, a head-removal-plus-append (a rolling log such as `deliveries`), a single move, or
/// else compared element by element (falling back to one `replace` of the whole array when most
/// elements differ). Scalars that differ are replaced. Equal subtrees cost O(1) when they share
/// storage, because Swift's array equality checks identity first.
extension JSONPatch {
    /// The operations that turn `old` into `new`, with paths under `path`.
    /// - Complexity: O(size of the parts that differ, plus a walk over common prefixes).
    public static func diff(from old: JSONValue, to new: JSONValue, at path: JSONPointer = .root) -> [PatchOperation] {
        var operations: [PatchOperation] = []
        self.diff(old, new, path, &operations)
        return operations
    }

    /// Appends the operations that turn `old` into `new` to `operations`.
    static func diff(_ old: JSONValue, _ new: JSONValue, _ path: JSONPointer, _ operations: inout some PatchSink) {
        if old != new { self.diffUnequal(old, new, path, &operations) }
    }

    /// `diff` of two values already found unequal: an object member found unequal is descended
    /// into without being compared again (arrays still compare their changed elements twice:
    /// once to count them, once to patch them).
    private static func diffUnequal(
        _ old: JSONValue, _ new: JSONValue, _ path: JSONPointer, _ operations: inout some PatchSink
    ) {
        switch (old, new) {
        case (.object(let a), .object(let b)):
            self.diffObjects(a, b, path, &operations)
        case (.array(let a), .array(let b)):
            self.diff(a, b, path, &operations, json: { $0 }, element: { self.diffUnequal($0, $1, $2, &$3) })
        default:
            operations.append(.replace(path, new))
        }
    }

    /// Appends the operations that turn object `old` into `new`, leaving out the members named
    /// in `skipped` (the caller describes their changes itself).
    static func diff(
        _ old: JSONObject, _ new: JSONObject, skipping skipped: Set<String>, _ path: JSONPointer,
        _ operations: inout some PatchSink
    ) {
        self.diffObjects(old, new, path, &operations, skipping: skipped)
    }

    /// A merge walk over the two sorted member lists, read in place: subscripting the arrays
    /// would copy each member out and retain its key and value.
    private static func diffObjects(
        _ a: JSONObject, _ b: JSONObject, _ path: JSONPointer, _ operations: inout some PatchSink,
        skipping skipped: Set<String> = []
    ) {
        a.members.withUnsafeBufferPointer { old in
            b.members.withUnsafeBufferPointer { new in
                self.diffMembers(old, new, path, &operations, skipping: skipped)
            }
        }
    }

    private static func diffMembers(
        _ old: UnsafeBufferPointer<JSONObject.Member>, _ new: UnsafeBufferPointer<JSONObject.Member>,
        _ path: JSONPointer, _ operations: inout some PatchSink, skipping skipped: Set<String>
    ) {
        var i = 0
        var j = 0
        while i < old.count || j < new.count {
            if !skipped.isEmpty {
                if i < old.count, skipped.contains(old[i].key) {
                    i += 1
                    continue
                }
                if j < new.count, skipped.contains(new[j].key) {
                    j += 1
                    continue
                }
            }
            if j == new.count || (i < old.count && old[i].key.sortsBefore(new[j].key)) {
                operations.append(.remove(path.appending(old[i].key)))
                i += 1
            } else if i == old.count || new[j].key.sortsBefore(old[i].key) {
                operations.append(.add(path.appending(new[j].key), new[j].value))
                j += 1
            } else {
                // Compare first: equal members (often the same storage) cost no pointer building.
                if old[i].value != new[j].value {
                    self.diffUnequal(old[i].value, new[j].value, path.appending(old[i].key), &operations)
                }
                i += 1
                j += 1
            }
        }
    }

    /// Appends the operations that turn array `old` into `new`. Elements are compared as
    /// `Element` (equal exactly when their JSON is), turned into JSON only where an operation
    /// carries one, and two that differ in place are compared by `element`: a model kept as
    /// values (a stack's ranking) is patched as its JSON would be, without building that JSON.
    static func diff<Element: Equatable, Sink: PatchSink>(
        _ old: [Element], _ new: [Element], _ path: JSONPointer, _ operations: inout Sink,
        json: (Element) -> JSONValue, element: (Element, Element, JSONPointer, inout Sink) -> Void
    ) {
        var prefix = 0
        while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < old.count - prefix, suffix < new.count - prefix,
            old[old.count - 1 - suffix] == new[new.count - 1 - suffix]
        {
            suffix += 1
        }
        let oldMiddle = old[prefix..<(old.count - suffix)]
        let newMiddle = new[prefix..<(new.count - suffix)]
        if oldMiddle.isEmpty {
            for (offset, value) in newMiddle.enumerated() {
                operations.append(.add(path.appending(prefix + offset), json(value)))
            }
        } else if newMiddle.isEmpty {
            for index in oldMiddle.indices.reversed() { operations.append(.remove(path.appending(index))) }
        } else if !self.diffMoved(oldMiddle, newMiddle, prefix: prefix, path, &operations, json: json),
            !self.diffShifted(old, new, prefix: prefix, path, &operations, json: json)
        {
            self.diffElementwise(
                oldMiddle, newMiddle, whole: new, prefix: prefix, path, &operations, json: json, element: element)
        }
    }

    /// A rolling log: `k` elements left the head and others were appended at the tail.
    private static func diffShifted<Element: Equatable>(
        _ old: [Element], _ new: [Element], prefix: Int, _ path: JSONPointer, _ operations: inout some PatchSink,
        json: (Element) -> JSONValue
    ) -> Bool {
        for removed in 1...min(8, old.count - prefix) {
            let kept = old.count - prefix - removed
            guard kept > 0, kept <= new.count - prefix,
                old[(prefix + removed)...].elementsEqual(new[prefix..<(prefix + kept)])
            else { continue }
            for _ in 0..<removed { operations.append(.remove(path.appending(prefix))) }
            for index in (prefix + kept)..<new.count {
                operations.append(.add(path.appending(index), json(new[index])))
            }
            return true
        }
        return false
    }

    /// One element moved: to a later place (`old` starts with it) or an earlier one.
    private static func diffMoved<Element: Equatable>(
        _ old: ArraySlice<Element>, _ new: ArraySlice<Element>, prefix: Int, _ path: JSONPointer,
        _ operations: inout some PatchSink, json: (Element) -> JSONValue
    ) -> Bool {
        guard old.count == new.count, old.count > 2 else { return false }
        let last = prefix + old.count - 1
        if old.dropFirst().elementsEqual(new.dropLast()) {
            operations.append(.remove(path.appending(prefix)))
            operations.append(.add(path.appending(last), json(new[last])))
            return true
        }
        if old.dropLast().elementsEqual(new.dropFirst()) {
            operations.append(.remove(path.appending(last)))
            operations.append(.add(path.appending(prefix), json(new[prefix])))
            return true
        }
        return false
    }

    private static func diffElementwise<Element: Equatable, Sink: PatchSink>(
        _ old: ArraySlice<Element>, _ new: ArraySlice<Element>, whole: [Element], prefix: Int,
        _ path: JSONPointer, _ operations: inout Sink, json: (Element) -> JSONValue,
        element: (Element, Element, JSONPointer, inout Sink) -> Void
    ) {
        let common = min(old.count, new.count)
        var changed = 0
        for offset in 0..<common where old[prefix + offset] != new[prefix + offset] { changed += 1 }
        if changed > max(4, common / 2) {
            operations.append(.replace(path, .array(whole.map(json))))
            return
        }
        for offset in 0..<common where old[prefix + offset] != new[prefix + offset] {
            element(old[prefix + offset], new[prefix + offset], path.appending(prefix + offset), &operations)
        }
        if old.count > common {
            for index in ((prefix + common)..<(prefix + old.count)).reversed() {
                operations.append(.remove(path.appending(index)))
            }
        } else {
            for index in (prefix + common)..<(prefix + new.count) {
                operations.append(.add(path.appending(index), json(new[index])))
            }
        }
    }
}
