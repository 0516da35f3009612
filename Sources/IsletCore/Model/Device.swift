/// A simulated iPhone: its model, its switches, and what its island and banner are doing.
struct Device: Sendable, Hashable {
    enum Appearance: String, Sendable, Hashable, CaseIterable {
        case light, dark
    }

    /// PR-11: how StandBy shows the top Live Activity.
    enum StandByView: String, Sendable, Hashable, CaseIterable {
        /// The Lock Screen presentation at 2×, filling the display (the default, and revision 1's only view).
        case fullScreen
        /// The minimal presentation at the top, beside the widgets; a tap goes full screen.
        case minimal
    }

    var id: String
    var model: DeviceModel
    var appearance = Appearance.light
    var locked = false
    var standby = false
    var nightMode = false
    /// LA-16: the app on the screen; its activities leave this device's island and banners.
    var foregroundApp: String?
    /// LA-17: the display has dimmed to Always-On (only on models with the display; it shows
    /// while the device is locked and not in StandBy).
    var alwaysOn = false
    /// PR-11: StandBy's view of the top Live Activity.
    var standbyView = StandByView.fullScreen
    /// The iOS version it runs (default the newest); features gate on it (``Feature``).
    var iosVersion = IOSVersion.newest
    /// SS-7: the device's time zone (default UTC): its habits, hours and clock are local.
    var timeZone = TimeZoneRule.utc
    /// The island's current expansion (LA-10 alert or PR-4 press), with its collapse deadline.
    var expansion: Expansion?
    /// Activities whose alerts wait for the island (PR-4: one at a time).
    var alertQueue = AlertQueue()
    /// The current banner on a device without a Dynamic Island (LA-10).
    var banner: Expansion?
    /// Activities whose alerts wait for the banner.
    var bannerQueue = AlertQueue()
    /// WK-8: the Home Screen tint (iOS 18); widgets there render `accented` when set.
    var tint: String?
    /// The Home Screen's stacks, in the order they were placed.
    var homeStacks: [String] = []
    /// System-family widgets placed on the Home Screen outside any stack, in placement order.
    var homeWidgets: [String] = []
    /// WK-1: accessory widgets on the Lock Screen, in placement order.
    var lockWidgets: [String] = []

    init(id: String, model: DeviceModel) {
        self.id = id
        self.model = model
    }

    /// LA-17: the screen shows the Always-On Lock Screen: the switch is on, the device is locked,
    /// and StandBy (a scene of its own, with its own Night Mode) is not showing. LA-14: no
    /// animations then.
    var showsAlwaysOn: Bool { self.alwaysOn && self.locked && !self.standby }

    /// LA-17: the Lock Screen's effective appearance: Always-On renders it as in Dark Mode.
    var lockScreenAppearance: Appearance { self.showsAlwaysOn ? .dark : self.appearance }

    func supports(_ feature: Feature) -> Bool { self.iosVersion >= feature.introduced }

    /// Refuses what this device's iOS version cannot do, as iOS does (`unsupported`).
    func require(_ feature: Feature, field: JSONPointer) throws(APIError) {
        guard !self.supports(feature) else { return }
        throw APIError(
            .conflict,
            "unsupported: \(self.id) runs iOS \(self.iosVersion); \(feature.name) needs iOS \(feature.introduced)",
            field: field)
    }
}

/// A temporary presentation: the expanded island or a banner, until a deadline.
struct Expansion: Sendable, Hashable {
    enum Reason: String, Sendable, Hashable {
        case alert, press
    }

    var activity: String
    var reason: Reason
    var until: Instant
    /// The sequence of the deadline that ends it.
    var deadline: UInt64
}

/// A first-in-first-out queue of activity ids, each at most once.
///
/// A newer alert of an activity already waiting keeps its place: the alert content lives on
/// the activity, so the queue only needs to know whose turn it is.
struct AlertQueue: Sendable, Hashable {
    private var items: [String] = []
    private var head = 0
    private var members: Set<String> = []

    var isEmpty: Bool { self.head == self.items.count }

    /// The waiting ids, first first.
    var elements: ArraySlice<String> { self.items[self.head...] }

    mutating func append(_ id: String) {
        guard self.members.insert(id).inserted else { return }
        self.items.append(id)
    }

    mutating func popFirst() -> String? {
        guard self.head < self.items.count else { return nil }
        let id = self.items[self.head]
        self.head += 1
        self.members.remove(id)
        if self.head > 64, self.head * 2 > self.items.count {
            self.items.removeFirst(self.head)
            self.head = 0
        }
        return id
    }

    static func == (lhs: AlertQueue, rhs: AlertQueue) -> Bool { lhs.elements.elementsEqual(rhs.elements) }

    func hash(into hasher: inout Hasher) {
        for id in self.elements { hasher.combine(id) }
    }
}
