internal import HashTreeCollections

/// The display states of revision 2: Always-On (LA-17) and StandBy's two views (PR-11).
extension Engine {
    /// LA-17: only a model with an Always-On display can dim to it. The field named is the one
    /// the command changed: `/alwaysOn` when it sets the switch, else `/model` (a change to a
    /// model without the display while the switch is on).
    static func checkDisplay(_ device: Device, _ upsert: DeviceUpsert) throws(APIError) {
        guard device.alwaysOn, !device.model.hasAlwaysOnDisplay else { return }
        throw APIError(
            .invalidArgument, "\(device.model.id) has no Always-On display (LA-17)",
            field: upsert.alwaysOn == nil ? "/model" : "/alwaysOn")
    }

    /// `standby.tap`: a tap on StandBy's minimal presentation shows that activity full screen
    /// (PR-11).
    /// - Throws: `not_found` for an unknown device; `conflict` when the device is not in
    ///   StandBy or StandBy shows no minimal presentation to tap.
    mutating func tapStandBy(_ id: String) throws(APIError) -> JSONValue {
        guard var device = self.devices[id] else {
            throw APIError(.notFound, "no device \"\(id)\"", field: "/device")
        }
        guard device.standby else {
            throw APIError(.conflict, "\(id) is not in StandBy", field: "/device")
        }
        guard device.standbyView == .minimal, self.islandPick(on: id).primary != nil else {
            throw APIError(.conflict, "StandBy on \(id) shows no minimal presentation to tap", field: "/device")
        }
        device.standbyView = .fullScreen
        self.devices[id] = device
        self.changes.devices.insert(id)
        return [:]
    }
}
