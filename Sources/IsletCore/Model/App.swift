internal import HashTreeCollections

/// An app that can start Live Activities: identity, switches, budgets and delivery log.
struct App: Sendable, Hashable {
    /// The app's colors (CSS color strings), used by the Lock Screen and the keyline (PR-9).
    struct Identity: Sendable, Hashable {
        var tint: String?
        var background: String?
        var foreground: String?
        var keyline: String?
    }

    var id: String
    var name: String
    var identity = Identity()
    var liveActivitiesEnabled = true
    var frequentUpdates = false
    /// Revision 1's foreground flag (`app.upsert … "foreground"`): it lets the app start
    /// activities (LA-3) and hides nothing; the foreground is now a device's (`foregroundApp`).
    var foreground = false
    /// Revision 1's single push-to-start token: it starts activities of any attributes type on
    /// the simulation's default device.
    var pushToStartToken: String
    /// The `ActivityAttributes` types the app declares (`app.upsert … "attributesTypes"`); each
    /// has a push-to-start token on every device that supports push-to-start.
    var attributesTypes: [String] = []
    /// Those tokens, by device and type.
    var pushToStartTokens: TreeDictionary<PushToStartKey, PushToStartToken> = [:]
    /// Broadcast channels, by id.
    var channels: TreeDictionary<String, Channel> = [:]
    var pushBudget = Budget()
    var pushToStartBudget = Budget()
    /// Priority-10 pushes over budget, applied when the budget returns (LA-11), oldest first;
    /// at most one per activity or channel (AP-9).
    var throttled: [PendingDelivery] = []
    /// Priority-5 pushes waiting for their delivery instant (LA-11), oldest first.
    var deferred: [PendingDelivery] = []
    /// Every activity of this app still in the document.
    var activities: TreeSet<String> = []
    /// Every widget of this app.
    var widgets: TreeSet<String> = []
    /// SC-1: the app's App Shortcuts (at most 10), in declared order.
    var shortcuts: [Shortcut] = []
    /// SC-2: the declared-order number the next new shortcut gets.
    var nextShortcutOrder = 0

    init(id: String, pushToStartToken: String) {
        self.id = id
        self.name = id
        self.pushToStartToken = pushToStartToken
    }

    /// The WidgetKit push token of the app's widgets: derived from the push-to-start token, so
    /// that adding it drew nothing from the token counter (older logs replay to the same tokens).
    var widgetPushToken: String { hexToken(seed: stableHash("widgets:" + self.pushToStartToken)) }

    func budget(_ kind: BudgetKind) -> Budget {
        kind == .push ? self.pushBudget : self.pushToStartBudget
    }

    mutating func modifyBudget(_ kind: BudgetKind, _ body: (inout Budget) -> Void) {
        if kind == .push { body(&self.pushBudget) } else { body(&self.pushToStartBudget) }
    }
}

/// Which push-to-start token: one device, one attributes type.
struct PushToStartKey: Sendable, Hashable, Comparable {
    var device: String
    var attributesType: String

    static func < (lhs: PushToStartKey, rhs: PushToStartKey) -> Bool {
        (lhs.device, lhs.attributesType) < (rhs.device, rhs.attributesType)
    }
}

/// A push-to-start token and how many times it was rotated (`app.rotatePushToStartToken`).
struct PushToStartToken: Sendable, Hashable {
    var token: String
    var generation: Int
}

/// A fixed-window budget: the window opens at the first charge and lasts `budgetWindowSeconds`;
/// when it closes (a deadline), `used` returns to 0 and throttled deliveries are retried.
struct Budget: Sendable, Hashable {
    var windowStart: Instant?
    var used = 0
    /// The sequence of the window-reset deadline.
    var resetDeadline: UInt64?
}

/// A push delivery the engine holds for later: throttled (LA-11) or low priority with a delay.
struct PendingDelivery: Sendable, Hashable {
    /// The command object as received (re-read when it is delivered).
    let command: JSONValue
    let receivedAt: Instant
    /// For deferred deliveries, the sequence of their deadline; 0 for throttled ones.
    let deadline: UInt64
    /// What it is for (read from `command`, so snapshots need not store it).
    let target: HeldTarget

    init(command: JSONValue, receivedAt: Instant, deadline: UInt64) {
        self.command = command
        self.receivedAt = receivedAt
        self.deadline = deadline
        self.target = HeldTarget(command)
    }
}
