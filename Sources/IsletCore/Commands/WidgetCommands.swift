/// The commands of widgets, stacks, relevance and App Shortcuts (API.md and its extensions in
/// docs/engine.md).

/// `widget.upsert`: creates a widget or changes the fields given.
public struct WidgetUpsert: Sendable, Hashable {
    public var id: String
    public var app: String?
    public var kind: String?
    public var family: WidgetFamily?
    /// The device to place it on; `""` takes it off its device.
    public var device: String?
    public var configuration: JSONObject?
    public var placeholder: JSONObject?
    /// WK-9: the widget URL; `""` removes it.
    public var url: String?
}

/// One entry of `widget.setTimeline`.
public struct TimelineEntryInput: Sendable, Hashable {
    public var date: Instant
    public var content: JSONObject
    public var score: Double?
    public var duration: Double
    public var links: JSONObject?
}

/// `widget.setTimeline`: the provider's answer (WK-6).
public struct WidgetSetTimeline: Sendable, Hashable {
    public enum Policy: Sendable, Hashable {
        case atEnd, never
        case after(Instant)
    }

    public var id: String
    public var entries: [TimelineEntryInput]
    public var policy: Policy
}

/// `widget.reload`: one widget (`id`) or every widget of a kind (`kind`, optionally of one `app`).
public struct WidgetReloadRequest: Sendable, Hashable {
    public var id: String?
    public var kind: String?
    public var app: String?
    public var reason: String
    /// Extension: the earliest instant wanted (default now).
    public var at: Instant?
}

/// `widget.interact`: a person looks at or taps a widget (WK-9, habit history).
public struct WidgetInteract: Sendable, Hashable {
    public enum Action: String, Sendable, Hashable, CaseIterable {
        case tap, view, control
    }

    public var id: String
    public var action: Action
    /// A `Link` id for `tap`, a button or toggle id for `control`.
    public var target: String?
    /// A past instant (to seed habit history); default now.
    public var at: Instant?
}

/// `stack.upsert`.
public struct StackUpsert: Sendable, Hashable {
    public var id: String
    public var device: String?
    public var family: WidgetFamily?
    public var widgets: [String]?
    public var smartRotate: Bool?
    public var suggestions: Bool?
}

/// `relevance.setWeights`: global (no `stack`) or one stack's overrides (SS-4, SS-6).
public struct RelevanceSetWeights: Sendable, Hashable {
    public var stack: String?
    /// Feature → weight; for a stack, `nil` removes that override.
    public var weights: [RankingFeature: Double?]
    public var hysteresis: Double?
    public var minDwellSeconds: Double?
    /// For a stack: drop every override first.
    public var reset: Bool

    public init(
        stack: String?, weights: [RankingFeature: Double?], hysteresis: Double? = nil, minDwellSeconds: Double? = nil,
        reset: Bool = false
    ) {
        self.stack = stack
        self.weights = weights
        self.hysteresis = hysteresis
        self.minDwellSeconds = minDwellSeconds
        self.reset = reset
    }
}

/// `shortcut.upsert` (SC-1).
public struct ShortcutUpsert: Sendable, Hashable {
    public struct Parameter: Sendable, Hashable {
        public var name: String
        public var values: [String]
    }

    public struct Intent: Sendable, Hashable {
        public var type: String
        public var attributesType: String?
        public var attributes: JSONObject
        public var state: JSONObject
        public var relevanceScore: Double?
    }

    public var app: String
    public var id: String
    public var title: String?
    public var phrases: [String]?
    /// `.some(nil)` removes the parameter.
    public var parameter: Parameter??
    public var intent: Intent?
}

/// `shortcut.run` (SC-2).
public struct ShortcutRun: Sendable, Hashable {
    public var app: String
    public var id: String
    public var parameterValue: String?
    /// Extension: the id of the activity a Live Activity intent starts (generated if absent).
    public var activityId: String?
    /// The device it runs on (its activity's device; an `openApp` intent's foreground);
    /// `nil`: the simulation's default device.
    public var device: String?
}
