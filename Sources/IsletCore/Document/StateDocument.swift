internal import HashTreeCollections

/// The top-level members of the state document (API.md "The state document").
///
/// Every section is a map of entries: a collection (`activities`, `devices`…) maps ids to
/// entities; a singleton (`clock`, `config`, `relevance`) maps its field names to values. Patch
/// operations therefore always address `/<section>/<key>` or below, never a section whole.
public enum DocumentSection: String, Sendable, Hashable, CaseIterable, Comparable {
    case activities, apps, clock, config, devices, relevance, stacks, widgets

    public static func < (lhs: DocumentSection, rhs: DocumentSection) -> Bool { lhs.rawValue < rhs.rawValue }

    var ordinal: Int { Self.allCases.firstIndex(of: self)! }
}

/// The state document: one JSON tree, stored as a persistent map per section.
///
/// Persistent maps (`TreeDictionary`) make copying the whole engine for an atomic batch O(1)
/// and touching one entity O(log n). Hash order never reaches output: encoding sorts keys.
///
/// Widgets' timeline entries are the exception: a widget's stored JSON has no
/// `timeline.entries`; the compact entries are kept in ``widgetEntries`` (sharing storage with
/// the model) and spliced in by every read. Millions of entries then cost no JSON trees, and a
/// transition's diff never walks them.
struct StateDocument: Sendable {
    private var sections: [TreeDictionary<String, JSONValue>]
    /// The timeline entries of each widget, spliced into `/widgets/<id>/timeline/entries`.
    var widgetEntries: TreeDictionary<String, [TimelineEntry]> = [:]

    init() {
        self.sections = Array(repeating: [:], count: DocumentSection.allCases.count)
    }

    /// The stored value of an entry (for widgets, without `timeline.entries`).
    subscript(section: DocumentSection, key: String) -> JSONValue? {
        get { self.sections[section.ordinal][key] }
        set { self.sections[section.ordinal][key] = newValue }
    }

    /// The value of an entry as the document shows it.
    /// - Complexity: O(log n); for a widget, plus O(entries) to build its entries.
    func entry(_ section: DocumentSection, _ key: String) -> JSONValue? {
        guard let stored = self.sections[section.ordinal][key] else { return nil }
        guard section == .widgets, let entries = self.widgetEntries[key] else { return stored }
        return Self.splice(stored, entries)
    }

    /// A widget's stored JSON with its entries in `timeline.entries`.
    static func splice(_ stored: JSONValue, _ entries: [TimelineEntry]) -> JSONValue {
        guard case .object(var object) = stored, case .object(var timeline)? = object["timeline"] else { return stored }
        timeline["entries"] = .array(entries.map(\.json))
        object["timeline"] = .object(timeline)
        return .object(object)
    }

    func count(of section: DocumentSection) -> Int { self.sections[section.ordinal].count }

    /// The keys of a section in canonical (sorted) order.
    /// - Complexity: O(k log k) for k keys.
    func sortedKeys(of section: DocumentSection) -> [String] {
        self.sections[section.ordinal].keys.sorted()
    }

    /// A section as one JSON object.
    /// - Complexity: O(k log k).
    func object(of section: DocumentSection) -> JSONObject {
        let entries = self.sections[section.ordinal]
        return JSONObject(sortedUniqueMembers: entries.keys.sorted().map { .init(key: $0, value: self.entry(section, $0)!) })
    }

    /// The whole document as one JSON value.
    /// - Complexity: O(size of the document).
    var value: JSONValue {
        .object(
            JSONObject(
                sortedUniqueMembers: DocumentSection.allCases.map {
                    .init(key: $0.rawValue, value: .object(self.object(of: $0)))
                }))
    }

    /// The value at `pointer`, or `nil` when nothing is there.
    /// - Complexity: O(log n) to find the entity, plus the walk below it; whole sections cost
    ///   O(k log k) and the root O(size of the document).
    func value(at pointer: JSONPointer) -> JSONValue? {
        let tokens = pointer.tokens
        guard let first = tokens.first else { return self.value }
        guard let section = DocumentSection(rawValue: first) else { return nil }
        guard tokens.count > 1 else { return .object(self.object(of: section)) }
        // Below a widget, only `timeline` needs the spliced entries.
        let needsSplice = tokens.count == 2 || tokens[2] == "timeline"
        guard let entry = needsSplice ? self.entry(section, tokens[1]) : self[section, tokens[1]] else { return nil }
        return entry[JSONPointer(tokens: Array(tokens.dropFirst(2)))]
    }
}
