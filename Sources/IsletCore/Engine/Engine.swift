internal import HashTreeCollections

/// The simulation engine: the pure, deterministic model of what an iPhone shows.
///
/// A value type. The server owns one on its loop thread and calls ``apply(_:at:)`` for command
/// batches and ``advance(to:)`` when the next deadline is due. Each accepted batch or clock step
/// is one revision: the engine returns the RFC 6902 operations of that revision, computed only
/// for the subtrees it touched, already encoded once for fan-out. Nothing here reads a clock,
/// the environment or a file: the same commands at the same instants give the same bytes.
///
/// Instants passed in are **wall** instants (what the caller's ``TimeSource`` reads); the
/// engine maps them through its ``SimulationClock`` to simulated instants, which are what every
/// rule, date and deadline in the document uses.
public struct Engine: Sendable {
    public internal(set) var configuration: SimulatorConfiguration
    let renderer: any PresentationRenderer
    /// How simulated time relates to wall time (`/clock`).
    public internal(set) var clock: SimulationClock
    /// The simulated instant of the latest revision (`/clock/now`).
    public internal(set) var now: Instant
    /// The latest revision number; 0 before the first revision.
    public internal(set) var rev: UInt64 = 0
    /// Added to `rev` for the marks revisions stamp on widgets and stacks (``revisionMark``). A
    /// fork starts again at revision 0 with its source's marks, so it starts past them.
    var markBase: UInt64 = 0

    var devices: TreeDictionary<String, Device> = [:]
    var apps = EntityMap<App>()
    /// Each app's last `deliveriesKept` delivery records (JSON objects), newest last. Kept
    /// apart from the app (whose box a change copies whole) so that a delivery appends in place.
    var deliveryLogs: TreeDictionary<String, [JSONValue]> = [:]
    var activities = EntityMap<Activity>()
    var widgets = EntityTable<Widget>()
    var stacks = EntityTable<Stack>()
    /// `/relevance`: the global ranking weights, hysteresis and dwell (SS-4, SS-5).
    var relevance = RelevanceSettings.defaults
    /// SS-3: the highest relevance score each app and kind (`app/kind`) ever sent.
    var kindMaxScores: TreeDictionary<String, Double> = [:]
    /// The widgets of each app and kind (`app/kind`), for SS-3 and `widget.reload` by kind.
    var kindWidgets: TreeDictionary<String, TreeSet<String>> = [:]
    var templates = TemplateStore()
    var tokens: TreeDictionary<String, TokenOwner> = [:]
    /// The retired tokens among `tokens`, in the order they are forgotten past their cap.
    var retiredTokens = RetiredTokens()
    /// The caps kept by letting go of the oldest (retired tokens, held pushes).
    var bounds = DiscardBounds()
    /// Every live broadcast channel's app (channel ids are unique in a simulation).
    var channelApps: TreeDictionary<String, String> = [:]
    /// The activities subscribed to each channel id (kept after the channel is deleted).
    var channelSubscribers: TreeDictionary<String, TreeSet<String>> = [:]
    /// The APNs provider keys pushes must be signed with, by key id (none: no JWT is asked for).
    var apnsKeys: TreeDictionary<String, ProviderKey> = [:]
    /// LA-15: each device's rankings of the activities it shows.
    var indexes = DeviceIndexes()
    var scheduler = DeadlineScheduler()
    var counters = Counters()
    /// LA-4: pending, active and stale activities per device and per app on each device.
    var ongoing = OngoingCounts()
    var document = StateDocument()
    /// Each device's island pick, derived from `indexes`.
    var sceneBase = SceneBase()
    /// What the revision in progress touched; empty between revisions.
    var changes = ChangeSet()
    /// How many stacks (to re-rank or to publish) and widgets (to publish) a step handles
    /// before it shares the work with a second thread (below it, starting a thread costs more
    /// than it saves). Tests lower or raise it to compare the two ways: the bytes are the same.
    var sideBySideMinimum = 256
    /// Whether the batch in progress is new or replayed from a log; `.new` between revisions.
    var admission = Admission.new

    /// Builds an empty simulation whose document exists at revision 0.
    /// - Parameters:
    ///   - configuration: the simulator's numbers (shown under `/config`).
    ///   - renderer: turns activity content into HTML fragments (`IsletRender` provides one).
    ///   - wall: the caller's current wall instant.
    ///   - clock: the clock to start with; by default a wall clock anchored at `wall`.
    public init(
        configuration: SimulatorConfiguration = SimulatorConfiguration(), renderer: any PresentationRenderer,
        at wall: Instant, clock: SimulationClock? = nil
    ) {
        self.configuration = configuration
        self.renderer = renderer
        self.clock = clock ?? .wall(at: wall)
        self.now = self.clock.simulated(atWall: wall)
        self.writeInitialDocument()
    }

    /// The earliest simulated instant at which the state will change by itself, if any.
    public var nextDeadline: Instant? { self.scheduler.earliest?.at }

    /// The wall instant at which ``advance(to:)`` should next be called, so the server can arm
    /// one timer; `nil` when nothing is scheduled or a paused virtual clock never gets there.
    public var nextWakeUp: Instant? {
        self.nextDeadline.flatMap { self.clock.wall(forSimulated: $0) }
    }

    /// The simulated instant that wall instant `wall` maps to; never before ``now``.
    public func simulatedInstant(atWall wall: Instant) -> Instant {
        max(self.now, self.clock.simulated(atWall: wall))
    }

    /// The value at `pointer` in the state document, or `nil` when nothing is there.
    /// - Complexity: O(log n) for anything inside one entity; a whole collection costs
    ///   O(k log k) and the root O(size of the document).
    public func value(at pointer: JSONPointer) -> JSONValue? {
        let tokens = pointer.tokens
        guard tokens.count >= 2, tokens[0] == DocumentSection.widgets.rawValue else {
            return self.document.value(at: pointer, virtual: self.virtualSections, members: self.virtualMembers)
        }
        guard let widget = self.widgets[tokens[1]] else { return nil }
        let entries = tokens.count == 2 || tokens[2] == "timeline"
        return self.widgetDocument(widget, withEntries: entries)[JSONPointer(tokens: Array(tokens.dropFirst(2)))]
    }

    /// The whole state document as one value.
    /// - Complexity: O(size of the document).
    public var documentValue: JSONValue {
        self.document.value(virtual: self.virtualSections, members: self.virtualMembers)
    }

    /// The canonical bytes of the whole document.
    /// - Complexity: O(size of the document).
    public var documentBytes: [UInt8] {
        self.document.encoded(virtual: self.virtualSections, members: self.virtualMembers)
    }

    /// Streams the canonical bytes of the document in chunks of about `chunkSize` bytes.
    /// - Complexity: O(size of the document).
    public func writeDocument(chunkSize: Int = 64 * 1024, to sink: ([UInt8]) throws -> Void) rethrows {
        try self.document.write(
            chunkSize: chunkSize, virtual: self.virtualSections, members: self.virtualMembers, to: sink)
    }

    /// Every scene's `lockScreen.activities`, built from the device's index when read, every
    /// app's `deliveries`, read from its log, and every stack's `ranking` and `rotations`.
    private var virtualMembers: [VirtualMember] {
        [
            VirtualMember(section: .devices, path: Self.lockScreenListPointer) { self.lockScreenList(of: $0) },
            VirtualMember(section: .apps, path: Self.deliveriesPointer) { .array(self.deliveryLogs[$0] ?? []) },
            VirtualMember(section: .stacks, path: Self.rankingPointer) { self.rankingJSON(of: $0) },
            VirtualMember(section: .stacks, path: Self.rotationsPointer) { self.rotationLog(of: $0) },
        ]
    }

    /// Where an app's delivery log sits in its entry.
    static let deliveriesPointer: JSONPointer = "/deliveries"
    /// Where a stack's rotation log sits in its entry.
    static let rotationsPointer: JSONPointer = "/rotations"

    /// Where a stack's ranking sits in its entry.
    static let rankingPointer: JSONPointer = "/ranking"

    /// SS-4: a stack's ranking, as the document shows it.
    func rankingJSON(of stack: String) -> JSONValue {
        .array(self.stacks[stack]?.shownRanking.map(\.json) ?? [])
    }

    /// SS-5: a stack's last rotations, as the document shows them.
    func rotationLog(of stack: String) -> JSONValue {
        self.stacks[stack]?.rotationLog ?? []
    }

    /// PR-6: a device's Lock Screen activity ids in order, as the document shows them.
    /// - Complexity: O(n).
    func lockScreenList(of device: String) -> JSONValue {
        .array(self.indexes[device].lockScreen.elements.map { .string($0.id) })
    }

    /// `/activities` and `/widgets`, built from the model when read.
    private var virtualSections: [VirtualSection] {
        [
            VirtualSection(section: .activities, keys: { self.activities.keys.sorted() }) { id in
                self.activities[id].map { Self.activityJSON($0, self.configuration) }
            },
            VirtualSection(section: .widgets, keys: { self.widgets.keys.sorted() }) { id in
                self.widgets[id].map { self.widgetDocument($0) }
            },
        ]
    }

    /// Resolves an APNs device token (hex, any case) for the APNs-style ingress: an app's
    /// push-to-start token or an activity's push token.
    /// - Complexity: O(log n).
    public func resolve(token: String) -> TokenResolution? {
        switch self.tokens[token.lowercased()] {
        case .pushToStart(let app, let device, let attributesType)?:
            var resolution = TokenResolution(app: app, activity: nil, activityState: nil)
            resolution.device = device
            resolution.attributesType = attributesType
            return resolution
        case .widgets(let app)?:
            var resolution = TokenResolution(app: app, activity: nil, activityState: nil)
            resolution.isWidgets = true
            return resolution
        case .activity(let id)?:
            guard let activity = self.activities[id] else { return nil }
            return TokenResolution(
                app: activity.app, activity: id, activityState: activity.phase.rawValue,
                dismissedAt: activity.dismissedAt)
        case .retired(let id, let app, let dismissedAt)?:
            return TokenResolution(app: app, activity: id, activityState: "dismissed", dismissedAt: dismissedAt)
        case nil:
            return nil
        }
    }
}

/// What a push token names (for the APNs-style ingress).
public struct TokenResolution: Sendable, Hashable {
    /// The bundle id the token belongs to (checked against `apns-topic`, AP-2).
    public var app: String
    /// The activity of an update token; `nil` for a push-to-start token.
    public var activity: String?
    /// The activity's `activityState`; `"dismissed"` means 410 `Unregistered` (AP-4).
    public var activityState: String?
    /// When the activity was dismissed (the 410's `timestamp`), also once it is forgotten.
    public var dismissedAt: Instant?
    /// A WidgetKit push token (the app's widgets on the device), not a Live Activity token.
    public var isWidgets = false
    /// The device a push-to-start token belongs to (LA-15); `nil` for an app's revision-1
    /// token, which starts on the simulation's default device.
    public var device: String?
    /// The attributes type a push-to-start token was issued for; `nil` for the revision-1 token.
    public var attributesType: String?

    public init(app: String, activity: String?, activityState: String?, dismissedAt: Instant? = nil) {
        self.app = app
        self.activity = activity
        self.activityState = activityState
        self.dismissedAt = dismissedAt
    }

    public var isPushToStart: Bool { self.activity == nil && !self.isWidgets }
    public var isDismissed: Bool { self.activityState == "dismissed" }
}

/// Who a token belongs to.
enum TokenOwner: Sendable, Hashable {
    /// A push-to-start token: of one device and attributes type, or (both `nil`) the app's
    /// revision-1 token.
    case pushToStart(app: String, device: String?, attributesType: String?)
    /// The app's WidgetKit push token (`apns-push-type: widgets`).
    case widgets(app: String)
    case activity(id: String)
    /// The token of a dismissed activity the device has since forgotten: APNs keeps answering
    /// 410 `Unregistered` for it (AP-4), so it is kept, and never handed out again, until its
    /// app is deleted or it is among the oldest past `EngineLimits.retiredTokens`.
    case retired(activity: String, app: String, dismissedAt: Instant)
}

/// Deterministic counters: generated ids, tokens and start order come from here, never from
/// randomness, so replay generates the same ones.
struct Counters: Sendable, Hashable {
    var activityNumber: UInt64 = 0
    var tokenNumber: UInt64 = 0
    var startOrder: UInt64 = 0
    /// Broadcast channels created so far (channel ids derive from it).
    var channelNumber: UInt64 = 0
    /// Mixed into generated push tokens; 0 in the `default` simulation (and in every log written
    /// before simulations existed), a per-world value elsewhere.
    var tokenSalt: UInt64 = 0

    /// Salts are kept to 53 bits so the snapshot writes them as exact JSON numbers.
    static let saltMask: UInt64 = (1 << 53) - 1
}

/// Where a template is stored: app, target (`activity:<type>`, `widget:<kind>`) and slot.
struct TemplateKey: Sendable, Hashable, Comparable {
    var app: String
    var target: String
    var slot: String

    static func < (lhs: TemplateKey, rhs: TemplateKey) -> Bool {
        (lhs.app, lhs.target, lhs.slot) < (rhs.app, rhs.target, rhs.slot)
    }
}

/// The templates of `template.put`, with how many each app has, so rendering an activity or a
/// widget of an app without templates costs one lookup rather than one per slot.
struct TemplateStore: Sendable {
    private(set) var entries: TreeDictionary<TemplateKey, StoredTemplate> = [:]
    private var countByApp: TreeDictionary<String, Int> = [:]

    var keys: TreeDictionary<TemplateKey, StoredTemplate>.Keys { self.entries.keys }

    subscript(key: TemplateKey) -> StoredTemplate? {
        get { self.entries[key] }
        set {
            let old = self.entries[key]
            self.entries[key] = newValue
            let change = (newValue == nil ? 0 : 1) - (old == nil ? 0 : 1)
            guard change != 0 else { return }
            let count = (self.countByApp[key.app] ?? 0) + change
            self.countByApp[key.app] = count == 0 ? nil : count
        }
    }

    /// Whether `app` has any template.
    func hasTemplates(app: String) -> Bool { self.countByApp[app] != nil }

    /// How many templates `app` has.
    func count(app: String) -> Int { self.countByApp[app] ?? 0 }
}

/// A template's source (kept for snapshots) and its compiled form (from the renderer).
struct StoredTemplate: Sendable {
    var source: String
    var compiled: any CompiledTemplate
}
