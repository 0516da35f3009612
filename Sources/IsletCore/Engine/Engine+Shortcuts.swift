internal import HashTreeCollections

/// App Shortcuts (SC-1, SC-2): `shortcut.upsert`, `shortcut.run`, `shortcut.delete`.
extension Engine {
    /// SC-1: Apple's limit of App Shortcuts per app.
    static let maxShortcutsPerApp = 10

    mutating func upsertShortcut(_ upsert: ShortcutUpsert) throws(APIError) -> JSONValue {
        guard var app = self.apps[upsert.app] else {
            throw APIError(.notFound, "no app \"\(upsert.app)\"", field: "/app")
        }
        let index = app.shortcuts.firstIndex { $0.id == upsert.id }
        var shortcut: Shortcut
        if let index {
            shortcut = app.shortcuts[index]
        } else {
            guard app.shortcuts.count < Self.maxShortcutsPerApp else {
                throw APIError(
                    .limitExceeded, "SC-1: an app has at most \(Self.maxShortcutsPerApp) App Shortcuts", field: "/id")
            }
            guard let phrases = upsert.phrases else {
                throw APIError(.invalidArgument, "\"phrases\" is required to create a shortcut", field: "/phrases")
            }
            guard let intent = upsert.intent else {
                throw APIError(.invalidArgument, "\"intent\" is required to create a shortcut", field: "/intent")
            }
            shortcut = Shortcut(
                id: upsert.id, title: upsert.title ?? upsert.id, phrases: phrases, intent: Self.intent(intent),
                order: app.nextShortcutOrder)
        }
        if let title = upsert.title { shortcut.title = title }
        if let phrases = upsert.phrases { shortcut.phrases = phrases }
        if let parameter = upsert.parameter {
            shortcut.parameter = parameter.map { ShortcutParameter(name: $0.name, values: $0.values) }
        }
        if let intent = upsert.intent { shortcut.intent = Self.intent(intent) }
        for (position, phrase) in shortcut.phrases.enumerated() {
            if let problem = phraseProblem(
                phrase, appName: app.name, parameter: shortcut.parameter?.name, admission: self.admission) {
                throw APIError(.invalidArgument, problem, field: JSONPointer(tokens: ["phrases", String(position)]))
            }
        }
        if let index {
            app.shortcuts[index] = shortcut
        } else {
            app.shortcuts.append(shortcut)
            app.nextShortcutOrder += 1
        }
        self.apps[app.id] = app
        self.changes.apps.insert(app.id)
        return [:]
    }

    private static func intent(_ input: ShortcutUpsert.Intent) -> ShortcutIntent {
        ShortcutIntent(
            kind: ShortcutIntent.Kind(rawValue: input.type) ?? .action, attributesType: input.attributesType,
            attributes: input.attributes, state: input.state, relevanceScore: input.relevanceScore)
    }

    /// SC-2: runs a shortcut on a device (`device`, default the simulation's default device). A
    /// Live Activity intent starts an activity there with `source: intent`, which LA-3 allows
    /// while the app is in the background; its parameter value becomes the attribute of the
    /// parameter's name. An `openApp` intent brings the app to the foreground of that device
    /// (LA-16; in a simulation without devices, revision 1's `foreground` flag). Every run counts
    /// towards the ordering.
    mutating func runShortcut(_ run: ShortcutRun) throws(APIError) -> JSONValue {
        guard let app = self.apps[run.app] else { throw APIError(.notFound, "no app \"\(run.app)\"", field: "/app") }
        guard let index = app.shortcuts.firstIndex(where: { $0.id == run.id }) else {
            throw APIError(.notFound, "\(run.app) has no shortcut \"\(run.id)\"", field: "/id")
        }
        let shortcut = app.shortcuts[index]
        let device = try self.commandDevice(run.device)
        if let value = run.parameterValue {
            guard let parameter = shortcut.parameter else {
                throw APIError(.invalidArgument, "shortcut \"\(run.id)\" has no parameter", field: "/parameterValue")
            }
            guard parameter.values.contains(value) else {
                let values = parameter.values.joined(separator: ", ")
                throw APIError(
                    .invalidArgument, "SC-1: \(parameter.name) is one of \(values); got \"\(value)\"",
                    field: "/parameterValue")
            }
        }
        var result: JSONObject = ["activity": .null]
        switch shortcut.intent.kind {
        case .liveActivity:
            var attributes = shortcut.intent.attributes
            if let parameter = shortcut.parameter, let value = run.parameterValue {
                attributes[parameter.name] = .string(value)
            }
            let request = ActivityRequest(
                id: run.activityId, app: run.app, device: device, attributesType: shortcut.intent.attributesType ?? "",
                attributes: attributes,
                content: ContentInput(
                    state: shortcut.intent.state, staleDate: nil, relevanceScore: shortcut.intent.relevanceScore),
                wantsPushToken: false, alert: nil, source: ActivitySource.intent.rawValue, start: nil, timestamp: nil,
                delivery: DeliveryInput())
            let started = try self.requestActivity(request)
            result["activity"] = started["id"] ?? .null
        case .openApp:
            if let device {
                self.bringToForeground(run.app, on: device)
            } else {
                self.apps[run.app]?.foreground = true
            }
        case .action:
            break
        }
        self.apps[run.app]?.shortcuts[index].runs += 1
        self.apps[run.app]?.shortcuts[index].lastRunAt = self.now
        self.changes.apps.insert(run.app)
        return .object(result)
    }

    mutating func deleteShortcut(app appID: String, id: String) throws(APIError) -> JSONValue {
        guard let app = self.apps[appID] else { throw APIError(.notFound, "no app \"\(appID)\"", field: "/app") }
        guard app.shortcuts.contains(where: { $0.id == id }) else {
            throw APIError(.notFound, "\(appID) has no shortcut \"\(id)\"", field: "/id")
        }
        self.apps[appID]?.shortcuts.removeAll { $0.id == id }
        self.changes.apps.insert(appID)
        return [:]
    }
}
