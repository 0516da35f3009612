internal import HashTreeCollections

/// The top-level members of the state document (API.md "The state document").
///
/// Every section is a map of entries: a collection (`activities`, `devices`…) maps ids to
/// entities; a singleton (`clock`, `config`, `relevance`) maps its field names to values. Patch
/// operations therefore always address `/<section>/<key>` or below, never a section whole.
public enum DocumentSection: String, Sendable, Hashable, CaseIterable, Comparable {
    case activities, apps, clock, config, devices, relevance, stacks, widgets

    public static func < (lhs: DocumentSection, rhs: DocumentSection) -> Bool { lhs.rawValue < rhs.rawValue }

    var ordinal: Int {
        switch self {
        case .activities: 0
        case .apps: 1
        case .clock: 2
        case .config: 3
        case .devices: 4
        case .relevance: 5
        case .stacks: 6
        case .widgets: 7
        }
    }
}

/// The state document: one JSON tree, stored as a persistent map per section.
///
/// Persistent maps (`TreeDictionary`) make copying the whole engine for an atomic batch O(1)
/// and touching one entity O(log n). Hash order never reaches output: encoding sorts keys.
///
/// Two sections are not stored here: activities' and widgets' entries are built from the model
/// when read (see ``VirtualSection``), so 100,000 widgets with 24 timeline entries each cost no
/// JSON trees, and an update to an activity builds none.
struct StateDocument: Sendable {
    private var sections: [TreeDictionary<String, JSONValue>]

    init() {
        self.sections = Array(repeating: [:], count: DocumentSection.allCases.count)
    }

    subscript(section: DocumentSection, key: String) -> JSONValue? {
        get { self.sections[section.ordinal][key] }
        set { self.sections[section.ordinal][key] = newValue }
    }


    /// The keys of a section in canonical (sorted) order.
    /// - Complexity: O(k log k) for k keys.
    func sortedKeys(of section: DocumentSection) -> [String] {
        self.sections[section.ordinal].keys.sorted()
    }

    /// A section as one JSON object.
    /// - Complexity: O(k log k).
    func object(of section: DocumentSection, virtual: [VirtualSection] = [], members: [VirtualMember] = [])
        -> JSONObject
    {
        if let virtual = virtual.first(where: { $0.section == section }) {
            return JSONObject(sortedUniqueMembers: virtual.keys().map { .init(key: $0, value: virtual.entry($0)!) })
        }
        let entries = self.sections[section.ordinal]
        let spliced = members.filter { $0.section == section }
        return JSONObject(
            sortedUniqueMembers: entries.keys.sorted().map { key in
                .init(key: key, value: spliced.reduce(entries[key]!) { $1.splice($1.value(key), into: $0) })
            })
    }

    /// The whole document as one JSON value.
    /// - Complexity: O(size of the document).
    func value(virtual: [VirtualSection], members: [VirtualMember] = []) -> JSONValue {
        .object(
            JSONObject(
                sortedUniqueMembers: DocumentSection.allCases.map {
                    .init(key: $0.rawValue, value: .object(self.object(of: $0, virtual: virtual, members: members)))
                }))
    }

    /// The value at `pointer`, or `nil` when nothing is there.
    /// - Complexity: O(log n) to find the entity, plus the walk below it; whole sections cost
    ///   O(k log k) and the root O(size of the document); a read that includes a virtual
    ///   member costs what building it costs.
    func value(at pointer: JSONPointer, virtual: [VirtualSection] = [], members: [VirtualMember] = []) -> JSONValue? {
        let tokens = pointer.tokens
        guard let first = tokens.first else { return self.value(virtual: virtual, members: members) }
        guard let section = DocumentSection(rawValue: first) else { return nil }
        guard tokens.count > 1 else { return .object(self.object(of: section, virtual: virtual, members: members)) }
        let stored = virtual.first(where: { $0.section == section }).map { $0.entry(tokens[1]) } ?? self[section, tokens[1]]
        guard var entry = stored else { return nil }
        let inside = Array(tokens.dropFirst(2))
        for member in members where member.section == section && member.isAffected(by: inside) {
            entry = member.splice(member.value(tokens[1]), into: entry)
        }
        return entry[JSONPointer(tokens: inside)]
    }
}

/// A member of every entry of a section that the document does not store: entries hold `null`
/// at `path` or leave it out, and reads put the entry's value there (built from the model per
/// read).
///
/// The Lock Screen list of every device's scene is one: 10,000 activities make it a
/// 10,000-element array, which a revision that reorders it would otherwise copy (the engine's
/// trial copy shares it). An app's delivery log is another: a push would otherwise rewrite the
/// app's stored entry with its log of 100 records.
struct VirtualMember {
    let section: DocumentSection
    /// Where the member is, inside an entry.
    let path: JSONPointer
    /// The member's value in the entry of that key.
    let value: (String) -> JSONValue

    /// Whether a read of `tokens` (inside an entry) includes the member.
    func isAffected(by tokens: [String]) -> Bool {
        let path = self.path.tokens
        return tokens.count <= path.count ? path.starts(with: tokens) : tokens.starts(with: path)
    }

    /// `entry` with the member set to `value`.
    func splice(_ value: JSONValue, into entry: JSONValue) -> JSONValue {
        var entry = entry
        try? entry.set(value, at: self.path)
        return entry
    }
}

/// A section the document reads from the model instead of storing: its keys (sorted, built
/// only when the whole section is read) and a function that builds an entry.
struct VirtualSection {
    let section: DocumentSection
    let keys: () -> [String]
    let entry: (String) -> JSONValue?
}
