internal import HashTreeCollections

/// Push-to-start tokens per device, app and attributes type (ActivityKit's
/// `Activity<Attributes>.pushToStartToken`), and the device a command runs on (LA-15).
///
/// Each token is derived from the app's revision-1 token, the device, the type and how many
/// times it was rotated, so creating one draws nothing from the token counter: a log written
/// before these tokens existed replays to the same tokens it always had, and replaying one
/// written since gives the same new ones. A forked world mixes its salt into tokens it derives.
extension Engine {
    /// The device a command runs on when it names none: the first device by id, or `nil` in a
    /// simulation without devices (whose activities then show on every device, as in revision 1).
    /// - Complexity: O(devices), at most `EngineLimits.devices`.
    var defaultDevice: String? { self.devices.keys.min() }

    /// The device `named` (or the default one) for a command whose `/device` it is.
    /// - Throws: `invalid_argument` at `/device` when no device has that id.
    func commandDevice(_ named: String?) throws(APIError) -> String? {
        guard let named else { return self.defaultDevice }
        guard self.devices[named] != nil else {
            throw APIError(.invalidArgument, "no device \"\(named)\"; create it with device.upsert", field: "/device")
        }
        return named
    }

    /// Brings every app's push-to-start tokens on one device in line with it, after the device
    /// came, went (then it is no longer in `devices`) or changed its iOS version: a token per
    /// declared type while it supports push-to-start (iOS 17.2), none otherwise.
    /// - Complexity: O(apps × declared types), whatever the number of devices.
    mutating func syncPushToStartTokens(onDevice deviceID: String) {
        let supported = self.devices[deviceID]?.supports(.pushToStart) == true
        for id in self.apps.keys.sorted() {
            guard var app = self.apps[id], !app.attributesTypes.isEmpty else { continue }
            var changed = false
            for type in app.attributesTypes {
                let key = PushToStartKey(device: deviceID, attributesType: type)
                if supported, app.pushToStartTokens[key] == nil {
                    let typed = PushToStartToken(token: self.derivedToken(app, key, generation: 0), generation: 0)
                    app.pushToStartTokens[key] = typed
                    self.tokens[typed.token] = .pushToStart(app: id, device: deviceID, attributesType: type)
                    changed = true
                } else if !supported, let typed = app.pushToStartTokens[key] {
                    self.tokens[typed.token] = nil
                    app.pushToStartTokens[key] = nil
                    changed = true
                }
            }
            guard changed else { continue }
            self.apps[id] = app
            self.changes.apps.insert(id)
        }
    }

    /// One token per declared type on every device that supports push-to-start (iOS 17.2);
    /// tokens of types or devices that went stop resolving (APNs answers `BadDeviceToken`).
    mutating func syncPushToStartTokens(of appID: String) {
        guard var app = self.apps[appID] else { return }
        var wanted: Set<PushToStartKey> = []
        for (id, device) in self.devices where device.supports(.pushToStart) {
            for type in app.attributesTypes { wanted.insert(PushToStartKey(device: id, attributesType: type)) }
        }
        let before = app.pushToStartTokens
        for (key, typed) in before where !wanted.contains(key) {
            self.tokens[typed.token] = nil
            app.pushToStartTokens[key] = nil
        }
        for key in wanted.sorted() where app.pushToStartTokens[key] == nil {
            let typed = PushToStartToken(token: self.derivedToken(app, key, generation: 0), generation: 0)
            app.pushToStartTokens[key] = typed
            self.tokens[typed.token] = .pushToStart(app: appID, device: key.device, attributesType: key.attributesType)
        }
        guard app.pushToStartTokens != before else { return }
        self.apps[appID] = app
        self.changes.apps.insert(appID)
    }

    /// `app.rotatePushToStartToken`: the device hands the app a new token for the type (as
    /// `pushToStartTokenUpdates` does); the old one answers APNs as a token no longer valid does
    /// (410 `Unregistered`, AP-4).
    mutating func rotatePushToStartToken(_ rotation: PushToStartRotation) throws(APIError) -> JSONValue {
        guard var app = self.apps[rotation.app] else {
            throw APIError(.notFound, "no app \"\(rotation.app)\"", field: "/app")
        }
        guard let deviceID = try self.commandDevice(rotation.device), let device = self.devices[deviceID] else {
            throw APIError(.invalidArgument, "the simulation has no device", field: "/device")
        }
        try device.require(.pushToStart, field: "/device")
        let key = PushToStartKey(device: deviceID, attributesType: rotation.attributesType)
        guard let old = app.pushToStartTokens[key] else {
            throw APIError(
                .invalidArgument,
                "\(app.id) declares no attributes type \"\(rotation.attributesType)\"; list it in app.upsert's attributesTypes",
                field: "/attributesType")
        }
        let generation = old.generation + 1
        let new = PushToStartToken(token: self.derivedToken(app, key, generation: generation), generation: generation)
        app.pushToStartTokens[key] = new
        self.apps[app.id] = app
        self.tokens[new.token] = .pushToStart(app: app.id, device: deviceID, attributesType: key.attributesType)
        self.retireToken(old.token, activity: "", app: app.id, dismissedAt: self.now)
        self.changes.apps.insert(app.id)
        return ["device": .string(deviceID), "previous": .string(old.token), "pushToStartToken": .string(new.token)]
    }

    private func derivedToken(_ app: App, _ key: PushToStartKey, generation: Int) -> String {
        let purpose = "push-to-start:\(app.pushToStartToken)/\(key.device)/\(key.attributesType)/\(generation)"
        return hexToken(seed: stableHash(purpose) ^ (self.counters.tokenSalt &* 0x9E37_79B9_7F4A_7C15))
    }

    /// `/apps/<id>/pushToStartTokens`: `{device: {attributesType: token}}`.
    func pushToStartTokensJSON(_ app: App) -> JSONValue {
        var byDevice: [String: [(String, JSONValue)]] = [:]
        for (key, typed) in app.pushToStartTokens {
            byDevice[key.device, default: []].append((key.attributesType, .string(typed.token)))
        }
        return .object(JSONObject(byDevice.map { ($0.key, .object(JSONObject($0.value))) }))
    }
}
