/// A Home Screen stack of up to 10 widgets of one system family (SS-1), its ranking and
/// rotation state (SS-2 … SS-6).
struct Stack: Sendable {
    var id: String
    var device: String
    var family: WidgetFamily
    var smartRotate = true
    var suggestions = false
    var overrides = RelevanceOverrides()
    /// The members, in the order the person arranged them; the cache of what ranking needs,
    /// kept in step with the widgets so an evaluation reads no other entity.
    var members: [StackMember] = []
    var top: String?
    var topSince: Instant?
    /// The latest evaluation, best first (eligible first, then score, then position).
    var ranking: [RankedMember] = []
    /// The last 50 rotations, oldest first (the document's `rotations`, built when read: as
    /// JSON trees, 10,000 stacks' logs took ~250 MiB).
    var rotations: [Rotation] = []
    /// Rotations ever recorded (so a forecast can tell which of `rotations` are new).
    var rotationCount = 0
    /// What the document showed of the stack's ranking and rotation log at the last revision;
    /// `nil` while it does not show this stack (a new one, or one re-created in the revision).
    var published: PublishedStack?
    /// The earliest of the members' `rotationsToTop` (so an evaluation prunes them only when one
    /// left the window, without reading every member's list).
    var oldestRotation: Instant?
    /// The armed re-evaluation deadline: its instant and sequence.
    var evaluationAt: Instant?
    var evaluationDeadline: UInt64?
    /// Listed in the change set's evaluations (so it is evaluated once per instant).
    var evaluationPending = false
    var touchMark: UInt64 = 0

    init(id: String, device: String, family: WidgetFamily) {
        self.id = id
        self.device = device
        self.family = family
    }

    var widgetIDs: [String] { self.members.map(\.widget) }

    /// The ranking as the document shows it.
    var shownRanking: [ShownRankingRow] {
        self.ranking.map { ShownRankingRow(widget: self.widget($0), row: $0) }
    }

    /// The widget of a ranking row.
    func widget(_ row: RankedMember) -> String { self.members[row.position].widget }

    func memberIndex(_ widget: String) -> Int? { self.members.firstIndex { $0.widget == widget } }
}

/// What ranking needs to know about one member.
///
/// `score`, the window, `kindMax`, `changedAt` and `habit` mirror the widget and are refreshed
/// whenever the widget changes; `leftTopAt` and `rotationsToTop` belong to the stack.
struct StackMember: Sendable {
    var widget: String
    /// The widget's slot in the engine's table.
    var widgetSlot: Int32
    /// The shown entry's relevance score; NaN when there is none.
    var score = Double.nan
    /// SS-2: the current entry is a candidate in `[eligibleFrom, eligibleUntil)`.
    var eligibleFrom = Instant.distantPast
    var eligibleUntil = Instant.distantPast
    /// SS-3: the highest score the widget's app and kind ever sent.
    var kindMax = 0.0
    var changedAt: Instant?
    var habit: HabitHistory?
    /// When the widget last lost the top of this stack (`rotationPenalty`).
    var leftTopAt: Instant?
    /// SS-5: when it was rotated to the top in the last 24 h, oldest first.
    var rotationsToTop: [Instant] = []

    init(widget: String, slot: Int32) {
        self.widget = widget
        self.widgetSlot = slot
    }

    /// SS-2: whether the member is a rotation candidate at `instant`.
    func isEligible(at instant: Instant) -> Bool {
        self.score > 0 && self.eligibleFrom <= instant && instant < self.eligibleUntil
    }
}

/// The parts of a stack's document entry that are not stored as JSON (``VirtualMember``), as
/// the document showed them at the end of a revision: the next revision's operations for them
/// follow from comparing values, not trees built twice (a 24 h jump re-publishes 10,000 stacks).
struct PublishedStack: Sendable {
    var ranking: [ShownRankingRow]
    /// The `rotationCount` and the log's length.
    var rotationCount: Int
    var rotationLength: Int

    init(_ stack: Stack, ranking: [ShownRankingRow]) {
        self.ranking = ranking
        self.rotationCount = stack.rotationCount
        self.rotationLength = stack.rotations.count
    }
}

/// A ranking row as the document shows it, naming its widget. Two rows are equal exactly when
/// their JSON is (the position, which the document does not show, is not compared).
struct ShownRankingRow: Sendable, Equatable {
    var widget: String
    var row: RankedMember

    var json: JSONValue { self.row.json(widget: self.widget) }

    static func == (lhs: ShownRankingRow, rhs: ShownRankingRow) -> Bool {
        lhs.row.score == rhs.row.score && lhs.row.eligible == rhs.row.eligible
            && lhs.row.contributions == rhs.row.contributions && lhs.row.features == rhs.row.features
            && lhs.widget.hasSameCodePoints(as: rhs.widget)
    }

    /// Appends the operations that turn row `old` into `new`: those the diff of their JSON gives.
    static func diff(_ old: ShownRankingRow, _ new: ShownRankingRow, _ path: JSONPointer, _ operations: inout some PatchSink) {
        old.row.contributions.diff(new.row.contributions, path.appending("contributions"), &operations)
        if old.row.eligible != new.row.eligible {
            operations.append(.replace(path.appending("eligible"), .bool(new.row.eligible)))
        }
        old.row.features.diff(new.row.features, path.appending("features"), &operations)
        if old.row.score != new.row.score { operations.append(.replace(path.appending("score"), .number(new.row.score))) }
        if !old.widget.hasSameCodePoints(as: new.widget) {
            operations.append(.replace(path.appending("widget"), .string(new.widget)))
        }
    }
}

/// SS-5: one rotation, with the winner's contributions.
struct Rotation: Sendable, Hashable {
    var at: Instant
    var from: String
    var fromScore: Double
    var to: String
    var score: Double
    var contributions: FeatureVector

    /// The record as `/stacks/<id>/rotations` shows it.
    var json: JSONValue {
        let object: JSONObject = [
            "at": .string(self.at.rfc3339), "contributions": self.contributions.json, "from": .string(self.from),
            "fromScore": .number(self.fromScore), "score": .number(self.score), "to": .string(self.to),
        ]
        return .object(object)
    }
}

/// One row of a stack's ranking. It names its widget by position in the stack (no string to
/// copy); the ranking is recomputed whenever the members change.
struct RankedMember: Sendable, Hashable {
    /// The member's position in the stack (ties go to the earlier one).
    var position: Int
    var eligible: Bool
    var features: FeatureVector
    var contributions: FeatureVector
    var score: Double

    func json(widget: String) -> JSONValue {
        let object: JSONObject = [
            "contributions": self.contributions.json, "eligible": .bool(self.eligible),
            "features": self.features.json, "score": .number(self.score), "widget": .string(widget),
        ]
        return .object(object)
    }

    /// Best first: eligible before ineligible, then higher score, then earlier position.
    static func precedes(_ lhs: RankedMember, _ rhs: RankedMember) -> Bool {
        if lhs.eligible != rhs.eligible { return lhs.eligible }
        if lhs.score != rhs.score { return lhs.score > rhs.score }
        return lhs.position < rhs.position
    }
}

extension Instant {
    static let distantPast = Instant(millisecondsSinceEpoch: .min / 2)
    static let distantFuture = Instant(millisecondsSinceEpoch: .max / 2)
}
