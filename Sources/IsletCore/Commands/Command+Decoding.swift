/// Decoding and validating command objects.
extension Command {
    /// Reads one command object.
    /// - Throws: `invalid_argument` with `field` relative to the command (`/content/state`).
    public init(json: JSONValue) throws(APIError) {
        let reader = try FieldReader(json)
        let type = try reader.required("type", reader.string)
        switch type {
        case "device.upsert": self = .deviceUpsert(try DeviceUpsert(reader))
        case "device.delete": self = .deviceDelete(id: try reader.deleteID())
        case "app.upsert": self = .appUpsert(try AppUpsert(reader))
        case "app.delete": self = .appDelete(id: try reader.deleteID())
        case "app.rotatePushToStartToken": self = .appRotatePushToStartToken(try PushToStartRotation(reader))
        case "activity.request": self = .activityRequest(try ActivityRequest(reader))
        case "activity.update": self = .activityUpdate(try ActivityUpdate(reader))
        case "activity.end": self = .activityEnd(try ActivityEnd(reader))
        case "activity.dismiss": self = .activityDismiss(id: try reader.deleteID())
        case "island.press": self = .islandPress(try IslandPress(reader))
        case "standby.tap":
            try reader.rejectUnknown(["type", "device"])
            self = .standbyTap(device: try reader.required("device", reader.identifier))
        case "clock.set": self = .clockSet(try ClockSet(reader))
        case "clock.advance": self = .clockAdvance(try ClockAdvance(reader))
        case "config.set": self = .configSet(try ConfigSet(reader))
        case "template.put": self = .templatePut(try TemplatePut(reader))
        case "widget.upsert": self = .widgetUpsert(try WidgetUpsert(reader))
        case "widget.setTimeline": self = .widgetSetTimeline(try WidgetSetTimeline(reader))
        case "widget.reload": self = .widgetReload(try WidgetReloadRequest(reader))
        case "widget.interact": self = .widgetInteract(try WidgetInteract(reader))
        case "widget.delete": self = .widgetDelete(id: try reader.deleteID())
        case "stack.upsert": self = .stackUpsert(try StackUpsert(reader))
        case "stack.delete": self = .stackDelete(id: try reader.deleteID())
        case "relevance.setWeights": self = .relevanceSetWeights(try RelevanceSetWeights(reader))
        case "shortcut.upsert": self = .shortcutUpsert(try ShortcutUpsert(reader))
        case "shortcut.run": self = .shortcutRun(try ShortcutRun(reader))
        case "channel.create": self = .channelCreate(try ChannelCreate(reader))
        case "channel.delete": self = .channelDelete(try ChannelDelete(reader))
        case "channel.broadcast": self = .channelBroadcast(try ChannelBroadcast(reader))
        case "widget.push": self = .widgetPush(try WidgetPush(reader))
        case "push.ignore": self = .pushIgnore(try IgnoredPush(reader))
        case "apns.keyPut": self = .apnsKeyPut(try APNsKeyPut(reader))
        case "apns.keyDelete": self = .apnsKeyDelete(keyID: try reader.keyDeleteID())
        case "shortcut.delete":
            try reader.rejectUnknown(["type", "app", "id"])
            self = .shortcutDelete(
                app: try reader.required("app", reader.identifier), id: try reader.required("id", reader.identifier))
        default:
            throw reader.fail("type", "unknown command type \"\(type)\"")
        }
    }
}

extension FieldReader {
    /// The `id` of a command whose only field is `id`.
    func deleteID() throws(APIError) -> String {
        try self.rejectUnknown(["type", "id"])
        return try self.required("id", self.identifier)
    }
}

extension DeviceUpsert {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown([
            "type", "id", "model", "appearance", "locked", "standby", "nightMode", "alwaysOn", "standbyView", "tint",
            "iosVersion", "timeZone", "foregroundApp",
        ])
        self.id = try reader.required("id", reader.identifier)
        self.model = try reader.string("model")
        if let model = self.model, DeviceModel.named(model) == nil {
            let names = DeviceModel.catalog.map(\.id).joined(separator: ", ")
            throw reader.fail("model", "unknown model \"\(model)\"; the catalog has \(names)")
        }
        self.appearance = try reader.choice("appearance", Device.Appearance.self)?.rawValue
        self.locked = try reader.bool("locked")
        self.standby = try reader.bool("standby")
        self.nightMode = try reader.bool("nightMode")
        self.alwaysOn = try reader.bool("alwaysOn")
        self.standbyView = try reader.choice("standbyView", Device.StandByView.self)?.rawValue
        self.tint = try reader.string("tint", maxLength: 64)
        if reader.object["foregroundApp"] == .null {
            self.foregroundApp = ""
        } else if let app = try reader.string("foregroundApp", maxLength: 128) {
            guard app.isEmpty || isIdentifier(app) else { throw reader.fail("foregroundApp", "expected an app id, or \"\" to clear it") }
            self.foregroundApp = app
        }
        if let text = try reader.string("iosVersion", maxLength: 16) {
            guard let version = IOSVersion(text), version <= .newest else {
                throw reader.fail("iosVersion", "expected an iOS version such as \"17.2\", at most \(IOSVersion.newest)")
            }
            self.iosVersion = version
        }
        if let name = try reader.string("timeZone", maxLength: 64) {
            guard let zone = TimeZoneRule.named(name) else {
                throw reader.fail("timeZone", "expected an IANA time zone such as \"Europe/Paris\" or \"UTC\"")
            }
            self.timeZone = zone
        }
        if let tint = self.tint, !tint.isEmpty, !isCSSColor(tint) {
            throw reader.fail("tint", "expected a CSS color, or \"\" to clear the tint")
        }
    }
}

extension AppUpsert {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown([
            "type", "id", "name", "identity", "liveActivitiesEnabled", "frequentUpdates", "foreground",
            "attributesTypes",
        ])
        self.id = try reader.required("id", reader.identifier)
        self.name = try reader.string("name", maxLength: 256)
        if let identity = try reader.nested("identity") {
            let names = ["background", "foreground", "keyline", "tint"]
            try identity.rejectUnknown(names)
            var colors: [String: String] = [:]
            for name in names {
                guard let color = try identity.string(name, maxLength: 64) else { continue }
                guard isCSSColor(color) else { throw identity.fail(name, "expected a CSS color, got \"\(color)\"") }
                colors[name] = color
            }
            self.identity = colors
        }
        self.liveActivitiesEnabled = try reader.bool("liveActivitiesEnabled")
        self.frequentUpdates = try reader.bool("frequentUpdates")
        self.foreground = try reader.bool("foreground")
        if let types = try reader.strings("attributesTypes", maxCount: 32, maxLength: 128) {
            for (position, type) in types.enumerated() where !isIdentifier(type) {
                throw APIError(
                    .invalidArgument, "an attributes type is an identifier, got \"\(type)\"",
                    field: reader.field("attributesTypes").appending(String(position)))
            }
            guard Set(types).count == types.count else { throw reader.fail("attributesTypes", "a type is listed twice") }
            self.attributesTypes = types
        }
    }
}

extension PushToStartRotation {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "app", "attributesType", "device"])
        self.app = try reader.required("app", reader.identifier)
        self.attributesType = try reader.required("attributesType", reader.identifier)
        self.device = try reader.identifier("device")
    }
}

/// A conservative check for CSS colors (`#rgb`, `#rrggbbaa`, names, `rgb(…)`, `hsl(…)`):
/// letters, digits and `# ( ) , . % /` and spaces only, so nothing can break out of a style.
func isCSSColor(_ text: String) -> Bool {
    !text.isEmpty
        && text.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isASCIIHexDigit || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                || "#(),.% /".unicodeScalars.contains(scalar) || ("0"..."9").contains(scalar)
        }
}

extension IslandPress {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "device", "activity"])
        self.device = try reader.required("device", reader.identifier)
        self.activity = try reader.identifier("activity")
    }
}

extension ClockSet {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "mode", "now", "rate"])
        self.mode = try reader.choice("mode", SimulationClock.Mode.self)
        self.now = try reader.instant("now")
        self.rate = try reader.number("rate")
        if let rate = self.rate, rate < 0 || rate > 1_000_000 {
            throw reader.fail("rate", "a rate is from 0 (paused) to 1000000 simulated seconds per second")
        }
    }
}

extension ClockAdvance {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "seconds", "to"])
        self.seconds = try reader.number("seconds")
        self.to = try reader.instant("to")
        if let seconds = self.seconds, seconds < 0 || seconds > 366 * 86_400 * 10 {
            throw reader.fail("seconds", "expected seconds from 0 to ten years")
        }
        guard (self.seconds == nil) != (self.to == nil) else {
            throw reader.fail(self.seconds == nil ? "seconds" : "to", "give exactly one of \"seconds\" and \"to\"")
        }
    }
}

extension ConfigSet {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "values"])
        self.values = try reader.required("values", reader.object)
        for member in self.values.members {
            guard let field = SimulatorConfiguration.field(named: member.key) else {
                throw APIError(
                    .invalidArgument, "unknown configuration name \"\(member.key)\"",
                    field: reader.field("values").appending(member.key))
            }
            var probe = SimulatorConfiguration()
            if let problem = field.write(&probe, member.value) {
                throw APIError(.invalidArgument, problem, field: reader.field("values").appending(member.key))
            }
        }
    }
}

extension TemplatePut {
    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "app", "target", "slot", "html"])
        self.app = try reader.required("app", reader.identifier)
        self.target = try reader.required("target") { key throws(APIError) in try reader.string(key, maxLength: 140) }
        self.slot = try reader.required("slot") { key throws(APIError) in try reader.string(key, maxLength: 64) }
        self.html = try reader.required("html") { key throws(APIError) in try reader.string(key, maxLength: 65_536) }
        let parts = self.target.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, parts[0] == "activity" || parts[0] == "widget", isIdentifier(parts[1]) else {
            throw reader.fail("target", "expected \"activity:<attributesType>\" or \"widget:<kind>\"")
        }
        if parts[0] == "activity", PresentationSlot(rawValue: self.slot) == nil {
            let names = PresentationSlot.allCases.map(\.rawValue).joined(separator: ", ")
            throw reader.fail("slot", "an activity slot is one of \(names)")
        }
        if parts[0] == "widget", self.slot != "html" {
            throw reader.fail("slot", "a widget template has the one slot \"html\"")
        }
    }
}
