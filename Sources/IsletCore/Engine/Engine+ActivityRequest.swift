internal import HashTreeCollections

/// `activity.request`: LA-1 … LA-4, LA-12, LA-15, scheduled starts, push tokens.
extension Engine {
    mutating func requestActivity(_ request: ActivityRequest) throws(APIError) -> JSONValue {
        guard let app = self.apps[request.app] else {
            throw APIError(.notFound, "no app \"\(request.app)\"; create it with app.upsert", field: "/app")
        }
        if let id = request.id, self.activities.contains(id) {
            throw APIError(.conflict, "activity \"\(id)\" already exists", field: "/id")
        }
        let device = try self.commandDevice(request.device)
        let isPush = request.delivery.source == .push
        if let problem = self.startProblem(request, app: app, device: device) {
            guard isPush else { throw problem.error }
            return self.refuseStart(request, outcome: "rejected", reason: problem.reason)
        }
        if isPush, !self.charge(app.id, .pushToStart) {
            return self.refuseStart(request, outcome: "ignored", reason: "budget_exceeded")
        }
        let id = request.id ?? self.newActivityID()
        let activity = self.makeActivity(id, request, device: device)
        self.insertActivity(activity)
        // Recorded before the start: starting may apply a channel's stored update, recorded after it.
        self.recordDelivery(app.id, event: "start", activity: id, request.delivery, outcome: "applied", reason: nil)
        if let start = request.start, start > self.now {
            let sequence = self.scheduler.schedule(.activityStart(activity: id), at: start)
            self.modifyActivity(id, render: false) { $0.armed.start = sequence }
        } else {
            self.startActivity(id)
            if request.alert != nil { self.presentAlert(of: id) }
        }
        return [
            "applied": true, "device": device.map(JSONValue.string) ?? .null, "id": .string(id),
            "pushToken": activity.pushToken.map(JSONValue.string) ?? .null,
        ]
    }

    /// Why the device would refuse to start this activity, if it would.
    private func startProblem(
        _ request: ActivityRequest, app: App, device deviceID: String?
    ) -> (reason: String, error: APIError)? {
        let device = deviceID.flatMap { self.devices[$0] }
        if let device, let problem = Self.softwareProblem(request, device) { return problem }
        if !app.liveActivitiesEnabled {
            return (
                "denied", APIError(.conflict, "denied: Live Activities are turned off for \(app.id)", field: "/app")
            )
        }
        // LA-3, LA-16: the app on the device's screen may start activities; revision 1's
        // `foreground` flag still lets it.
        if request.source == "app", !app.foreground, device?.foregroundApp != app.id {
            let place = deviceID.map { " on \($0)" } ?? ""
            let message =
                "visibility: \(app.id) is not in the foreground\(place); only an App Intent (source \"intent\") or a push-to-start may start an activity then"
            return ("visibility", APIError(.conflict, message, field: "/source"))
        }
        if let channel = request.channel, app.channels[channel] == nil {
            let message = "the Live Activity fails to start: \(app.id) has no channel \"\(channel)\""
            return ("invalidChannel", APIError(.notFound, message, field: "/pushType/channel"))
        }
        let size = payloadSize(attributes: request.attributes, state: request.content.state ?? JSONObject())
        if size > self.configuration.activityPayloadMaxBytes {
            return ("attributesTooLarge", self.tooLarge(size, field: "/content/state"))
        }
        do {
            try self.templates.checkActivityBudget(
                app: app.id, type: request.attributesType, attributes: request.attributes,
                state: request.content.state ?? JSONObject(), alert: request.alert?.fields, field: "/content/state")
        } catch {
            return ("attributesTooLarge", error)
        }
        // LA-4, LA-15: the limits are the device's.
        let perApp = self.ongoing.count(device: deviceID, app: app.id)
        if perApp >= self.configuration.maxActivitiesPerApp {
            let place = deviceID.map { " on \($0)" } ?? ""
            let message = "targetMaximumExceeded: \(app.id) already has \(perApp) ongoing activities\(place)"
            return ("targetMaximumExceeded", APIError(.limitExceeded, message, field: "/app"))
        }
        let onDevice = self.ongoing.count(device: deviceID)
        if onDevice >= self.configuration.maxActivitiesPerDevice {
            let name = deviceID.map { "device \($0)" } ?? "the device"
            let message = "globalMaximumExceeded: \(name) already runs \(onDevice) activities"
            return ("globalMaximumExceeded", APIError(.limitExceeded, message, field: "/app"))
        }
        return nil
    }

    /// What the device's iOS version cannot do (`unsupported`): Live Activities before 16.1,
    /// push-to-start before 17.2, broadcast channels before 18, scheduled starts before 26.
    private static func softwareProblem(_ request: ActivityRequest, _ device: Device) -> (String, APIError)? {
        var needs: [(Feature, JSONPointer)] = [(.liveActivities, "/device")]
        if request.source == "push" { needs.append((.pushToStart, "/source")) }
        if request.channel != nil { needs.append((.broadcast, "/pushType")) }
        if request.start != nil { needs.append((.scheduledStart, "/start")) }
        for (feature, field) in needs {
            do throws(APIError) {
                try device.require(feature, field: field)
            } catch {
                return ("unsupported", error)
            }
        }
        return nil
    }

    func tooLarge(_ size: Int, field: JSONPointer) -> APIError {
        let limit = self.configuration.activityPayloadMaxBytes
        return APIError(
            .limitExceeded, "attributesTooLarge: attributes and content state encode to \(size) bytes, over \(limit)",
            field: field)
    }

    /// A push-to-start the device drops: still accepted (the sender got its 200), recorded.
    private mutating func refuseStart(_ request: ActivityRequest, outcome: String, reason: String) -> JSONValue {
        self.recordDelivery(
            request.app, event: "start", activity: request.id, request.delivery, outcome: outcome, reason: reason)
        return ["applied": false, "reason": .string(reason), "id": .null, "pushToken": .null]
    }

    private mutating func makeActivity(_ id: String, _ request: ActivityRequest, device: String?) -> Activity {
        self.counters.startOrder += 1
        var activity = Activity(
            id: id, app: request.app, device: device, attributesType: request.attributesType, attributes: request.attributes,
            content: ActivityContent(
                state: request.content.state ?? JSONObject(), staleDate: request.content.staleDate,
                relevanceScore: request.content.relevanceScore ?? 0),
            phase: .pending, source: ActivitySource(rawValue: request.source) ?? .app,
            wantsPushToken: request.wantsPushToken, requestedAt: self.now, startOrder: self.counters.startOrder)
        if let start = request.start, start > self.now { activity.scheduledStart = start }
        if request.wantsPushToken { activity.pushToken = self.newToken(for: "activity:" + id) }
        activity.channel = request.channel
        activity.lastTimestamp = request.timestamp
        if let alert = request.alert {
            activity.alert = ActivityAlert(fields: alert.fields, at: self.now)
        }
        return activity
    }

    /// `activity-<n>`, the first unused n.
    private mutating func newActivityID() -> String {
        while true {
            self.counters.activityNumber += 1
            let id = "activity-\(self.counters.activityNumber)"
            if !self.activities.contains(id) { return id }
        }
    }
}

/// LA-2: the encoded size of attributes plus content state, in bytes (canonical encoding).
func payloadSize(attributes: JSONObject, state: JSONObject) -> Int {
    JSONValue.object(attributes).encodedCount + JSONValue.object(state).encodedCount
}
