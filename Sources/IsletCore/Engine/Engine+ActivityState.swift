internal import HashTreeCollections

/// Every change to an activity goes through these helpers, which keep the presentation index,
/// the LA-4 counters, the deadlines and the revision's change set in step with the model.
extension Engine {
    /// Changes an existing activity in place.
    /// - Parameter render: whether its fragments must be rendered again (content or state changed).
    mutating func modifyActivity(_ id: String, render: Bool = true, _ body: (inout Activity) -> Void) {
        guard self.activities.contains(id) else { return }
        self.changes.touchActivity(id, published: self.activities[id], render: render)
        let change = self.activities.modify(id) { activity in
            let before = PresentationIndex.Membership(activity)
            let wasOngoing = activity.isOngoing
            body(&activity)
            return ActivityChange(activity, before: before, wasOngoing: wasOngoing)
        }
        if let change { self.noteChange(change) }
    }

    /// Adds a new activity.
    mutating func insertActivity(_ activity: Activity) {
        self.changes.touchActivity(activity.id, published: self.activities[activity.id], render: true)
        self.activities[activity.id] = activity
        self.apps.modify(activity.app) { _ = $0.activities.insert(activity.id) }
        if let token = activity.pushToken { self.tokens[token] = .activity(id: activity.id) }
        if let channel = activity.channel {
            self.channelSubscribers[channel, default: []].insert(activity.id)
            self.noteChange(ofChannel: channel, app: activity.app)
        }
        self.noteChange(ActivityChange(activity, before: .absent, wasOngoing: false))
    }

    /// Forgets an activity: removes it from the model (and so the document) and the index;
    /// its push token is retired if it was dismissed (AP-4), else dropped.
    /// - Parameter retiring: `false` when its app is deleted (no token of the app is kept, and
    ///   retiring one could push another app's token past the cap).
    mutating func removeActivity(_ id: String, retiring: Bool = true) {
        guard let activity = self.activities.removeValue(forKey: id) else { return }
        self.indexes.update(
            device: activity.device, from: .init(activity), to: .absent, changes: &self.changes.scenes)
        if activity.isOngoing { self.ongoing.adjust(device: activity.device, app: activity.app, by: -1) }
        self.apps.modify(activity.app) { _ = $0.activities.remove(id) }
        if let channel = activity.channel {
            self.channelSubscribers[channel]?.remove(id)
            if self.channelSubscribers[channel]?.isEmpty == true { self.channelSubscribers[channel] = nil }
            self.noteChange(ofChannel: channel, app: activity.app)
        }
        if let token = activity.pushToken {
            if retiring, let dismissedAt = activity.dismissedAt {
                self.retireToken(token, activity: id, app: activity.app, dismissedAt: dismissedAt)
            } else {
                self.tokens[token] = nil
            }
        }
        self.changes.touchActivity(id, published: activity, render: false)
        self.collapsePresentations(of: id)
    }

    private mutating func noteChange(_ change: ActivityChange) {
        self.indexes.update(device: change.device, from: change.before, to: change.after, changes: &self.changes.scenes)
        if change.wasOngoing != change.isOngoing {
            self.ongoing.adjust(device: change.device, app: change.app, by: change.isOngoing ? 1 : -1)
        }
    }

    // MARK: Transitions

    /// Makes a pending activity (or a new one) active at `now` (LA-5 if its stale date passed).
    mutating func startActivity(_ id: String) {
        let now = self.now
        var staleAt: Instant?
        self.modifyActivity(id) { activity in
            activity.phase = .active
            activity.startedAt = now
            activity.armed.start = nil
            if let stale = activity.content.staleDate, stale <= now { activity.phase = .stale }
            staleAt = activity.phase == .active ? activity.content.staleDate : nil
        }
        let lifetime = self.scheduler.schedule(
            .activityLifetime(activity: id), at: now.adding(milliseconds: self.configuration.activityMaxMilliseconds))
        self.modifyActivity(id, render: false) { $0.armed.lifetime = lifetime }
        self.armStaleDeadline(id, at: staleAt)
        self.deliverStoredBroadcast(to: id)
    }

    /// Arms (or cancels, with `nil`) the LA-5 stale deadline of an active activity.
    mutating func armStaleDeadline(_ id: String, at instant: Instant?) {
        if instant == nil, self.activities.read(id, { $0.armed.stale }) ?? nil == nil { return }
        let sequence = instant.map { self.scheduler.schedule(.activityStale(activity: id), at: $0) }
        self.modifyActivity(id, render: false) { $0.armed.stale = sequence }
    }

    /// Ends an ongoing activity at `now` (LA-7, LA-8, LA-9, LA-13): it leaves the island at
    /// once and stays on the Lock Screen until its dismissal instant.
    mutating func endActivity(_ id: String, reason: String, policy: DismissalPolicy) {
        guard let activity = self.activities[id], activity.isOngoing else { return }
        let now = self.now
        guard activity.phase != .pending else {
            self.modifyActivity(id) {
                $0.endedAt = now; $0.endReason = reason; $0.armed.start = nil
            }
            self.dismissActivity(id)
            return
        }
        let dismissAt = self.dismissalInstant(for: activity, policy: policy)
        self.modifyActivity(id) { activity in
            activity.phase = .ended
            activity.endedAt = now
            activity.endReason = reason
            activity.dismissAt = dismissAt
            activity.armed.stale = nil
            activity.armed.lifetime = nil
        }
        self.collapsePresentations(of: id)
        if dismissAt <= now {
            self.dismissActivity(id)
        } else {
            let sequence = self.scheduler.schedule(.activityDismissal(activity: id), at: dismissAt)
            self.modifyActivity(id, render: false) { $0.armed.dismissal = sequence }
        }
    }

    /// LA-8: `default` → end + 4 h; `immediate` → now; `after(d)` → min(d, end + 4 h); never
    /// more than 12 h (activityMax + dismissAfterEnd) after the start.
    func dismissalInstant(for activity: Activity, policy: DismissalPolicy) -> Instant {
        let latest = self.now.adding(milliseconds: self.configuration.dismissAfterEndMilliseconds)
        var instant: Instant
        switch policy {
        case .default: instant = latest
        case .immediate: instant = self.now
        case .after(let date): instant = min(date, latest)
        }
        if let started = activity.startedAt {
            let cap = started.adding(
                milliseconds: self.configuration.activityMaxMilliseconds
                    + self.configuration.dismissAfterEndMilliseconds)
            instant = min(instant, cap)
        }
        return max(instant, self.now)
    }

    /// Removes an ended activity from the Lock Screen (`dismissed`); it is forgotten after the
    /// retention time.
    mutating func dismissActivity(_ id: String) {
        let now = self.now
        let removal = self.scheduler.schedule(
            .activityRemoval(activity: id),
            at: now.adding(seconds: self.configuration.dismissedRetentionSeconds))
        self.modifyActivity(id) { activity in
            activity.phase = .dismissed
            activity.dismissedAt = now
            activity.armed = ArmedDeadlines(removal: removal)
        }
        self.collapsePresentations(of: id)
    }
}

/// What the index and the LA-4 counters need to know of a change to an activity.
private struct ActivityChange {
    var device: String?
    var app: String
    var before: PresentationIndex.Membership
    var after: PresentationIndex.Membership
    var wasOngoing: Bool
    var isOngoing: Bool

    init(_ activity: borrowing Activity, before: PresentationIndex.Membership, wasOngoing: Bool) {
        self.device = activity.device
        self.app = activity.app
        self.before = before
        self.after = PresentationIndex.Membership(activity)
        self.wasOngoing = wasOngoing
        self.isOngoing = activity.isOngoing
    }
}
