/// A future instant at which the state changes by itself, and what happens then.
///
/// Deadlines are ordered by `(at, sequence)`. `sequence` is a counter kept in the engine state
/// (and in snapshots), assigned when the deadline is scheduled, so deadlines due at the same
/// instant fire in the order they were scheduled, identically live and after a restore.
public struct Deadline: Sendable, Hashable, Comparable {
    public var at: Instant
    public var sequence: UInt64
    public var kind: DeadlineKind

    public static func < (lhs: Deadline, rhs: Deadline) -> Bool {
        (lhs.at, lhs.sequence) < (rhs.at, rhs.sequence)
    }
}

/// What a deadline does when it fires. New entity kinds add cases here (widgets and stacks will).
///
/// A deadline carries only ids: when it pops, the engine checks that the entity still has this
/// deadline armed (its stored sequence equals the deadline's) and skips it otherwise. That is
/// how cancelled and superseded deadlines never fire, without searching the heap.
public enum DeadlineKind: Sendable, Hashable {
    /// A scheduled (`pending`) activity starts.
    case activityStart(activity: String)
    /// An active activity reaches its stale date (LA-5).
    case activityStale(activity: String)
    /// The system ends an activity at start + 8 h (LA-7).
    case activityLifetime(activity: String)
    /// An ended activity leaves the Lock Screen (LA-8).
    case activityDismissal(activity: String)
    /// A dismissed activity is forgotten (removed from the document) after the retention time.
    case activityRemoval(activity: String)
    /// A device's expanded island collapses (LA-10, PR-4) and the next queued alert shows.
    case expansionEnd(device: String)
    /// A banner on a device without a Dynamic Island goes away (LA-10).
    case bannerEnd(device: String)
    /// An app's budget window closes and the budget returns (LA-11, LA-12).
    case budgetReset(app: String, budget: BudgetKind)
    /// A deferred low-priority push is delivered (LA-11).
    case deferredDelivery(app: String)
    /// A widget's next timeline entry becomes current (WK-2). Widgets and stacks are named by
    /// their slot in the engine's tables (snapshots name them by id).
    case widgetEntry(widget: Int32)
    /// A widget's scheduled reload falls due (WK-3 … WK-6).
    case widgetReload(widget: Int32)
    /// A widget's oldest charged reload leaves the 24-hour window (WK-4).
    case widgetChargeExpiry(widget: Int32)
    /// A stack's ranking may change by itself (hour of day, eligibility window, dwell, cap).
    case stackEvaluation(stack: Int32)

    /// The stable wire name used in snapshots.
    var name: String {
        switch self {
        case .activityStart: "activityStart"
        case .activityStale: "activityStale"
        case .activityLifetime: "activityLifetime"
        case .activityDismissal: "activityDismissal"
        case .activityRemoval: "activityRemoval"
        case .expansionEnd: "expansionEnd"
        case .bannerEnd: "bannerEnd"
        case .budgetReset: "budgetReset"
        case .deferredDelivery: "deferredDelivery"
        case .widgetEntry: "widgetEntry"
        case .widgetReload: "widgetReload"
        case .widgetChargeExpiry: "widgetChargeExpiry"
        case .stackEvaluation: "stackEvaluation"
        }
    }
}

/// The two per-app budgets of ActivityKit pushes.
public enum BudgetKind: String, Sendable, Hashable, CaseIterable {
    /// Priority-10 push updates (LA-11).
    case push
    /// Push-to-start (LA-12).
    case pushToStart
}
