/// Every change to the simulation, as a value (API.md "Commands").
///
/// Cases mirror the wire names (`activity.request` → `.activityRequest`). Commands are decoded
/// from JSON with ``init(json:)``, which validates every field and names the offending one as a
/// JSON Pointer relative to the command object.
public enum Command: Sendable, Hashable {
    case deviceUpsert(DeviceUpsert)
    case deviceDelete(id: String)
    case appUpsert(AppUpsert)
    case appDelete(id: String)
    case appRotatePushToStartToken(PushToStartRotation)
    case activityRequest(ActivityRequest)
    case activityUpdate(ActivityUpdate)
    case activityEnd(ActivityEnd)
    case activityDismiss(id: String)
    case islandPress(IslandPress)
    /// PR-11: a tap on StandBy's minimal presentation (it goes full screen).
    case standbyTap(device: String)
    case clockSet(ClockSet)
    case clockAdvance(ClockAdvance)
    case configSet(ConfigSet)
    case templatePut(TemplatePut)
    case widgetUpsert(WidgetUpsert)
    case widgetSetTimeline(WidgetSetTimeline)
    case widgetReload(WidgetReloadRequest)
    case widgetInteract(WidgetInteract)
    case widgetDelete(id: String)
    case stackUpsert(StackUpsert)
    case stackDelete(id: String)
    case relevanceSetWeights(RelevanceSetWeights)
    case shortcutUpsert(ShortcutUpsert)
    case shortcutRun(ShortcutRun)
    case shortcutDelete(app: String, id: String)
    case channelCreate(ChannelCreate)
    case channelDelete(ChannelDelete)
    case channelBroadcast(ChannelBroadcast)
    case widgetPush(WidgetPush)
    case pushIgnore(IgnoredPush)
    case apnsKeyPut(APNsKeyPut)
    case apnsKeyDelete(keyID: String)

    /// The wire names this engine accepts.
    public static let supportedTypes: [String] = [
        "activity.dismiss", "activity.end", "activity.request", "activity.update", "app.delete",
        "app.rotatePushToStartToken", "app.upsert", "apns.keyDelete", "apns.keyPut", "push.ignore",
        "channel.broadcast", "channel.create", "channel.delete", "clock.advance", "clock.set", "config.set", "device.delete", "device.upsert", "island.press",
        "relevance.setWeights", "shortcut.delete", "shortcut.run", "shortcut.upsert", "stack.delete", "stack.upsert",
        "standby.tap",
        "template.put", "widget.delete", "widget.interact", "widget.push", "widget.reload", "widget.setTimeline", "widget.upsert",
    ]
}

/// `device.upsert`: creates a device or changes the fields given.
public struct DeviceUpsert: Sendable, Hashable {
    public var id: String
    public var model: String?
    public var appearance: String?
    public var locked: Bool?
    public var standby: Bool?
    public var nightMode: Bool?
    /// LA-17: the display dimmed to Always-On (refused on a model without the display).
    public var alwaysOn: Bool?
    /// PR-11: `fullScreen` or `minimal` (a ``Device/StandByView`` raw value).
    public var standbyView: String?
    /// WK-8 extension: the Home Screen tint (a CSS color; `""` clears it).
    public var tint: String?
    /// The iOS version the device runs (default the newest the catalog knows).
    public var iosVersion: IOSVersion?
    /// SS-7: the device's IANA time zone.
    public var timeZone: TimeZoneRule?
    /// LA-16: the app on the screen; `""` (or `null`) clears it.
    public var foregroundApp: String?
}

/// `app.upsert`: creates an app or changes the fields given.
public struct AppUpsert: Sendable, Hashable {
    public var id: String
    public var name: String?
    public var identity: [String: String]?
    public var liveActivitiesEnabled: Bool?
    public var frequentUpdates: Bool?
    /// Revision 1's foreground flag: lets the app start activities (LA-3), hides nothing.
    public var foreground: Bool?
    /// The app's `ActivityAttributes` types, each with a push-to-start token per device.
    public var attributesTypes: [String]?
}

/// `app.rotatePushToStartToken`: a new push-to-start token for one type on one device.
public struct PushToStartRotation: Sendable, Hashable {
    public var app: String
    public var attributesType: String
    /// `nil`: the simulation's default device.
    public var device: String?
}

/// An activity's dynamic content as a command carries it (LA-1).
public struct ContentInput: Sendable, Hashable {
    /// `nil` only in a push update that omitted `content-state` (AP-6: dropped on device).
    public var state: JSONObject?
    public var staleDate: Instant?
    public var relevanceScore: Double?
}

/// An alert configuration (LA-10) as APNs' `alert` dictionary carries it (AP-8): `title`,
/// `subtitle` and `body` are strings or `{"loc-key", "loc-args"}`; also the standard
/// localisation keys (`title-loc-key`, `title-loc-args`, `subtitle-loc-key`,
/// `subtitle-loc-args`, `loc-key`, `loc-args`), `launch-image`, and `sound` (a file name,
/// `"default"`, or `{"critical", "name", "volume"}`).
public struct AlertInput: Sendable, Hashable {
    /// The checked members; `title`, `body` and `sound` are always present (null when not given).
    public var fields: JSONObject
}

/// How a start, update or end reached the device: the extension for push-shaped input.
///
/// The APNs-style ingress sets `source: push`, the priority and `apnsId`; the REST API leaves
/// the defaults. Only pushes draw budgets (LA-11, LA-12) and get device-style silent outcomes.
public struct DeliveryInput: Sendable, Hashable {
    public enum Source: String, Sendable, Hashable, CaseIterable {
        case api, push
    }

    public var source: Source = .api
    /// APNs priority: 10 (immediate, budgeted) or 5 (opportunistic, never budgeted).
    public var priority: Int = 10
    public var apnsId: String?

    public init(source: Source = .api, priority: Int = 10, apnsId: String? = nil) {
        self.source = source
        self.priority = priority
        self.apnsId = apnsId
    }
}

/// `activity.request`.
public struct ActivityRequest: Sendable, Hashable {
    public var id: String?
    public var app: String
    /// LA-15: the device it runs on; `nil`: the simulation's default device.
    public var device: String?
    public var attributesType: String
    public var attributes: JSONObject
    public var content: ContentInput
    /// `pushType: "token"` (or APNs `input-push-token: 1`) gives the activity a push token.
    public var wantsPushToken: Bool
    /// `pushType: {"channel": id}` (or APNs `input-push-channel`) subscribes it to a broadcast channel.
    public var channel: String?
    public var alert: AlertInput?
    public var source: String
    /// Extension: a scheduled start (`pending` until then; needs an alert).
    public var start: Instant?
    /// Extension: the APNs `timestamp` of a push-to-start (LA-6 baseline).
    public var timestamp: Instant?
    public var delivery: DeliveryInput
}

/// `activity.update`.
public struct ActivityUpdate: Sendable, Hashable {
    public var id: String
    public var content: ContentInput
    public var alert: AlertInput?
    public var timestamp: Instant?
    public var delivery: DeliveryInput
}

/// `activity.end`.
public struct ActivityEnd: Sendable, Hashable {
    public enum Policy: Sendable, Hashable {
        case `default`, immediate
        case after(Instant)
    }

    public var id: String
    public var content: ContentInput?
    /// Only a push's end carries one (ActivityKit's `end` takes none): kept on the activity.
    public var alert: AlertInput?
    public var dismissalPolicy: Policy
    public var timestamp: Instant?
    public var delivery: DeliveryInput
}

/// `island.press`: a long press expands `activity`, or what the island shows.
public struct IslandPress: Sendable, Hashable {
    public var device: String
    public var activity: String?
}

/// `clock.set`.
public struct ClockSet: Sendable, Hashable {
    public var mode: SimulationClock.Mode?
    public var now: Instant?
    public var rate: Double?
}

/// `clock.advance`: by `seconds` or to `to`.
public struct ClockAdvance: Sendable, Hashable {
    public var seconds: Double?
    public var to: Instant?
}

/// `config.set`: names of `/config` and their new values.
public struct ConfigSet: Sendable, Hashable {
    public var values: JSONObject
}

/// `template.put`: a Mustache template for one slot of an app's activity or widget.
public struct TemplatePut: Sendable, Hashable {
    public var app: String
    /// `activity:<attributesType>` or `widget:<kind>`.
    public var target: String
    public var slot: String
    public var html: String
}
