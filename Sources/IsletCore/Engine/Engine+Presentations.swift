internal import HashTreeCollections

/// Temporary presentations: the expanded island (LA-10 alerts, PR-4 presses) and banners on
/// devices without a Dynamic Island. Each lasts until a deadline; alerts queue per device.
extension Engine {
    /// LA-10: an alerting start or update of `activity` shows on every device: the island
    /// expands (or the alert waits its turn, PR-4); an unlocked device without an island shows
    /// a banner unless the app is in the foreground.
    mutating func presentAlert(of activityID: String) {
        guard let activity = self.activities[activityID], activity.isIslandCandidate else { return }
        let appInForeground = self.apps[activity.app]?.foreground ?? false
        for deviceID in self.devices.keys.sorted() {
            guard let device = self.devices[deviceID] else { continue }
            if device.model.hasDynamicIsland {
                if device.expansion == nil {
                    self.expand(deviceID, activity: activityID, reason: .alert)
                } else if device.expansion?.activity != activityID {
                    self.devices[deviceID]?.alertQueue.append(activityID)
                }
            } else if !device.locked, !appInForeground {
                if device.banner == nil {
                    self.showBanner(deviceID, activity: activityID)
                } else if device.banner?.activity != activityID {
                    self.devices[deviceID]?.bannerQueue.append(activityID)
                }
            }
        }
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
            if self.activities[next]?.isIslandCandidate == true {
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
            if self.activities[next]?.isOnLockScreen == true {
                self.showBanner(deviceID, activity: next)
                return
            }
        }
    }

    /// LA-7: an activity leaving the island collapses every expansion showing it, in the same
    /// revision; a dismissed one also loses its banners.
    mutating func collapsePresentations(of activityID: String) {
        let inIsland = self.activities[activityID]?.isIslandCandidate ?? false
        let onLockScreen = self.activities[activityID]?.isOnLockScreen ?? false
        for deviceID in self.devices.keys.sorted() {
            guard let device = self.devices[deviceID] else { continue }
            if !inIsland, device.expansion?.activity == activityID { self.endExpansion(deviceID) }
            if !onLockScreen, device.banner?.activity == activityID { self.endBanner(deviceID) }
        }
    }

    /// `island.press`: a long press expands `activity` (or what the island shows) for
    /// `pressExpandedSeconds`, interrupting an alert.
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
            target = id
        } else {
            guard let shown = self.islandPick().primary?.id else {
                throw APIError(.conflict, "the island shows no activity to expand", field: "/device")
            }
            target = shown
        }
        self.expand(command.device, activity: target, reason: .press)
        return [:]
    }
}
