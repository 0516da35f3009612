internal import HashTreeCollections

/// The scene resolver: what one device shows right now (API.md `scene`), from the shared
/// island pick and Lock Screen order plus the device's own geometry, switches and expansion.
extension Engine {
    /// The device object of the document, scene included.
    func deviceJSON(_ device: Device) -> JSONValue {
        let model = device.model
        let object: JSONObject = [
            "id": .string(device.id),
            "model": .string(model.id),
            "screen": ["width": .number(model.screenWidth), "height": .number(model.screenHeight)],
            "dynamicIsland": .bool(model.hasDynamicIsland),
            "geometry": model.geometryJSON,
            "appearance": .string(device.appearance.rawValue),
            "locked": .bool(device.locked),
            "standby": .bool(device.standby),
            "nightMode": .bool(device.nightMode),
            "scene": self.sceneJSON(device),
        ]
        return .object(object)
    }

    func sceneJSON(_ device: Device) -> JSONValue {
        let pick = self.sceneBase.island
        let background = device.appearance == .dark ? "#000000" : "#FFFFFF"
        let object: JSONObject = [
            "island": self.islandJSON(device, pick),
            "banner": device.banner.map { ["activity": .string($0.activity), "until": .string($0.until.rfc3339)] }
                ?? .null,
            "lockScreen": ["activities": self.sceneBase.lockScreen, "widgets": [], "defaultBackground": .string(background)],
            "standby": self.standbyJSON(device, pick),
            "home": ["stacks": [], "widgets": []],
            // PR-8: controls in expanded and Lock Screen slots work only when unlocked.
            "interactive": .bool(!device.locked),
            // LA-14: custom animations up to maxAnimationSeconds, none in Always-On.
            "animations": [
                "enabled": .bool(!device.isAlwaysOn), "maxSeconds": .number(self.configuration.maxAnimationSeconds),
            ],
        ]
        return .object(object)
    }

    private func islandJSON(_ device: Device, _ pick: IslandPick) -> JSONValue {
        let model = device.model
        guard model.hasDynamicIsland, let islandWidth = model.islandWidth, let expandedWidth = model.expandedWidth else {
            return [
                "mode": "none", "width": 0, "height": 0, "cornerRadius": .number(DeviceModel.cornerRadius),
                "compact": .null, "minimal": [], "expanded": .null, "background": "#000000", "keyline": .null,
            ]
        }
        var mode = "none"
        var width = DeviceModel.cameraGap
        var height = DeviceModel.islandHeight
        var compact = JSONValue.null
        var minimal: [JSONValue] = []
        if let primary = pick.primary {
            width = islandWidth
            if let secondary = pick.secondary {
                mode = "minimal"
                let minimalWidth = JSONValue.number(self.configuration.clampedMinimalWidth)
                minimal = [
                    ["activity": .string(primary.id), "attached": true, "width": minimalWidth],
                    ["activity": .string(secondary.id), "attached": false, "width": minimalWidth],
                ]
            } else {
                mode = "compact"
                compact = ["activity": .string(primary.id)]
            }
        }
        var expanded = JSONValue.null
        var shownActivity = pick.primary?.id
        if let expansion = device.expansion {
            mode = "expanded"
            width = expandedWidth
            height = self.activities[expansion.activity].map { self.layout(of: $0).expanded.height } ?? height
            expanded = [
                "activity": .string(expansion.activity), "reason": .string(expansion.reason.rawValue),
                "until": .string(expansion.until.rfc3339),
            ]
            shownActivity = expansion.activity
        }
        // PR-9: the island is black and opaque; the keyline tint applies in Dark Mode.
        let keyline = shownActivity.flatMap { self.activities[$0] }.flatMap { self.apps[$0.app]?.identity.keyline }
        let object: JSONObject = [
            "mode": .string(mode), "width": .number(width), "height": .number(height),
            "cornerRadius": .number(DeviceModel.cornerRadius), "compact": compact, "minimal": .array(minimal),
            "expanded": expanded, "background": "#000000",
            "keyline": device.appearance == .dark ? keyline.map(JSONValue.string) ?? .null : .null,
        ]
        return .object(object)
    }

    /// PR-7: StandBy shows the top island activity's Lock Screen presentation at 2×; Night Mode
    /// turns it red.
    private func standbyJSON(_ device: Device, _ pick: IslandPick) -> JSONValue {
        guard device.standby, let top = pick.primary else { return .null }
        let scaled = self.activities[top.id].map { self.layout(of: $0).lockScreen.height * 2 } ?? 0
        return [
            "activity": .string(top.id), "scale": 2, "night": .bool(device.nightMode),
            "tint": device.nightMode ? "red" : .null, "height": .number(scaled), "extendsBackground": true,
        ]
    }
}
