/// What of a render context a presentation can show: the member names its templates and
/// derivations look up, at any depth, and those whose whole value they print.
///
/// Two contexts that agree on these names render the same fragments, so the engine renders an
/// activity again only when its context changed where it is read: an update that changes a
/// state key no template shows costs no rendering. A renderer that does not say what it reads
/// reads ``everything``.
public struct ContextReads: Sendable, Hashable {
    /// How much of a named member matters.
    enum Depth: Sendable, Hashable {
        /// Only its own members with read names (a section's object, a path's middle key).
        case members
        /// All of it (a printed value, or one a derivation reads).
        case whole
    }

    private var names: [String: Depth]
    private var all: Bool

    /// Any change to the context may change the fragments.
    public static let everything = ContextReads(names: [:], all: true)

    private init(names: [String: Depth], all: Bool) {
        self.names = names
        self.all = all
    }

    /// Nothing read yet.
    public init() { self.init(names: [:], all: false) }

    /// A member with this name is looked up; what matters of its value is the members that
    /// are read too (of an object), the length and each element (of an array), or the value
    /// itself (of a scalar).
    public mutating func readMembers(of name: String) {
        if !self.all, self.names[name] == nil { self.names[name] = .members }
    }

    /// A member with this name is read whole, wherever it occurs.
    public mutating func readWhole(_ name: String) {
        if !self.all { self.names[name] = .whole }
    }

    /// The context is read whole (a template prints the current context, `{{.}}`).
    public mutating func readEverything() {
        self.all = true
        self.names = [:]
    }

    public mutating func formUnion(_ other: ContextReads) {
        if other.all { self.readEverything() }
        guard !self.all else { return }
        self.names.merge(other.names) { $0 == .whole || $1 == .whole ? .whole : .members }
    }

    /// Whether two contexts agree on everything read: the same members of each read name
    /// present, equal scalars, arrays of the same length whose elements agree, and objects that
    /// agree member by member.
    public func agree(_ old: JSONValue, _ new: JSONValue) -> Bool {
        guard !self.all else { return old == new }
        switch (old, new) {
        case (.object(let old), .object(let new)): return self.agree(old.members, new.members)
        case (.array(let old), .array(let new)):
            return old.count == new.count && zip(old, new).allSatisfy { self.agree($0, $1) }
        default: return old == new
        }
    }

    /// Walks two sorted member lists together, in place (not copying members out); only
    /// members that differ look up their name.
    private func agree(_ old: [JSONObject.Member], _ new: [JSONObject.Member]) -> Bool {
        old.withUnsafeBufferPointer { old in new.withUnsafeBufferPointer { new in self.agree(old, new) } }
    }

    private func agree(_ old: UnsafeBufferPointer<JSONObject.Member>, _ new: UnsafeBufferPointer<JSONObject.Member>)
        -> Bool
    {
        var (oldIndex, newIndex) = (0, 0)
        while oldIndex < old.count || newIndex < new.count {
            if newIndex == new.count || (oldIndex < old.count && old[oldIndex].key.sortsBefore(new[newIndex].key)) {
                if self.names[old[oldIndex].key] != nil { return false }
                oldIndex += 1
            } else if oldIndex == old.count || new[newIndex].key.sortsBefore(old[oldIndex].key) {
                if self.names[new[newIndex].key] != nil { return false }
                newIndex += 1
            } else {
                if old[oldIndex].value != new[newIndex].value {
                    switch self.names[new[newIndex].key] {
                    case nil: break
                    case .whole?: return false
                    case .members?: if !self.agree(old[oldIndex].value, new[newIndex].value) { return false }
                    }
                }
                oldIndex += 1
                newIndex += 1
            }
        }
        return true
    }
}
