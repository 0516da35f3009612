/// A Live Activity: static attributes, dynamic content, lifecycle, and what it last rendered.
struct Activity: Sendable, Hashable {
    var id: String
    var app: String
    /// LA-15: the device it runs on; `nil` when it was requested while the simulation had no
    /// device (revision 1), and then every device shows it.
    var device: String?
    var attributesType: String
    /// LA-1: fixed for the activity's life.
    var attributes: JSONObject
    var content: ActivityContent
    var phase: ActivityPhase = .active
    var source: ActivitySource
    var wantsPushToken: Bool
    var pushToken: String?
    /// The broadcast channel it subscribes to (`pushType: {"channel": id}`).
    var channel: String?
    var requestedAt: Instant
    /// For a scheduled start: when it becomes active.
    var scheduledStart: Instant?
    var startedAt: Instant?
    var endedAt: Instant?
    /// Who or what ended it: `app`, `push`, `system` (8 h), `person`, `frequentUpdates`, `deviceDeleted`.
    var endReason: String?
    var dismissAt: Instant?
    var dismissedAt: Instant?
    /// Ties in relevance go to the activity that started first; this counter breaks equal instants.
    var startOrder: UInt64
    var alert: ActivityAlert?
    /// LA-6: the newest `timestamp` applied so far.
    var lastTimestamp: Instant?
    var armed = ArmedDeadlines()
    /// The fragments last rendered for this activity; `nil` until the revision renders it.
    var render: RenderedPresentation?
    /// `render`'s fragments as the document's JSON, built once per rendering.
    var renderedFragments: JSONValue = .null
    /// The context `render` came from; `nil` before the first rendering (also after a restore)
    /// and when its templates changed since.
    var renderedContext: JSONValue?

    /// LA-4: pending, active and stale activities count towards the limits.
    var isOngoing: Bool { self.phase.isOngoing }
    /// PR-1: active and stale activities may appear in the island.
    var isIslandCandidate: Bool { self.phase == .active || self.phase == .stale }
    /// PR-6: the Lock Screen shows active, stale and ended-but-not-dismissed activities.
    var isOnLockScreen: Bool { self.isIslandCandidate || self.phase == .ended }
}

/// LA-1's dynamic part.
struct ActivityContent: Sendable, Hashable {
    var state: JSONObject
    var staleDate: Instant?
    var relevanceScore: Double = 0
}

/// `activityState` of the document (ActivityKit's `ActivityState`).
enum ActivityPhase: String, Sendable, Hashable, CaseIterable {
    case pending, active, stale, ended, dismissed

    var isOngoing: Bool { self == .pending || self == .active || self == .stale }
}

/// Where an `activity.request` comes from (LA-3).
enum ActivitySource: String, Sendable, Hashable, CaseIterable {
    case app, intent, push
}

/// The last alert of an activity (LA-10; title and body show on Apple Watch only).
struct ActivityAlert: Sendable, Hashable {
    /// The alert's members as ``AlertInput`` checked them.
    var fields: JSONObject
    var at: Instant

    var json: JSONValue {
        var object = self.fields
        object["at"] = .string(self.at.rfc3339)
        return .object(object)
    }
}

/// The sequences of the deadlines an activity currently wants; a popped deadline whose
/// sequence differs was cancelled or superseded.
struct ArmedDeadlines: Sendable, Hashable {
    var start: UInt64?
    var stale: UInt64?
    var lifetime: UInt64?
    var dismissal: UInt64?
    var removal: UInt64?
}

/// How an ended activity leaves the Lock Screen (LA-8).
enum DismissalPolicy: Sendable, Hashable {
    case `default`
    case immediate
    case after(Instant)
}
