internal import HashTreeCollections

/// Dispatching one command, and the device and app commands.
extension Engine {
    /// Applies one command at `now`; throws without side effects the caller keeps (the batch
    /// runs on a copy of the engine).
    mutating func execute(_ command: Command, wall: Instant) throws(APIError) -> JSONValue {
        switch command {
        case .deviceUpsert(let upsert): return try self.upsertDevice(upsert)
        case .deviceDelete(let id): return try self.deleteDevice(id)
        case .appUpsert(let upsert): return try self.upsertApp(upsert)
        case .appDelete(let id): return try self.deleteApp(id)
        case .appRotatePushToStartToken(let rotation): return try self.rotatePushToStartToken(rotation)
        case .activityRequest(let request): return try self.requestActivity(request)
        case .activityUpdate(let update): return try self.receiveUpdate(update)
        case .activityEnd(let end): return try self.receiveEnd(end)
        case .activityDismiss(let id): return try self.personDismisses(id)
        case .islandPress(let press): return try self.press(press)
        case .standbyTap(let device): return try self.tapStandBy(device)
        case .clockSet(let set): return try self.setClock(set, wall: wall)
        case .clockAdvance(let advance): return try self.advanceClock(advance, wall: wall)
        case .configSet(let set): return self.setConfiguration(set)
        case .templatePut(let put): return try self.putTemplate(put)
        case .widgetUpsert(let upsert): return try self.upsertWidget(upsert)
        case .widgetSetTimeline(let set): return try self.setTimeline(set)
        case .widgetReload(let request): return try self.reloadWidgets(request)
        case .widgetInteract(let interaction): return try self.interact(interaction)
        case .widgetDelete(let id): return try self.deleteWidget(id)
        case .stackUpsert(let upsert): return try self.upsertStack(upsert)
        case .stackDelete(let id): return try self.deleteStack(id)
        case .relevanceSetWeights(let set): return try self.setWeights(set)
        case .shortcutUpsert(let upsert): return try self.upsertShortcut(upsert)
        case .shortcutRun(let run): return try self.runShortcut(run)
        case .shortcutDelete(let app, let id): return try self.deleteShortcut(app: app, id: id)
        case .channelCreate(let create): return try self.createChannel(create)
        case .channelDelete(let delete): return try self.deleteChannel(delete)
        case .channelBroadcast(let broadcast): return try self.receiveBroadcast(broadcast)
        case .widgetPush(let push): return try self.receiveWidgetPush(push)
        case .pushIgnore(let push): return try self.recordIgnoredPush(push)
        case .apnsKeyPut(let put): return try self.putProviderKey(put)
        case .apnsKeyDelete(let keyID): return try self.deleteProviderKey(keyID)
        }
    }

    /// A device runs an iOS its model shipped with or newer, and uses only what that version
    /// has: StandBy (17) and a tinted Home Screen (18) are refused on older versions.
    private static func checkSoftware(_ device: Device, _ upsert: DeviceUpsert) throws(APIError) {
        let versionField: JSONPointer = "/iosVersion"
        if device.iosVersion < device.model.firstIOS {
            throw APIError(
                .invalidArgument,
                "\(device.model.id) shipped with iOS \(device.model.firstIOS); iOS \(device.iosVersion) cannot run on it",
                field: upsert.iosVersion == nil ? "/model" : versionField)
        }
        if device.standby {
            try device.require(.standby, field: upsert.iosVersion == nil ? "/standby" : versionField)
        }
        if device.tint != nil {
            try device.require(.accentedWidgets, field: upsert.iosVersion == nil ? "/tint" : versionField)
        }
    }

    private mutating func upsertDevice(_ upsert: DeviceUpsert) throws(APIError) -> JSONValue {
        let existing = self.devices[upsert.id]
        var device = existing ?? Device(id: upsert.id, model: DeviceModel.named(DeviceModel.defaultID)!)
        if let id = upsert.model, let model = DeviceModel.named(id), model != device.model {
            device.model = model
            // A device that changes model starts its temporary presentations afresh.
            device.expansion = nil
            device.banner = nil
            device.alertQueue = AlertQueue()
            device.bannerQueue = AlertQueue()
        }
        if let appearance = upsert.appearance.flatMap(Device.Appearance.init) { device.appearance = appearance }
        if let locked = upsert.locked { device.locked = locked }
        if let standby = upsert.standby { device.standby = standby }
        if let nightMode = upsert.nightMode { device.nightMode = nightMode }
        if let alwaysOn = upsert.alwaysOn { device.alwaysOn = alwaysOn }
        if let view = upsert.standbyView.flatMap(Device.StandByView.init) { device.standbyView = view }
        if let tint = upsert.tint { device.tint = tint.isEmpty ? nil : tint }
        if let version = upsert.iosVersion { device.iosVersion = version }
        let rezoned = upsert.timeZone.map { $0 != device.timeZone } ?? false
        if let zone = upsert.timeZone { device.timeZone = zone }
        try Self.checkSoftware(device, upsert)
        try Self.checkDisplay(device, upsert)
        if existing == nil, self.devices.count >= EngineLimits.devices {
            throw EngineLimits.refuse("devices", EngineLimits.devices, name: "devices", field: "/id")
        }
        if let app = upsert.foregroundApp, !app.isEmpty, !self.apps.contains(app) {
            throw APIError(.invalidArgument, "no app \"\(app)\" to bring to the foreground", field: "/foregroundApp")
        }
        self.devices[upsert.id] = device
        self.changes.devices.insert(upsert.id)
        if existing == nil {
            self.indexes.addDevice(upsert.id)
            self.changes.scenes[upsert.id, default: SceneChange()].island = true
        }
        if let app = upsert.foregroundApp { self.bringToForeground(app.isEmpty ? nil : app, on: upsert.id) }
        if existing?.iosVersion != device.iosVersion { self.syncPushToStartTokens(onDevice: upsert.id) }
        // SS-7: the device's hours moved; its stacks re-rank on the new grid.
        if rezoned { for stack in device.homeStacks { self.requestEvaluation(of: stack) } }
        // WK-1, WK-8: sizes follow the model; rendering modes follow the tint and StandBy.
        if let existing,
            existing.model != device.model || existing.tint != device.tint
                || existing.standby != device.standby || existing.nightMode != device.nightMode
        {
            let resized = existing.model != device.model
            for id in self.widgetsShown(on: device) {
                self.touchWidget(id, resized ? [.presentation, .size] : .presentation, render: resized)
            }
        }
        return [:]
    }

    /// The phone is gone: its activities end and are dismissed at once (reason `deviceDeleted`),
    /// its push-to-start tokens stop resolving, its widgets leave their places.
    /// - Complexity: O(activities) to find the device's own.
    private mutating func deleteDevice(_ id: String) throws(APIError) -> JSONValue {
        guard self.devices[id] != nil else {
            throw APIError(.notFound, "no device \"\(id)\"", field: "/id")
        }
        let own = self.activities.keys.filter { self.activities[$0]?.device == id }.sorted()
        for activity in own {
            switch self.activities[activity]?.phase {
            case .pending?, .active?, .stale?: self.endActivity(activity, reason: "deviceDeleted", policy: .immediate)
            case .ended?: self.dismissActivity(activity)
            default: break
            }
        }
        self.unplaceAll(from: id)
        self.devices[id] = nil
        self.indexes.removeDevice(id)
        self.sceneBase.islands[id] = nil
        self.changes.devices.insert(id)
        self.syncPushToStartTokens(onDevice: id)
        return [:]
    }

    /// LA-16: `app` (or none) is on the screen of `deviceID`: its activities leave that island
    /// and its banners there, at once; the previous foreground app's come back.
    mutating func bringToForeground(_ app: String?, on deviceID: String) {
        guard self.devices[deviceID] != nil, self.devices[deviceID]?.foregroundApp != app else { return }
        self.devices[deviceID]?.foregroundApp = app
        self.changes.devices.insert(deviceID)
        self.changes.scenes[deviceID, default: SceneChange()].island = true
        if let app { self.collapsePresentations(ofApp: app, on: deviceID) }
    }

    private mutating func upsertApp(_ upsert: AppUpsert) throws(APIError) -> JSONValue {
        if !self.apps.contains(upsert.id), self.apps.count >= EngineLimits.apps {
            throw EngineLimits.refuse("apps", EngineLimits.apps, name: "apps", field: "/id")
        }
        var app =
            self.apps[upsert.id]
            ?? App(id: upsert.id, pushToStartToken: self.newToken(for: "push-to-start:" + upsert.id))
        let isNew = !self.apps.contains(upsert.id)
        let before = app
        if let name = upsert.name { app.name = name }
        if let colors = upsert.identity {
            app.identity = App.Identity(
                tint: colors["tint"], background: colors["background"], foreground: colors["foreground"],
                keyline: colors["keyline"])
        }
        if let enabled = upsert.liveActivitiesEnabled { app.liveActivitiesEnabled = enabled }
        if let foreground = upsert.foreground { app.foreground = foreground }
        if let types = upsert.attributesTypes { app.attributesTypes = types }
        let frequentChanged = upsert.frequentUpdates.map { $0 != app.frequentUpdates } ?? false
        if let frequent = upsert.frequentUpdates { app.frequentUpdates = frequent }
        self.apps[upsert.id] = app
        if isNew {
            self.tokens[app.pushToStartToken] = .pushToStart(app: app.id, device: nil, attributesType: nil)
            self.tokens[app.widgetPushToken] = .widgets(app: app.id)
        }
        if before.attributesTypes != app.attributesTypes { self.syncPushToStartTokens(of: app.id) }
        self.changes.apps.insert(upsert.id)
        if !isNew, frequentChanged { self.endOngoingActivities(of: app.id, reason: "frequentUpdates") }
        if !isNew, before.name != app.name || before.identity != app.identity {
            for id in app.activities { self.changes.touchActivity(id, published: self.activities[id], render: true) }
            for id in app.widgets.sorted() { self.touchWidget(id, [], render: true) }
            self.changes.allDevices = true
        }
        return ["pushToStartToken": .string(app.pushToStartToken), "widgetPushToken": .string(app.widgetPushToken)]
    }

    /// LA-13: turning `frequentUpdates` off or on ends all the app's ongoing activities.
    mutating func endOngoingActivities(of appID: String, reason: String) {
        guard let app = self.apps[appID] else { return }
        for id in app.activities.sorted() where self.activities[id]?.isOngoing == true {
            self.endActivity(id, reason: reason, policy: .default)
        }
    }

    private mutating func deleteApp(_ id: String) throws(APIError) -> JSONValue {
        guard let app = self.apps[id] else { throw APIError(.notFound, "no app \"\(id)\"", field: "/id") }
        for activity in app.activities.sorted() { self.removeActivity(activity, retiring: false) }
        for widget in app.widgets.sorted() { self.removeWidget(widget) }
        for device in self.devices.keys.sorted() where self.devices[device]?.foregroundApp == id {
            self.bringToForeground(nil, on: device)
        }
        for typed in app.pushToStartTokens.values { self.tokens[typed.token] = nil }
        self.tokens[app.pushToStartToken] = nil
        self.tokens[app.widgetPushToken] = nil
        for channel in app.channels.keys {
            self.channelApps[channel] = nil
            self.noteChange(ofChannel: channel, app: id)
        }
        self.forgetRetiredTokens(of: id)
        for key in self.templates.keys where key.app == id { self.templates[key] = nil }
        self.apps[id] = nil
        self.noteLogChange(of: id)
        self.deliveryLogs[id] = nil
        self.changes.apps.insert(id)
        return [:]
    }

    /// A new hex token (32 bytes, like APNs tokens), derived from a counter: deterministic,
    /// unique within the engine.
    mutating func newToken(for purpose: String) -> String {
        while true {
            self.counters.tokenNumber += 1
            let token = hexToken(
                seed: stableHash(purpose) ^ self.counters.tokenNumber ^ (self.counters.tokenSalt &* 0x9E37_79B9_7F4A_7C15))
            if self.tokens[token] == nil { return token }
        }
    }
}

/// FNV-1a of the UTF-8 bytes: a hash that is the same in every process (Swift's `Hasher` is not).
func stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return hash
}

/// 64 hex digits from four SplitMix64 steps of `seed`.
func hexToken(seed: UInt64) -> String {
    var state = seed
    var text = ""
    text.reserveCapacity(64)
    for _ in 0..<4 {
        state = state &+ 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let hex = String(z, radix: 16)
        text += String(repeating: "0", count: 16 - hex.count) + hex
    }
    return text
}
