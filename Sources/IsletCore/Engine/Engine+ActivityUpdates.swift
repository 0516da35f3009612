internal import HashTreeCollections

/// `activity.update`, `activity.end` and `activity.dismiss`: LA-5, LA-6, LA-8, LA-9, LA-10,
/// and the push path of LA-11 (budget, throttling, low-priority delay).
extension Engine {
    mutating func receiveUpdate(_ update: ActivityUpdate) throws(APIError) -> JSONValue {
        guard self.activities.contains(update.id) else {
            throw APIError(.notFound, "no activity \"\(update.id)\"", field: "/id")
        }
        if let held = self.holdPush(update.json, activity: update.id, event: "update", update.delivery) { return held }
        return try self.deliverUpdate(update).json
    }

    mutating func receiveEnd(_ end: ActivityEnd) throws(APIError) -> JSONValue {
        guard self.activities.contains(end.id) else {
            throw APIError(.notFound, "no activity \"\(end.id)\"", field: "/id")
        }
        if let held = self.holdPush(end.json, activity: end.id, event: "end", end.delivery) { return held }
        return try self.deliverEnd(end).json
    }

    /// LA-9: a person removes the activity from the Lock Screen: dismissed at once, ended
    /// first if it was still going.
    mutating func personDismisses(_ id: String) throws(APIError) -> JSONValue {
        guard let activity = self.activities[id] else {
            throw APIError(.notFound, "no activity \"\(id)\"", field: "/id")
        }
        switch activity.phase {
        case .pending, .active, .stale: self.endActivity(id, reason: "person", policy: .immediate)
        case .ended: self.dismissActivity(id)
        case .dismissed: break
        }
        return [:]
    }

    /// Applies an update as the device would: ignored when the activity ended (LA-6), when
    /// older than the last timestamp (LA-6), or without content state (AP-6).
    /// - Throws: only for a non-push update over the LA-2 limit.
    /// - Parameter recording: `false` when the caller records the delivery itself (broadcasts).
    mutating func deliverUpdate(_ update: ActivityUpdate, recording: Bool = true) throws(APIError) -> DeliveryOutcome {
        guard let activity = self.activities.read(update.id, UpdateTarget.init) else { return .ignored("activity_gone") }
        let outcome: DeliveryOutcome
        if activity.phase == .ended || activity.phase == .dismissed {
            outcome = .ignored("activity_ended")
        } else if let stamp = update.timestamp, let last = activity.lastTimestamp, stamp < last {
            outcome = .ignored("stale_timestamp")
        } else if let state = update.content.state {
            let size = payloadSize(attributes: activity.attributes, state: state)
            if size > self.configuration.activityPayloadMaxBytes {
                guard update.delivery.source == .push else { throw self.tooLarge(size, field: "/content/state") }
                outcome = .rejected("attributesTooLarge")
            } else if let problem = self.templates.renderBudgetProblem(
                activity, state: state, alert: update.alert?.fields ?? activity.alert, newAlert: update.alert != nil)
            {
                guard update.delivery.source == .push else { throw problem }
                outcome = .rejected("attributesTooLarge")
            } else {
                self.applyUpdate(update, state: state)
                outcome = .applied
            }
        } else {
            outcome = .ignored("content_state_missing")
        }
        if recording {
            self.recordDelivery(activity.app, event: "update", activity: update.id, update.delivery, outcome: outcome)
        }
        return outcome
    }

    private mutating func applyUpdate(_ update: ActivityUpdate, state: JSONObject) {
        let now = self.now
        var staleAt: Instant?
        var alerting = false
        self.modifyActivity(update.id) { activity in
            activity.content.state = state
            activity.content.staleDate = update.content.staleDate
            // LA-18: an ActivityContent without a score has ActivityKit's default, 0.
            activity.content.relevanceScore = update.content.relevanceScore ?? 0
            if let stamp = update.timestamp { activity.lastTimestamp = max(activity.lastTimestamp ?? stamp, stamp) }
            if let alert = update.alert {
                activity.alert = ActivityAlert(fields: alert.fields, at: now)
            }
            guard activity.phase == .active || activity.phase == .stale else { return }
            // LA-5: a later (or no) stale date makes a stale activity active again.
            let isStale = activity.content.staleDate.map { $0 <= now } ?? false
            activity.phase = isStale ? .stale : .active
            staleAt = isStale ? nil : activity.content.staleDate
            alerting = update.alert != nil
        }
        if self.activities.read(update.id, { $0.phase }) != .pending { self.armStaleDeadline(update.id, at: staleAt) }
        if alerting { self.presentAlert(of: update.id) }
    }

    /// Ends an activity as the device would (LA-6 and LA-8; AP-7 dismissal dates).
    mutating func deliverEnd(_ end: ActivityEnd, recording: Bool = true) throws(APIError) -> DeliveryOutcome {
        guard let activity = self.activities.read(end.id, UpdateTarget.init) else { return .ignored("activity_gone") }
        let outcome: DeliveryOutcome
        if !activity.phase.isOngoing {
            outcome = .ignored("activity_ended")
        } else if let stamp = end.timestamp, let last = activity.lastTimestamp, stamp < last {
            outcome = .ignored("stale_timestamp")
        } else if let state = end.content?.state,
            case let size = payloadSize(attributes: activity.attributes, state: state),
            size > self.configuration.activityPayloadMaxBytes
        {
            guard end.delivery.source == .push else { throw self.tooLarge(size, field: "/content/state") }
            outcome = .rejected("attributesTooLarge")
        } else if end.content?.state != nil || end.alert != nil,
            case let state = end.content?.state ?? self.activities.read(end.id, { $0.content.state }) ?? JSONObject(),
            let problem = self.templates.renderBudgetProblem(
                activity, state: state, alert: end.alert?.fields ?? activity.alert, newAlert: end.alert != nil)
        {
            guard end.delivery.source == .push else { throw problem }
            outcome = .rejected("attributesTooLarge")
        } else {
            self.applyEnd(end)
            outcome = .applied
        }
        if recording {
            self.recordDelivery(activity.app, event: "end", activity: end.id, end.delivery, outcome: outcome)
        }
        return outcome
    }

    private mutating func applyEnd(_ end: ActivityEnd) {
        let now = self.now
        self.modifyActivity(end.id) { activity in
            if let state = end.content?.state { activity.content.state = state }
            if let stale = end.content?.staleDate { activity.content.staleDate = stale }
            // LA-18: a final ActivityContent (one with a state) without a score has score 0.
            if let content = end.content, content.state != nil || content.relevanceScore != nil {
                activity.content.relevanceScore = content.relevanceScore ?? 0
            }
            if let stamp = end.timestamp { activity.lastTimestamp = max(activity.lastTimestamp ?? stamp, stamp) }
            // AP-8: an end's alert is kept; the activity leaves the island, so nothing expands.
            if let alert = end.alert { activity.alert = ActivityAlert(fields: alert.fields, at: now) }
        }
        let policy: DismissalPolicy
        switch end.dismissalPolicy {
        case .default: policy = .default
        case .immediate: policy = .immediate
        case .after(let date): policy = .after(date)
        }
        self.endActivity(end.id, reason: end.delivery.source == .push ? "push" : "app", policy: policy)
    }
}

/// What the device did with a start, update or end (API.md `deliveries`).
struct DeliveryOutcome: Sendable, Hashable {
    var outcome: String
    var reason: String?

    static let applied = DeliveryOutcome(outcome: "applied", reason: nil)
    static func ignored(_ reason: String) -> DeliveryOutcome { DeliveryOutcome(outcome: "ignored", reason: reason) }
    static func rejected(_ reason: String) -> DeliveryOutcome { DeliveryOutcome(outcome: "rejected", reason: reason) }

    var applied: Bool { self.outcome == "applied" }

    /// The command result: `{"applied": bool, "reason": string or null}`.
    var json: JSONValue {
        ["applied": .bool(self.applied), "reason": self.reason.map(JSONValue.string) ?? .null]
    }
}

/// Parsed once: every update checks its state against the render budget.
private let contentStatePointer: JSONPointer = "/content/state"
private let alertPointer: JSONPointer = "/alert"

extension TemplateStore {
    /// Why rendering `state` with the activity's templates would be over budget, if it would.
    /// On the templates, not the engine: a mutating delivery that asked the engine copied it
    /// whole for the call (every stored property retained and released again, per update).
    fileprivate func renderBudgetProblem(
        _ activity: UpdateTarget, state: JSONObject, alert: JSONObject?, newAlert: Bool
    ) -> APIError? {
        do throws(APIError) {
            try self.checkActivityBudget(
                app: activity.app, type: activity.attributesType, attributes: activity.attributes, state: state,
                alert: alert, field: contentStatePointer, alertField: newAlert ? alertPointer : contentStatePointer)
            return nil
        } catch {
            return error
        }
    }
}

/// What delivering an update or an end reads of its activity (read in place, not copied whole).
private struct UpdateTarget {
    var app: String
    var attributesType: String
    var attributes: JSONObject
    /// The last alert's members: templates still read them after an update without one.
    var alert: JSONObject?
    var phase: ActivityPhase
    var lastTimestamp: Instant?

    init(_ activity: borrowing Activity) {
        self.app = activity.app
        self.attributesType = activity.attributesType
        self.attributes = activity.attributes
        self.alert = activity.alert?.fields
        self.phase = activity.phase
        self.lastTimestamp = activity.lastTimestamp
    }
}
