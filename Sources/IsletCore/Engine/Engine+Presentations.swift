internal import HashTreeCollections

/// Temporary presentations: the expanded island (LA-10 alerts, PR-4 presses) and banners on
/// devices without a Dynamic Island. Each lasts until a deadline; alerts queue per device.
extension Engine {
    /// LA-10: an alerting start or update of `activity` shows on its device (LA-15; on every
    /// device when it has none): the island expands (or the alert waits its turn, PR-4); an
    /// unlocked device without an island shows a banner. LA-16: not on a device where its app is
    /// in the foreground (the app shows its own content there).
    mutating func presentAlert(of activityID: String) {
        guard let activity = self.activities[activityID], activity.isIslandCandidate else { return }
        // An alert for the activity already shown shows it for the alert's full time from now
        // (LA-10), unless what shows it (a press) lasts longer.
        let alertEnd = self.now.adding(seconds: self.configuration.alertExpandedSeconds)
        for deviceID in self.devicesShowing(activity) {
            guard let device = self.devices[deviceID], device.foregroundApp != activity.app else { continue }
            if device.model.hasDynamicIsland {
                if let expansion = device.expansion, expansion.activity != activityID {
                    self.devices[deviceID]?.alertQueue.append(activityID)
                } else if device.expansion.map({ $0.until < alertEnd }) ?? true {
                    self.expand(deviceID, activity: activityID, reason: .alert)
                }
            } else if !device.locked {
                if let banner = device.banner, banner.activity != activityID {
                    self.devices[deviceID]?.bannerQueue.append(activityID)
                } else if device.banner.map({ $0.until < alertEnd }) ?? true {
                    self.showBanner(deviceID, activity: activityID)
                }
            }
        }
    }

    /// LA-15: the devices that show `activity`: its own, or every device for one without a device.
    func devicesShowing(_ activity: Activity) -> [String] {
        guard let device = activity.device else { return self.devices.keys.sorted() }
        return self.devices[device] == nil ? [] : [device]
    }

    /// Whether `deviceID` may present `activityID` in its island or a banner now (LA-16).
    private func mayPresent(_ activityID: String, on deviceID: String, banner: Bool) -> Bool {
        guard let activity = self.activities[activityID] else { return false }
        let shown = banner ? activity.isOnLockScreen : activity.isIslandCandidate
        return shown && self.devices[deviceID]?.foregroundApp != activity.app
    }

    /// Expands the island of `deviceID` on `activity` from `now`, replacing any expansion.
    mutating func expand(_ deviceID: String, activity: String, reason: Expansion.Reason) {
        let seconds =
            reason == .alert ? self.configuration.alertExpandedSeconds : self.configuration.pressExpandedSeconds
        let until = self.now.adding(seconds: seconds)
        let sequence = self.scheduler.schedule(.expansionEnd(device: deviceID), at: until)
        self.devices[deviceID]?.expansion = Expansion(
            activity: activity, reason: reason, until: until, deadline: sequence)
        self.changes.devices.insert(deviceID)
    }

    private mutating func showBanner(_ deviceID: String, activity: String) {
        let until = self.now.adding(seconds: self.configuration.alertExpandedSeconds)
        let sequence = self.scheduler.schedule(.bannerEnd(device: deviceID), at: until)
        self.devices[deviceID]?.banner = Expansion(activity: activity, reason: .alert, until: until, deadline: sequence)
        self.changes.devices.insert(deviceID)
    }

    /// The expansion of `deviceID` ends: the next queued alert whose activity is still in the
    /// island expands at once (PR-4), else the island collapses.
    mutating func endExpansion(_ deviceID: String) {
        self.devices[deviceID]?.expansion = nil
        self.changes.devices.insert(deviceID)
        while let next = self.devices[deviceID]?.alertQueue.popFirst() {
            if self.mayPresent(next, on: deviceID, banner: false) {
                self.expand(deviceID, activity: next, reason: .alert)
                return
            }
        }
    }

    /// The banner of `deviceID` ends; the next queued one shows.
    mutating func endBanner(_ deviceID: String) {
        self.devices[deviceID]?.banner = nil
        self.changes.devices.insert(deviceID)
        while let next = self.devices[deviceID]?.bannerQueue.popFirst() {
            if self.mayPresent(next, on: deviceID, banner: true) {
                self.showBanner(deviceID, activity: next)
                return
            }
        }
    }

    /// LA-7: an activity leaving the island collapses every expansion showing it, in the same
    /// revision; a dismissed one also loses its banners.
    mutating func collapsePresentations(of activityID: String) {
        let activity = self.activities[activityID]
        let inIsland = activity?.isIslandCandidate ?? false
        let onLockScreen = activity?.isOnLockScreen ?? false
        let deviceIDs = activity.map(self.devicesShowing) ?? self.devices.keys.sorted()
        for deviceID in deviceIDs {
            guard let device = self.devices[deviceID] else { continue }
            if !inIsland, device.expansion?.activity == activityID { self.endExpansion(deviceID) }
            if !onLockScreen, device.banner?.activity == activityID { self.endBanner(deviceID) }
        }
    }

    /// LA-16: `app` came to the foreground on `deviceID`: its expansion and banner there end.
    mutating func collapsePresentations(ofApp app: String, on deviceID: String) {
        guard let device = self.devices[deviceID] else { return }
        if let shown = device.expansion?.activity, self.activities[shown]?.app == app { self.endExpansion(deviceID) }
        if let shown = device.banner?.activity, self.activities[shown]?.app == app { self.endBanner(deviceID) }
    }

    /// `island.press`: a long press expands `activity` (or what the island shows) for
    /// `pressExpandedSeconds`, interrupting an alert. A press on an island that shows nothing is
    /// refused; replayed from a log it does nothing: a revision-1 log may press an island that
    /// showed another device's activity then (LA-15).
    mutating func press(_ command: IslandPress) throws(APIError) -> JSONValue {
        guard let device = self.devices[command.device] else {
            throw APIError(.notFound, "no device \"\(command.device)\"", field: "/device")
        }
        guard device.model.hasDynamicIsland else {
            throw APIError(.conflict, "\(device.model.id) has no Dynamic Island", field: "/device")
        }
        let target: String
        if let id = command.activity {
            guard let activity = self.activities[id] else {
                throw APIError(.notFound, "no activity \"\(id)\"", field: "/activity")
            }
            guard activity.isIslandCandidate else {
                throw APIError(
                    .conflict, "activity \"\(id)\" is \(activity.phase.rawValue), not in the island", field: "/activity"
                )
            }
            if let owner = activity.device, owner != command.device {
                throw APIError(
                    .conflict, "LA-15: activity \"\(id)\" runs on device \"\(owner)\", not \(command.device)",
                    field: "/activity")
            }
            if device.foregroundApp == activity.app {
                throw APIError(
                    .conflict, "LA-16: \(activity.app) is in the foreground on \(command.device); its activities leave the island",
                    field: "/activity")
            }
            target = id
        } else {
            guard let shown = self.islandPick(on: command.device).primary?.id else {
                guard case .logged = self.admission else {
                    throw APIError(.conflict, "the island shows no activity to expand", field: "/device")
                }
                return [:]
            }
            target = shown
        }
        self.expand(command.device, activity: target, reason: .press)
        return [:]
    }
}
