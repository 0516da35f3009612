/// A widget instance: what it is, where it is placed, its timeline, what it shows and its
/// reload state (WK-1 … WK-9).
///
/// The timeline is kept compact (``TimelineEntry`` values whose `content` is the object the
/// command carried) and the document shows it through ``StateDocument``'s spliced entries, so
/// 2.4 million entries do not each cost a JSON tree of their own.
struct Widget: Sendable {
    var id: String
    var app: String
    var kind: String
    var family: WidgetFamily
    /// The device the widget is placed on; `nil`: configured but not placed.
    var device: String?
    var configuration = JSONObject()
    /// WK-7: the content the placeholder is rendered from (text is then redacted to shapes).
    var placeholder = JSONObject()
    /// WK-9: the widget URL (`widgetURL`); `nil` opens the app with the kind and family.
    var url: String?
    /// The stack the widget belongs to, if any (SS-1), and its slot (-1: none).
    var stack: String?
    var stackSlot: Int32 = -1

    var timeline = Timeline()
    /// WK-2: the index of the entry shown, `nil` before the first entry's date.
    var current: Int?
    /// WK-2: content from an earlier timeline still on screen because the new timeline's first
    /// entry is in the future.
    var held: ShownEntry?
    /// When what the widget shows last changed (the `freshness` feature).
    var changedAt: Instant?
    var reload = WidgetReload()
    /// The person's use of the widget by hour of day (the `habit` feature).
    var habit: HabitHistory?
    var interactions = 0
    var lastInteractionAt: Instant?
    /// The sequence of the armed entry-transition deadline.
    var entryDeadline: UInt64?

    /// The HTML of what is shown, rendered at the end of the revision that changed it.
    var html = ""
    /// Set when the shown content, its template or its context changed since `html` was rendered.
    var needsRender = true
    /// The revision in progress that last touched the widget (so the change set lists it once).
    var touchMark: UInt64 = 0
    /// The document members changed since the last revision (their patch operations).
    var dirty = WidgetMembers()
    /// Whether the document shows this widget (it did at the end of the last revision).
    var published = false

    init(id: String, app: String, kind: String, family: WidgetFamily) {
        self.id = id
        self.app = app
        self.kind = kind
        self.family = family
    }

    /// SS-3's key: scores are normalized per app and kind.
    var kindKey: String { self.app + "/" + self.kind }

    /// The entry on screen: the current one, or the held one; `nil` shows the placeholder.
    /// - Complexity: parses the current entry's content.
    var shownEntry: ShownEntry? {
        if let index = self.current { return self.timeline.shown(index) }
        return self.held
    }

    /// The date of the entry on screen (no parsing).
    var shownDate: Instant? {
        if let index = self.current { return self.timeline.entries[index].date }
        return self.held?.date
    }

    /// The `Link` targets of the entry on screen (no parsing).
    var shownLinks: JSONObject? {
        if let index = self.current { return self.timeline.links[index] }
        return self.held?.links
    }
}

/// A timeline as `widget.setTimeline` gave it (WK-2, WK-3), stored compactly: each entry's
/// date and relevance in a small struct, every entry's content as canonical JSON bytes back to
/// back in one buffer. A 24-entry timeline costs two allocations instead of a JSON tree per
/// entry; content is parsed again only to render the entry shown or to read the document.
struct Timeline: Sendable, Hashable {
    /// Sorted by date (equal dates keep their order).
    var entries: [TimelineEntry] = []
    /// The canonical JSON of every entry's content, back to back (`entries[i].contentEnd` ends
    /// entry i's).
    var contents: [UInt8] = []
    /// WK-9: `Link` targets (id → URL) of the entries that have some, by entry index.
    var links: [Int: JSONObject] = [:]
    var policy = ReloadPolicy.atEnd
    var setAt: Instant?

    init() {}

    init(_ inputs: [TimelineEntryInput], policy: ReloadPolicy, setAt: Instant?) {
        var writer = JSONWriter(reservingCapacity: inputs.count * 96)
        self.entries.reserveCapacity(inputs.count)
        for (index, input) in inputs.enumerated() {
            writer.write(object: input.content)
            self.entries.append(
                TimelineEntry(
                    date: input.date, score: input.score ?? .nan, duration: input.duration,
                    contentEnd: UInt32(writer.bytes.count)))
            if let links = input.links { self.links[index] = links }
        }
        self.contents = writer.bytes
        self.policy = policy
        self.setAt = setAt
    }

    var count: Int { self.entries.count }

    /// The content of entry `index`, parsed from its bytes.
    /// - Complexity: O(size of that content).
    func content(at index: Int) -> JSONObject {
        let start = index == 0 ? 0 : Int(self.entries[index - 1].contentEnd)
        let bytes = self.contents[start..<Int(self.entries[index].contentEnd)]
        // The bytes are our own canonical encoding of an object: they always parse.
        return (try? JSONParser(maxDepth: 1024).parse(bytes))?.objectValue ?? JSONObject()
    }

    /// Entry `index` with its content, as shown or held.
    func shown(_ index: Int) -> ShownEntry {
        let entry = self.entries[index]
        return ShownEntry(
            date: entry.date, content: self.content(at: index), score: entry.score, duration: entry.duration,
            links: self.links[index])
    }

    /// Entry `index` as the document shows it.
    func json(_ index: Int) -> JSONValue { self.shown(index).json }

    /// `timeline.entries` of the document.
    /// - Complexity: O(size of the timeline).
    var entriesJSON: JSONValue { .array(self.entries.indices.map(self.json)) }
}

/// One entry of a timeline, without its content (which is in ``Timeline/contents``).
struct TimelineEntry: Sendable, Hashable {
    var date: Instant
    /// `TimelineEntryRelevance.score`; NaN when the entry has no relevance (not a candidate).
    var score: Double
    /// `TimelineEntryRelevance.duration` in seconds; 0 means the configured default (SS-2).
    var duration: Double
    /// Where this entry's content ends in ``Timeline/contents``.
    var contentEnd: UInt32

    var hasRelevance: Bool { !self.score.isNaN }
}

/// An entry with its content: what a widget shows, or holds from an earlier timeline (WK-2).
struct ShownEntry: Sendable, Hashable {
    var date: Instant
    var content: JSONObject
    var score: Double
    var duration: Double
    var links: JSONObject?

    var hasRelevance: Bool { !self.score.isNaN }

    /// The entry as the document shows it.
    var json: JSONValue {
        let relevance: JSONValue =
            self.hasRelevance ? ["duration": .number(self.duration), "score": .number(self.score)] : .null
        var object: JSONObject = [
            "content": .object(self.content), "date": .string(self.date.rfc3339), "relevance": relevance,
        ]
        if let links = self.links { object["links"] = .object(links) }
        return .object(object)
    }
}

/// WK-3's reload policies.
enum ReloadPolicy: Sendable, Hashable {
    case atEnd
    case never
    case after(Instant)

    var json: JSONValue {
        switch self {
        case .atEnd: "atEnd"
        case .never: "never"
        case .after(let date): ["after": .string(date.rfc3339)]
        }
    }
}

/// WK-3 … WK-6: a widget's reloads, its rolling budget and the reload it waits for.
struct WidgetReload: Sendable, Hashable {
    /// WK-6: a reload happened and no timeline has answered it yet.
    var pending = false
    var pendingSince: Instant?
    /// The last reload performed (charged or free), for WK-5's spacing.
    var lastAt: Instant?
    var lastReason: String?
    /// Reloads performed so far.
    var count = 0
    /// WK-4: instants of the charged reloads in the last 24 h, oldest first.
    var charges: [Instant] = []
    /// The sequence of the deadline that drops the oldest charge from the window.
    var chargeExpiryDeadline: UInt64?
    /// The reload waiting for its instant (policy, deferred by WK-4 or WK-5, or requested later).
    var scheduled: ScheduledReload?
}

/// A reload that will happen at `at` unless a timeline answers first.
struct ScheduledReload: Sendable, Hashable {
    var at: Instant
    var reason: String
    var charged: Bool
    var deadline: UInt64
}

/// How often a person used a widget at each hour of day, each use decaying with a half-life.
///
/// `sums[h]` is the decayed count at `reference`; its value at instant `t` is
/// `sums[h] × 2^(−(t − reference) / halfLife)`. Every widget's values shrink by the same factor
/// as time passes, so comparing widgets within one hour needs no re-evaluation.
struct HabitHistory: Sendable, Hashable {
    var reference: Instant
    var sums: [Double] = Array(repeating: 0, count: 24)

    /// Adds one use at `instant`, in the hour of day of `zone` (SS-7: the person's own hours).
    mutating func record(_ instant: Instant, zone: TimeZoneRule, halfLifeMilliseconds: Double) {
        let hour = zone.hourOfDay(instant)
        if instant > self.reference {
            let factor = decay(instant.milliseconds(since: self.reference), halfLifeMilliseconds)
            for index in 0..<24 { self.sums[index] *= factor }
            self.reference = instant
            self.sums[hour] += 1
        } else {
            self.sums[hour] += decay(self.reference.milliseconds(since: instant), halfLifeMilliseconds)
        }
    }

    /// The decayed use at `hour`, evaluated at `instant`.
    func value(hour: Int, at instant: Instant, halfLifeMilliseconds: Double) -> Double {
        let sum = self.sums[hour]
        guard sum > 0 else { return 0 }
        return sum * decay(instant.milliseconds(since: self.reference), halfLifeMilliseconds)
    }
}

/// 2^(−elapsed / halfLife); elapsed may be negative.
func decay(_ elapsed: Int64, _ halfLifeMilliseconds: Double) -> Double {
    guard halfLifeMilliseconds > 0 else { return elapsed == 0 ? 1 : 0 }
    return exp2(-Double(elapsed) / halfLifeMilliseconds)
}

let millisecondsPerHour: Int64 = 3_600_000
let millisecondsPerDay: Int64 = 86_400_000

/// The members of a widget's document entry, as a set of bits: a widget's JSON is not stored in
/// the document but built from the model when read, and a revision replaces exactly the
/// members its changes marked.
struct WidgetMembers: OptionSet, Sendable, Hashable {
    var rawValue: UInt32

    static let configuration = WidgetMembers(rawValue: 1 << 0)
    static let current = WidgetMembers(rawValue: 1 << 1)
    static let device = WidgetMembers(rawValue: 1 << 2)
    static let family = WidgetMembers(rawValue: 1 << 3)
    static let placeholder = WidgetMembers(rawValue: 1 << 4)
    static let presentation = WidgetMembers(rawValue: 1 << 5)
    static let reload = WidgetMembers(rawValue: 1 << 6)
    static let render = WidgetMembers(rawValue: 1 << 7)
    static let size = WidgetMembers(rawValue: 1 << 8)
    static let stack = WidgetMembers(rawValue: 1 << 9)
    static let tap = WidgetMembers(rawValue: 1 << 10)
    static let timeline = WidgetMembers(rawValue: 1 << 11)
    static let url = WidgetMembers(rawValue: 1 << 12)
    static let usage = WidgetMembers(rawValue: 1 << 13)

    /// Member names, in key order, with their bits.
    static let names: [(String, WidgetMembers)] = [
        ("configuration", .configuration), ("current", .current), ("device", .device), ("family", .family),
        ("placeholder", .placeholder), ("presentation", .presentation), ("reload", .reload), ("render", .render),
        ("size", .size), ("stack", .stack), ("tap", .tap), ("timeline", .timeline), ("url", .url), ("usage", .usage),
    ]
}
