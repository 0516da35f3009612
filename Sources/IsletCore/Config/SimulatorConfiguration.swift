/// Every number of the simulation that Apple does not publish (DOMAIN.md "(configurable)"),
/// with Islet's defaults, in one value.
///
/// The whole value is shown under `/config` in the state document and changed by `config.set`.
/// A change applies to decisions taken after it; deadlines already scheduled keep their instants.
/// None of these numbers is presented as Apple's; the field docs say where each comes from.
public struct SimulatorConfiguration: Sendable, Hashable {
    /// LA-4: concurrent (pending + active + stale) activities per app. Default 5.
    public var maxActivitiesPerApp = 5
    /// LA-4: concurrent activities on the simulated device (all apps). Default 10.
    public var maxActivitiesPerDevice = 10
    /// LA-2: encoded `attributes` + `content.state` limit in bytes (Apple: "4 KB"). Default 4096.
    public var activityPayloadMaxBytes = 4096
    /// LA-7: seconds after its start at which the system ends an activity. Default 8 h.
    public var activityMaxSeconds = 28_800.0
    /// LA-8: seconds an ended activity stays on the Lock Screen by default. Default 4 h.
    public var dismissAfterEndSeconds = 14_400.0
    /// Seconds a dismissed activity stays in the document before it is forgotten. Default 24 h.
    public var dismissedRetentionSeconds = 86_400.0
    /// LA-10, PR-4: seconds an alert keeps the island expanded (or a banner shown). Default 4.
    public var alertExpandedSeconds = 4.0
    /// PR-4: seconds an `island.press` keeps the island expanded. Default 8 (Islet's choice).
    public var pressExpandedSeconds = 8.0
    /// LA-11: priority-10 pushes per app per budget window. Default 15.
    public var pushBudgetPerHour = 15
    /// LA-11: the same with `frequentUpdates`. Default 60.
    public var frequentPushBudgetPerHour = 60
    /// LA-12: push-to-start requests per app per budget window. Default 10.
    public var pushToStartPerHour = 10
    /// LA-11, LA-12: length of a budget window in seconds. Default 3600.
    public var budgetWindowSeconds = 3600.0
    /// LA-11: delay before a priority-5 push is delivered, in seconds. Default 0.
    public var lowPriorityDelaySeconds = 0.0
    /// `/apps/<id>/deliveries`: how many delivery records an app keeps. Default 100.
    public var deliveriesKept = 100
    /// LA-14: longest custom animation, in seconds. Default 2.
    public var maxAnimationSeconds = 2.0
    /// PR-3: how the two minimal views are chosen: `score` (highest score, then earliest start;
    /// the first is attached) or `start` (earliest start first). Default `score`.
    public var minimalPolicy = MinimalPolicy.score
    /// PR-5: width of a minimal view, clamped to 36.67–45 pt. Default 36.67.
    public var minimalWidth = 36.67
    /// PR-5: the expanded / Lock Screen height used when a template declares none. Default 160.
    public var defaultPresentationHeight = 160.0
    /// PR-5: heights up to this are the "short" band. Default 100.
    public var shortBandMaxHeight = 100.0
    /// PR-5: heights from this are the "tall" band; between the bands is flagged. Default 140.
    public var tallBandMinHeight = 140.0
    /// WK-4: charged reloads per widget per rolling 24 h. Default 72.
    public var widgetReloadsPerDay = 72
    /// WK-3: seconds after a single-entry timeline's entry at which a reload is due. Default 1800.
    public var widgetSingleEntryReloadSeconds = 1800.0
    /// WK-5: minimum seconds between a widget's previous reload and a charged one. Default 300.
    public var widgetMinReloadIntervalSeconds = 300.0
    /// WK-7: most entries accepted in one timeline. Default 400.
    public var widgetMaxTimelineEntries = 400
    /// SS-5: rotations of one widget to the top of its stack per rolling 24 h. Default 12.
    public var stackRotationsPerWidgetPerDay = 12
    /// SS-2: what a relevance duration of 0 means: `untilNextEntry` (the entry is a candidate
    /// until the next one) or `zero` (never a candidate). Default `untilNextEntry`.
    public var relevanceZeroDuration = "untilNextEntry"
    /// SS-4 (Islet's model): the half-life of one use in the `habit` feature, in seconds.
    /// Default 14 days.
    public var habitHalfLifeSeconds = 1_209_600.0

    public init() {}

    /// PR-3 policies for choosing the two minimal views.
    public enum MinimalPolicy: String, Sendable, Hashable, CaseIterable {
        case score
        case start
    }
}

extension SimulatorConfiguration {
    /// LA-11: the priority-10 budget of an app.
    func pushBudgetLimit(frequentUpdates: Bool) -> Int {
        frequentUpdates ? self.frequentPushBudgetPerHour : self.pushBudgetPerHour
    }

    var activityMaxMilliseconds: Int64 { Milliseconds(seconds: self.activityMaxSeconds) }
    var dismissAfterEndMilliseconds: Int64 { Milliseconds(seconds: self.dismissAfterEndSeconds) }
    var budgetWindowMilliseconds: Int64 { Milliseconds(seconds: self.budgetWindowSeconds) }

    /// The minimal width clamped to PR-5's 36.67–45 pt.
    var clampedMinimalWidth: Double { min(45, max(36.67, self.minimalWidth)) }
}
