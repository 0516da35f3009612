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
    /// The stack the widget belongs to, if any (SS-1).
    var stack: String?

    var timeline = Timeline()
    /// WK-2: the index of the entry shown, `nil` before the first entry's date.
    var current: Int?
    /// WK-2: content from an earlier timeline still on screen because the new timeline's first
    /// entry is in the future.
    var held: TimelineEntry?
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

    init(id: String, app: String, kind: String, family: WidgetFamily) {
        self.id = id
        self.app = app
        self.kind = kind
        self.family = family
    }

    /// SS-3's key: scores are normalized per app and kind.
    var kindKey: String { self.app + "/" + self.kind }

    /// The entry on screen: the current one, or the held one; `nil` shows the placeholder.
    var shownEntry: TimelineEntry? {
        if let index = self.current { return self.timeline.entries[index] }
        return self.held
    }
}

/// A timeline as `widget.setTimeline` gave it (WK-2, WK-3).
struct Timeline: Sendable, Hashable {
    /// Sorted by date (equal dates keep their order).
    var entries: [TimelineEntry] = []
    var policy = ReloadPolicy.atEnd
    var setAt: Instant?
}

/// One entry of a timeline.
struct TimelineEntry: Sendable, Hashable {
    var date: Instant
    var content: JSONObject
    /// `TimelineEntryRelevance.score`; NaN when the entry has no relevance (not a candidate).
    var score: Double
    /// `TimelineEntryRelevance.duration` in seconds; 0 means the configured default (SS-2).
    var duration: Double
    /// WK-9: `Link` targets of this entry, id → URL.
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

    /// Adds one use at `instant`.
    mutating func record(_ instant: Instant, halfLifeMilliseconds: Double) {
        let hour = hourOfDay(instant)
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

/// The UTC hour of day (0–23) of an instant. Islet's simulated person lives in UTC.
func hourOfDay(_ instant: Instant) -> Int {
    Int(instant.millisecondsSinceEpoch.floorDivided(by: millisecondsPerHour).floorModulo(24))
}

/// The start of the UTC hour that contains `instant`.
func hourStart(_ instant: Instant) -> Instant {
    Instant(millisecondsSinceEpoch: instant.millisecondsSinceEpoch.floorDivided(by: millisecondsPerHour) * millisecondsPerHour)
}

/// The next top of the hour strictly after `instant`.
func nextHour(after instant: Instant) -> Instant {
    hourStart(instant).adding(milliseconds: millisecondsPerHour)
}
