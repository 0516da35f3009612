internal import HashTreeCollections

/// Rebuilding an engine from a snapshot.
extension Engine {
    /// Restores an engine from ``snapshot()`` output. Templates are compiled again with
    /// `renderer` and the document is rebuilt from the model.
    /// - Throws: `invalid_argument` naming the malformed member.
    /// - Complexity: O(n log n) in the number of entities, plus rendering every activity.
    public init(snapshot: JSONValue, renderer: any PresentationRenderer) throws(APIError) {
        let root = try SnapshotReader(snapshot, at: .root)
        guard try root.string("format") == Self.snapshotFormat else { throw root.fail("format") }
        let clock = try root.nested("clock")
        guard let mode = SimulationClock.Mode(rawValue: try clock.string("mode")) else { throw clock.fail("mode") }
        let configuration: SimulatorConfiguration
        do {
            configuration = try SimulatorConfiguration(json: try root.value("configuration"))
        } catch {
            throw error.nested(under: "/configuration")
        }
        self.init(configuration: configuration, renderer: renderer, at: try root.instant("now"))
        self.clock = SimulationClock(
            mode: mode, rate: try clock.double("rate"), anchorWall: try clock.instant("anchorWall"),
            anchorSimulated: try clock.instant("anchorSimulated"))
        self.rev = try root.count("rev")
        let counters = try root.nested("counters")
        self.counters = Counters(
            activityNumber: try counters.count("activityNumber"), tokenNumber: try counters.count("tokenNumber"),
            startOrder: try counters.count("startOrder"), channelNumber: try counters.optionalCount("channelNumber") ?? 0,
            tokenSalt: try counters.optionalCount("tokenSalt") ?? 0)
        for device in try root.array("devices", restoreDevice) {
            self.devices[device.id] = device
            self.indexes.addDevice(device.id)
        }
        for (app, deliveries) in try root.array("apps", restoreApp) {
            self.apps[app.id] = app
            self.deliveryLogs[app.id] = deliveries
            self.tokens[app.pushToStartToken] = .pushToStart(app: app.id, device: nil, attributesType: nil)
            for (key, typed) in app.pushToStartTokens {
                self.tokens[typed.token] = .pushToStart(app: app.id, device: key.device, attributesType: key.attributesType)
            }
            self.tokens[app.widgetPushToken] = .widgets(app: app.id)
            for channel in app.channels.keys { self.channelApps[channel] = app.id }
        }
        for activity in try root.array("activities", restoreActivity) { try self.restore(activity) }
        // Snapshots written before retired tokens were kept have none.
        if root.object["retiredTokens"] != nil {
            for (token, owner) in try root.array("retiredTokens", restoreRetiredToken) { self.tokens[token] = owner }
        }
        for token in self.retiredTokens.rebuild(from: self.tokens, cap: self.bounds.retiredTokens) {
            self.tokens[token] = nil
        }
        self.relevance = try restoreRelevance(try root.nested("relevance"))
        for member in try root.objectMember("kindMaxScores").members {
            guard let score = member.value.numberValue else { throw root.fail("kindMaxScores") }
            self.kindMaxScores[member.key] = score
        }
        for widget in try root.array("widgets", restoreWidget) { try self.restore(widget) }
        for stack in try root.array("stacks", restoreStack) { try self.restore(stack) }
        try self.restoreTemplates(root)
        let deadlines = try root.array("deadlines") { reader throws(APIError) in
            try restoreDeadline(reader) { id, widget in widget ? self.widgets.slot(of: id) : self.stacks.slot(of: id) }
        }
        self.scheduler = DeadlineScheduler(deadlines: deadlines, nextSequence: try counters.count("nextSequence"))
        try self.restoreProviderKeys(root)
        self.rebuildDocument()
    }

    private mutating func restore(_ activity: Activity) throws(APIError) {
        guard self.apps.contains(activity.app) else {
            throw APIError(.invalidArgument, "snapshot: activity \(activity.id) names a missing app")
        }
        self.activities[activity.id] = activity
        self.apps[activity.app]?.activities.insert(activity.id)
        if let token = activity.pushToken { self.tokens[token] = .activity(id: activity.id) }
        if let channel = activity.channel { self.channelSubscribers[channel, default: []].insert(activity.id) }
        var ignored: [String: SceneChange] = [:]
        self.indexes.update(device: activity.device, from: .absent, to: .init(activity), changes: &ignored)
        if activity.isOngoing { self.ongoing.adjust(device: activity.device, app: activity.app, by: 1) }
    }

    private mutating func restore(_ widget: Widget) throws(APIError) {
        guard self.apps.contains(widget.app) else {
            throw APIError(.invalidArgument, "snapshot: widget \(widget.id) names a missing app")
        }
        self.widgets[widget.id] = widget
        self.apps[widget.app]?.widgets.insert(widget.id)
        self.kindWidgets[widget.kindKey, default: []].insert(widget.id)
    }

    private mutating func restore(_ stack: Stack) throws(APIError) {
        var stack = stack
        let untilNextEntry = self.configuration.relevanceZeroDuration == "untilNextEntry"
        guard stack.ranking.allSatisfy({ $0.position < stack.members.count }) else {
            throw APIError(.invalidArgument, "snapshot: stack \(stack.id) ranks a widget it does not hold")
        }
        guard Set(stack.widgetIDs).count == stack.members.count else {
            throw APIError(.invalidArgument, "snapshot: stack \(stack.id) holds a widget twice")
        }
        for index in stack.members.indices {
            guard let slot = self.widgets.slot(of: stack.members[index].widget), let widget = self.widgets[slot: slot],
                widget.stack == stack.id
            else {
                throw APIError(.invalidArgument, "snapshot: stack \(stack.id) names a widget that is not in it")
            }
            stack.members[index].widgetSlot = slot
            stack.members[index].apply(widget.relevance(untilNextEntry: untilNextEntry))
            stack.members[index].kindMax = self.kindMaxScores[widget.kindKey] ?? 0
            stack.members[index].habit = widget.habit
        }
        stack.oldestRotation = stack.members.compactMap(\.rotationsToTop.first).min()
        self.stacks[stack.id] = stack
        let stackSlot = self.stacks.slot(of: stack.id)!
        for member in stack.members { self.widgets.modify(slot: member.widgetSlot) { $0.stackSlot = stackSlot } }
    }

    private mutating func restoreTemplates(_ root: SnapshotReader) throws(APIError) {
        let entries = try root.array("templates") { reader throws(APIError) in
            (
                TemplateKey(
                    app: try reader.string("app"), target: try reader.string("target"), slot: try reader.string("slot")),
                try reader.string("source")
            )
        }
        for (key, source) in entries {
            let slot = PresentationSlot(rawValue: key.slot)?.slot ?? TemplateSlot(name: key.slot, allowsControls: true)
            self.templates[key] = StoredTemplate(
                source: source, compiled: try self.renderer.compile(source, slot: slot))
        }
    }

    /// Writes every entity into the document (no operations: this is revision `rev` itself).
    private mutating func rebuildDocument() {
        for id in self.activities.keys.sorted() { _ = self.rerender(id) }
        for id in self.devices.keys { self.sceneBase.islands[id] = self.islandPick(on: id) }
        for (id, app) in self.apps { self.document[.apps, id] = self.appJSON(app) }
        var pass = WidgetRenderPass(self)
        for id in self.widgets.keys.sorted() {
            self.widgets.modifyExisting(id) { widget in
                widget.html = pass.html(for: widget)
                widget.needsRender = false
                widget.published = true
            }
        }
        for id in Array(self.stacks.keys) {
            let stack = self.stacks.modifyExisting(id) { stack in
                stack.published = PublishedStack(stack, ranking: stack.shownRanking)
                return stack
            }
            self.document[.stacks, id] = stack?.storedJSON(relevance: self.relevance)
        }
        for (name, value) in self.relevance.entries { self.document[.relevance, name] = value }
        for (id, device) in self.devices { self.document[.devices, id] = self.deviceJSON(device) }
        self.document[.clock, "mode"] = .string(self.clock.mode.rawValue)
        self.document[.clock, "rate"] = .number(self.clock.rate)
    }
}

private func restoreDevice(_ reader: SnapshotReader) throws(APIError) -> Device {
    guard let model = DeviceModel.named(try reader.string("model")) else { throw reader.fail("model") }
    var device = Device(id: try reader.string("id"), model: model)
    guard let appearance = Device.Appearance(rawValue: try reader.string("appearance")) else {
        throw reader.fail("appearance")
    }
    device.appearance = appearance
    device.locked = try reader.bool("locked")
    device.standby = try reader.bool("standby")
    device.nightMode = try reader.bool("nightMode")
    // Snapshots from before revision 2 have neither: the display was lit, StandBy full screen.
    device.alwaysOn = try reader.optionalBool("alwaysOn") ?? false
    if let text = try reader.optionalString("standbyView") {
        guard let view = Device.StandByView(rawValue: text) else { throw reader.fail("standbyView") }
        device.standbyView = view
    }
    device.expansion = try reader.optionalNested("expansion").map(restoreExpansion)
    device.banner = try reader.optionalNested("banner").map(restoreExpansion)
    for id in try reader.strings("alertQueue") { device.alertQueue.append(id) }
    for id in try reader.strings("bannerQueue") { device.bannerQueue.append(id) }
    device.tint = try reader.optionalString("tint")
    // Snapshots from before revision 2 have no version: their devices ran the newest.
    if let text = try reader.optionalString("iosVersion") {
        guard let version = IOSVersion(text) else { throw reader.fail("iosVersion") }
        device.iosVersion = version
    }
    if let name = try reader.optionalString("timeZone") {
        guard let zone = TimeZoneRule.named(name) else { throw reader.fail("timeZone") }
        device.timeZone = zone
    }
    device.homeStacks = try reader.strings("homeStacks")
    device.homeWidgets = try reader.strings("homeWidgets")
    device.lockWidgets = try reader.strings("lockWidgets")
    device.foregroundApp = try reader.optionalString("foregroundApp")
    return device
}

private func restoreExpansion(_ reader: SnapshotReader) throws(APIError) -> Expansion {
    guard let reason = Expansion.Reason(rawValue: try reader.string("reason")) else { throw reader.fail("reason") }
    return Expansion(
        activity: try reader.string("activity"), reason: reason, until: try reader.instant("until"),
        deadline: try reader.count("deadline"))
}

private func restoreApp(_ reader: SnapshotReader) throws(APIError) -> (App, deliveries: [JSONValue]) {
    var app = App(id: try reader.string("id"), pushToStartToken: try reader.string("pushToStartToken"))
    app.name = try reader.string("name")
    let identity = try reader.nested("identity")
    app.identity = App.Identity(
        tint: try identity.optionalString("tint"), background: try identity.optionalString("background"),
        foreground: try identity.optionalString("foreground"), keyline: try identity.optionalString("keyline"))
    app.liveActivitiesEnabled = try reader.bool("liveActivitiesEnabled")
    app.frequentUpdates = try reader.bool("frequentUpdates")
    app.foreground = try reader.bool("foreground")
    app.pushBudget = try restoreBudget(try reader.nested("pushBudget"))
    app.pushToStartBudget = try restoreBudget(try reader.nested("pushToStartBudget"))
    guard let deliveries = try reader.value("deliveries").arrayValue else { throw reader.fail("deliveries") }
    app.throttled = try reader.array("throttled", restorePending)
    app.deferred = try reader.array("deferred", restorePending)
    app.shortcuts = try reader.array("shortcuts", restoreShortcut)
    app.nextShortcutOrder = Int(try reader.count("nextShortcutOrder"))
    if reader.object["attributesTypes"] != nil { app.attributesTypes = try reader.strings("attributesTypes") }
    if reader.object["pushToStartTokens"] != nil {
        for (key, typed) in try reader.array("pushToStartTokens", restorePushToStartToken) {
            app.pushToStartTokens[key] = typed
        }
    }
    if reader.object["channels"] != nil {
        for channel in try reader.array("channels", { channel throws(APIError) in try restoreChannel(channel, app: app.id) }) {
            app.channels[channel.id] = channel
        }
    }
    return (app, deliveries)
}

private func restoreBudget(_ reader: SnapshotReader) throws(APIError) -> Budget {
    Budget(
        windowStart: try reader.optionalInstant("windowStart"), used: Int(try reader.count("used")),
        resetDeadline: try reader.optionalCount("resetDeadline"))
}

private func restorePending(_ reader: SnapshotReader) throws(APIError) -> PendingDelivery {
    PendingDelivery(
        command: try reader.value("command"), receivedAt: try reader.instant("receivedAt"),
        deadline: try reader.count("deadline"))
}

private func restorePushToStartToken(_ reader: SnapshotReader) throws(APIError) -> (PushToStartKey, PushToStartToken) {
    let key = PushToStartKey(device: try reader.string("device"), attributesType: try reader.string("attributesType"))
    return (key, PushToStartToken(token: try reader.string("token"), generation: Int(try reader.count("generation"))))
}

private func restoreRetiredToken(_ reader: SnapshotReader) throws(APIError) -> (String, TokenOwner) {
    let owner = TokenOwner.retired(
        activity: try reader.string("activity"), app: try reader.string("app"),
        dismissedAt: try reader.instant("dismissedAt"))
    return (try reader.string("token"), owner)
}

private func restoreChannel(_ reader: SnapshotReader, app: String) throws(APIError) -> Channel {
    guard let policy = Channel.StoragePolicy(rawValue: Int(try reader.count("storagePolicy"))) else {
        throw reader.fail("storagePolicy")
    }
    var channel = Channel(
        id: try reader.string("id"), app: app, storagePolicy: policy, createdAt: try reader.instant("createdAt"))
    channel.broadcasts = Int(try reader.count("broadcasts"))
    if let last = try reader.optionalNested("last") {
        channel.last = LastBroadcast(
            command: try last.value("command"), event: try last.string("event"), at: try last.instant("at"),
            priority: Int(try last.count("priority")), apnsId: try last.optionalString("apnsId"),
            storedUntil: try last.optionalInstant("storedUntil"))
    }
    return channel
}
