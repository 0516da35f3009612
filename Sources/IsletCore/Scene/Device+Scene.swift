internal import HashTreeCollections

/// The scene resolver: what one device shows right now (API.md `scene`), from the device's own
/// island pick and Lock Screen order (LA-15, LA-16), geometry, switches and expansion.
extension Engine {
    /// The device object of the document, scene included, as stored: the Lock Screen list is
    /// `null` (reads and `add` operations put ``lockScreenList(of:)`` there).
    func deviceJSON(_ device: Device) -> JSONValue {
        let model = device.model
        let object: JSONObject = [
            "id": .string(device.id),
            "model": .string(model.id),
            "screen": ["width": .number(model.screenWidth), "height": .number(model.screenHeight)],
            "dynamicIsland": .bool(model.hasDynamicIsland),
            "alwaysOnDisplay": .bool(model.hasAlwaysOnDisplay),
            "iosVersion": .string(device.iosVersion.description),
            "timeZone": .string(device.timeZone.identifier),
            "geometry": model.geometryJSON,
            "appearance": .string(device.appearance.rawValue),
            "foregroundApp": device.foregroundApp.map(JSONValue.string) ?? .null,
            "locked": .bool(device.locked),
            "standby": .bool(device.standby),
            "nightMode": .bool(device.nightMode),
            "alwaysOn": .bool(device.alwaysOn),
            "standbyView": .string(device.standbyView.rawValue),
            "scene": self.sceneJSON(device),
        ]
        return .object(object)
    }

    func sceneJSON(_ device: Device) -> JSONValue {
        let pick = self.sceneBase[device.id]
        // LA-17: the Always-On Lock Screen renders as in Dark Mode, whatever the appearance.
        let lockAppearance = device.lockScreenAppearance
        let background = lockAppearance == .dark ? "#000000" : "#FFFFFF"
        let object: JSONObject = [
            "island": self.islandJSON(device, pick),
            "banner": device.banner.map { ["activity": .string($0.activity), "until": .string($0.until.rfc3339)] }
                ?? .null,
            "lockScreen": [
                "activities": .null, "widgets": .array(device.lockWidgets.map(JSONValue.string)),
                "defaultBackground": .string(background), "appearance": .string(lockAppearance.rawValue),
            ],
            "alwaysOn": .bool(device.showsAlwaysOn),
            "standby": self.standbyJSON(device, pick),
            "home": self.homeJSON(device),
            // PR-8: controls in expanded and Lock Screen slots work only when unlocked.
            "interactive": .bool(!device.locked),
            // LA-14: custom animations up to maxAnimationSeconds, none in Always-On (LA-17; StandBy's
            // Night Mode only tints).
            "animations": [
                "enabled": .bool(!device.showsAlwaysOn), "maxSeconds": .number(self.configuration.maxAnimationSeconds),
            ],
        ]
        return .object(object)
    }

    private func islandJSON(_ device: Device, _ pick: IslandPick) -> JSONValue {
        let model = device.model
        guard model.hasDynamicIsland, let islandWidth = model.islandWidth, let expandedWidth = model.expandedWidth
        else {
            return [
                "background": "#000000", "compact": .null, "cornerRadius": .number(DeviceModel.cornerRadius),
                "expanded": .null, "height": 0, "keyline": .null, "minimal": [], "mode": "none", "width": 0,
            ]
        }
        var island = self.collapsedIsland(pick, islandWidth: islandWidth)
        var expanded = JSONValue.null
        var shownActivity = pick.primary?.id
        if let expansion = device.expansion {
            island.mode = "expanded"
            island.width = expandedWidth
            island.height =
                self.activities[expansion.activity].map { self.layout(of: $0).expanded.height } ?? island.height
            expanded = [
                "activity": .string(expansion.activity), "reason": .string(expansion.reason.rawValue),
                "until": .string(expansion.until.rfc3339),
            ]
            shownActivity = expansion.activity
        }
        // PR-9: the island is black and opaque; the keyline tint applies in Dark Mode.
        let keyline = shownActivity.flatMap { self.activities[$0] }.flatMap { self.apps[$0.app]?.identity.keyline }
        let object: JSONObject = [
            "background": "#000000", "compact": island.compact, "cornerRadius": .number(DeviceModel.cornerRadius),
            "expanded": expanded, "height": .number(island.height),
            "keyline": device.appearance == .dark ? keyline.map(JSONValue.string) ?? .null : .null,
            "minimal": .array(island.minimal), "mode": .string(island.mode), "width": .number(island.width),
        ]
        return .object(object)
    }

    /// What a Dynamic Island shows when not expanded (PR-2, PR-3): nothing (the camera
    /// cutout), compact, or two minimal views.
    private func collapsedIsland(_ pick: IslandPick, islandWidth: Double) -> CollapsedIsland {
        var island = CollapsedIsland()
        guard let primary = pick.primary else { return island }
        island.width = islandWidth
        if let secondary = pick.secondary {
            island.mode = "minimal"
            let minimalWidth = JSONValue.number(self.configuration.clampedMinimalWidth)
            island.minimal = [
                ["activity": .string(primary.id), "attached": true, "width": minimalWidth],
                ["activity": .string(secondary.id), "attached": false, "width": minimalWidth],
            ]
        } else {
            island.mode = "compact"
            island.compact = ["activity": .string(primary.id)]
        }
        return island
    }

    /// PR-7: StandBy shows the top island activity's Lock Screen presentation at 2×; Night Mode
    /// turns it red. PR-11: or, in the `minimal` view, that activity's minimal presentation at
    /// the top beside the widgets. WK-1: two `systemSmall` widgets sit side by side (`widgets`).
    private func standbyJSON(_ device: Device, _ pick: IslandPick) -> JSONValue {
        guard device.standby else { return .null }
        let widgets = JSONValue.array(self.standbyWidgets(device).map(JSONValue.string))
        var object: JSONObject = [
            "activity": .null, "scale": 2, "night": .bool(device.nightMode), "tint": device.nightMode ? "red" : .null,
            "height": 0, "extendsBackground": false, "widgets": widgets,
            "view": .string(device.standbyView.rawValue),
        ]
        guard let top = pick.primary else {
            return widgets == [] ? .null : .object(object)
        }
        object["activity"] = .string(top.id)
        if device.standbyView == .minimal {
            object["scale"] = 1
            object["height"] = .number(DeviceModel.islandHeight)
            object["width"] = .number(self.configuration.clampedMinimalWidth)
        } else {
            object["height"] = .number(self.activities[top.id].map { self.layout(of: $0).lockScreen.height * 2 } ?? 0)
            object["extendsBackground"] = true
        }
        return .object(object)
    }

    /// The Home Screen: stacks with the widget on top, widgets outside stacks, and the WK-8
    /// rendering mode (accented under a tint).
    private func homeJSON(_ device: Device) -> JSONValue {
        let stacks: [JSONValue] = device.homeStacks.map { id in
            ["stack": .string(id), "top": self.stacks[id]?.top.map(JSONValue.string) ?? .null]
        }
        return [
            "renderingMode": .string(device.tint == nil ? "fullColor" : "accented"), "stacks": .array(stacks),
            "tint": device.tint.map(JSONValue.string) ?? .null,
            "widgets": .array(device.homeWidgets.map(JSONValue.string)),
        ]
    }

    /// WK-1: the first two `systemSmall` widgets of the Home Screen (stack tops first).
    private func standbyWidgets(_ device: Device) -> [String] {
        let tops = device.homeStacks.compactMap { id -> String? in
            guard let stack = self.stacks[id], stack.family == .systemSmall else { return nil }
            return stack.top
        }
        let loose = device.homeWidgets.filter { self.widgets[$0]?.family == .systemSmall }
        return Array((tops + loose).prefix(2))
    }
}

/// The island's mode and size before any expansion.
private struct CollapsedIsland {
    var mode = "none"
    var width = DeviceModel.cameraGap
    var height = DeviceModel.islandHeight
    var compact = JSONValue.null
    var minimal: [JSONValue] = []
}
