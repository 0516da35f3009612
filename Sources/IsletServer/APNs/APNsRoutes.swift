import IsletCore
import IsletTransport

/// The APNs-style ingress, answered the way APNs answers: token pushes (`POST /3/device/<hex
/// token>`, Live Activities and widgets), broadcasts (`POST /4/broadcasts/apps/<bundleId>`) and
/// channel management (`/1/apps/<bundleId>/channels`, `/1/apps/<bundleId>/all-channels`).
enum APNsRoutes {
    /// Request headers the transport must pass on (libwebsockets knows none of them).
    static let headerNames = [
        "apns-push-type", "apns-topic", "apns-priority", "apns-expiration", "apns-collapse-id", "apns-id",
        "apns-channel-id", "apns-request-id",
    ]

    /// Channel management names its requests with this header instead of `apns-id`.
    static let requestIDHeader = "apns-request-id"

    /// How a reply names the request it answers: the request's id (a canonical UUID,
    /// lowercased) or a new one, under `apns-id`, or `apns-request-id` for channel management.
    struct RequestID {
        var header: String
        var id: String

        init(_ request: HTTPRequest, header: String) {
            self.header = header
            self.id = request.headers[header].flatMap { isCanonicalUUID($0) ? $0.lowercased() : nil } ?? randomUUID()
        }
    }

    /// The id of a request to an APNs path (`/1/…`, `/3/…`, `/4/…`, also under
    /// `/v1/simulations/{id}`), so that a reply made before its route runs (a refused body, a
    /// full server) is an APNs reply with the request's id; nil for any other path.
    static func requestID(of request: HTTPRequest) -> RequestID? {
        switch Self.segments(of: request).first {
        case "1": return RequestID(request, header: Self.requestIDHeader)
        case "3", "4": return RequestID(request, header: "apns-id")
        default: return nil
        }
    }

    /// A path's segments from the APNs prefix on (`3`, `device`, …), also under
    /// `/v1/simulations/{id}`.
    private static func segments(of request: HTTPRequest) -> ArraySlice<String> {
        let segments = Route.split(request.path)[...]
        return segments.count > 3 && segments.prefix(2) == ["v1", "simulations"] ? segments.dropFirst(3) : segments
    }

    /// A request under an APNs path that no route takes, answered as APNs answers it: another
    /// method than a route's (any but `POST` under `/3/` and `/4/`) is `405 MethodNotAllowed`, a
    /// token push without its token `400 MissingDeviceToken`, any other path `404 BadPath`.
    static func unrouted(_ request: HTTPRequest, to id: RequestID, methodAllowed: Bool) -> HTTPResponse {
        let segments = Self.segments(of: request)
        let pushes = segments.first == "3" || segments.first == "4"
        let failure =
            if !methodAllowed || (pushes && request.method != .POST) { APNsFailure(status: 405, reason: "MethodNotAllowed") }
            else if segments.prefix(2) == ["3", "device"], segments.dropFirst(2).allSatisfy(\.isEmpty) {
                APNsFailure.bad("MissingDeviceToken")
            } else { APNsFailure(status: 404, reason: "BadPath") }
        return failure.httpResponse(idHeader: id.header, id: id.id)
    }

    /// A refused body (too large or chunked) under an APNs path.
    static func refusal(_ problem: HTTPRequest.BodyProblem, to request: RequestID) -> HTTPResponse {
        let failure =
            switch problem {
            case .tooLarge: APNsFailure(status: 413, reason: "PayloadTooLarge")
            case .lengthRequired, .invalidLength: APNsFailure.bad("BadPayload")
            case .truncatedTarget: APNsFailure(status: 404, reason: "BadPath")
            }
        return failure.httpResponse(idHeader: request.header, id: request.id)
    }
}

/// What an APNs request does once its provider and simulation are known.
enum APNsAction {
    /// Answer at once (reads).
    case reply(HTTPResponse)
    /// Submit an engine command; `answer` turns its committed result into the response.
    case submit(JSONValue, answer: (JSONValue) -> HTTPResponse)
}

extension IsletServer {
    /// `/3/device/{token}` finds the simulation that holds the token (the oldest, when a fork
    /// copied it); `/v1/simulations/{id}/3/device/{token}` pushes into that simulation only.
    func addAPNsRoutes() {
        let this = LoopConfined(self)
        for pattern in ["/3/device/{token}", "/v1/simulations/{simulation}/3/device/{token}"] {
            self.router.add(.POST, pattern, access: .open) { (context: RouteContext) throws(APIError) -> RouteReply in
                guard let server = this.value else { throw APIError(.internal, "server gone") }
                return server.push(context)
            }
        }
        self.addProviderKeyRoutes()
        self.addBroadcastRoutes()
    }

    /// The frame of every APNs request: the request's id (`idHeader`, else a new UUID), the
    /// simulation (the path's, the one a simulation's own token names, or the first whose engine
    /// `knows` what the request names), its provider authentication (`authenticateProvider`), then
    /// `decide`, and for a command its commit.
    func serveAPNs(
        _ context: RouteContext, idHeader: String = "apns-id", knows: (Engine) -> Bool,
        _ decide: (Simulation, String) -> Result<APNsAction, APNsFailure>
    ) -> RouteReply {
        let request = context.request
        let id = APNsRoutes.RequestID(request, header: idHeader).id
        func refuse(_ failure: APNsFailure) -> RouteReply { .now(failure.httpResponse(idHeader: idHeader, id: id)) }
        let scope = self.providerTokenScope(request.headers)
        guard let simulation = self.apnsTarget(context, scope: scope, knows: knows) else {
            if case .failure(let failure) = self.checkProviderToken(request.headers) { return refuse(failure) }
            return refuse(APNsFailure(status: 404, reason: "BadPath"))
        }
        if case .failure(let failure) = self.authenticateProvider(request.headers, for: simulation) {
            return refuse(failure)
        }
        switch decide(simulation, id) {
        case .failure(let failure): return refuse(failure)
        case .success(.reply(let response)): return .now(response)
        case .success(.submit(let command, let answer)):
            if self.rateLimited(1, key: context.token) != nil {
                return refuse(APNsFailure(status: 429, reason: "TooManyRequests"))
            }
            simulation.live.submit([command]) { result in
                switch result {
                case .success(let revision):
                    context.respondLater(answer(revision.results.first ?? .null))
                case .failure(let error):
                    let failure =
                        switch error.code {
                        case .internal: APNsFailure(status: 500, reason: "InternalServerError")
                        // The cluster's log cannot take it now: providers retry a 503, not a 400.
                        case .unavailable: APNsFailure(status: 503, reason: "ServiceUnavailable")
                        default: APNsFailure.bad("BadPayload")
                        }
                    context.respondLater(failure.httpResponse(idHeader: idHeader, id: id))
                }
            }
            return .later
        }
    }

    /// The simulation an APNs request goes to: the one the path (or the provider's scope) names,
    /// or else the first, in creation order, whose engine `knows` what the request names (a token,
    /// a channel: forks copy them, and the original keeps them); `default` when none does.
    private func apnsTarget(_ context: RouteContext, scope: String?, knows: (Engine) -> Bool) -> Simulation? {
        if let name = context.parameters["simulation"] ?? scope { return self.simulations[name] }
        for id in self.order {
            if let simulation = self.simulations[id], knows(simulation.live.engine) { return simulation }
        }
        return self.simulations[SimulationName.default]
    }

    /// One push: headers (AP-1…AP-4), token, payload (AP-5), then the engine command; 200 with
    /// `apns-id` once it is committed, whatever the device does with it (AP-6), also when the
    /// device ignores the payload (AP-8: a `push.ignore` command records why).
    ///
    /// A cluster node that knows no such token first applies every stream to its current end: a
    /// token another node made a moment ago (an activity just started there) is not refused as
    /// `BadDeviceToken`, which providers take as permanent.
    private func push(_ context: RouteContext, caughtUp: Bool = false) -> RouteReply {
        let token = context.parameters["token"] ?? ""
        let knows = { (engine: Engine) in engine.resolve(token: token) != nil }
        if !caughtUp, let cluster = self.cluster, isHexToken(token),
            !(self.apnsTarget(context, scope: self.providerTokenScope(context.request.headers), knows: knows)
                .map { knows($0.live.engine) } ?? false)
        {
            guard cluster.acceptsCatchUp else {
                let id = APNsRoutes.RequestID(context.request, header: "apns-id").id
                return .now(APNsFailure(status: 503, reason: "ServiceUnavailable").httpResponse(idHeader: "apns-id", id: id))
            }
            cluster.catchUp(worlds: true) { [weak self] in
                guard let self, case .now(let response) = self.push(context, caughtUp: true) else { return }
                context.respondLater(response)
            }
            return .later
        }
        return self.serveAPNs(context, knows: knows) { simulation, apnsID in
            self.checkPush(context, in: simulation, apnsID: apnsID).map { command in
                .submit(command) { _ in HTTPResponse(status: 200, headers: ["apns-id": apnsID]) }
            }
        }
    }

    private func checkPush(_ context: RouteContext, in simulation: Simulation, apnsID: String) -> Result<JSONValue, APNsFailure> {
        let request = context.request
        let token = context.parameters["token"] ?? ""
        guard isHexToken(token) else { return .failure(.bad("BadDeviceToken")) }
        let headers: APNsHeaders
        switch APNsHeaders.read(request.headers) {
        case .failure(let failure): return .failure(failure)
        case .success(let read): headers = read
        }
        if let problem = self.bodyProblem(request.body) { return .failure(problem) }
        guard let resolution = simulation.live.engine.resolve(token: token) else { return .failure(.bad("BadDeviceToken")) }
        if resolution.isDismissed { return .failure(self.unregistered(resolution)) }
        // A token belongs to one topic: the app's activities, or the app's widgets.
        guard resolution.app == headers.bundleID, resolution.isWidgets == (headers.pushType == .widgets) else {
            return .failure(.bad("DeviceTokenNotForTopic"))
        }
        let ignore = { (problem: DeviceProblem) in
            self.ignore(problem, app: resolution.app, activity: resolution.activity, headers: headers, apnsID: apnsID)
        }
        if headers.pushType == .widgets {
            switch APNsWidgetPayload.read(request.body) {
            case .failure(.apns(let failure)): return .failure(failure)
            case .failure(.device(let problem)): return ignore(problem)
            case .success(let payload):
                return .success(payload.command(app: resolution.app, headers: headers, apnsID: apnsID))
            }
        }
        let payload: APNsPayload
        switch APNsPayload.read(request.body) {
        case .failure(.apns(let failure)): return .failure(failure)
        case .failure(.device(let problem)): return ignore(problem)
        case .success(let read): payload = read
        }
        // A start goes to the app's push-to-start token; updates and ends to an activity's token.
        guard (payload.event == .start) == resolution.isPushToStart else {
            let detail =
                payload.event == .start
                ? "a start sent to an activity's token" : "an update or end sent to a push-to-start token"
            return ignore(
                DeviceProblem(
                    strictReason: "BadDeviceToken", reason: "event_not_for_token", detail: detail,
                    event: payload.event.rawValue))
        }
        return self.decodable(payload.command(for: resolution, headers: headers, apnsID: apnsID), event: payload.event)
            .flatMapError(ignore)
    }

    /// The command, when the engine can decode it; else what the device would say of a payload
    /// that does not decode (a content state or attributes of the wrong shape, a malformed alert).
    func decodable(_ command: JSONValue, event: APNsPayload.Event) -> Result<JSONValue, DeviceProblem> {
        do throws(APIError) {
            _ = try Command(json: command)
            return .success(command)
        } catch {
            let field = error.field?.description ?? ""
            let reason = field.hasPrefix("/content/state") ? "content_state_invalid" : "payload_invalid"
            let detail = "the payload does not decode" + (field.isEmpty ? "" : " at \(field)") + ": \(error.message)"
            return .failure(
                DeviceProblem(strictReason: "BadPayload", reason: reason, detail: detail, event: event.rawValue))
        }
    }

    /// A push the device ignores (AP-8): the `push.ignore` command that records it in the app's
    /// deliveries, or with `--apns-strict` Islet's explicit 400.
    func ignore(
        _ problem: DeviceProblem, app: String, activity: String?, channel: String? = nil, headers: APNsHeaders,
        apnsID: String
    ) -> Result<JSONValue, APNsFailure> {
        if self.configuration.apnsStrict { return .failure(.bad(problem.strictReason)) }
        var command: JSONObject = [
            "type": "push.ignore", "app": .string(app), "reason": .string(problem.reason),
            "detail": .string(clipped(problem.detail, toBytes: 1024)),
            "delivery": ["priority": .number(Double(headers.priority)), "apnsId": .string(apnsID)],
        ]
        command["activity"] = activity.map(JSONValue.string)
        command["channel"] = channel.map(JSONValue.string)
        command["event"] = problem.event.map { JSONValue.string(clipped($0, toBytes: 64)) }
        return .success(.object(command))
    }

    /// An empty payload or one over the APNs limit (AP-4).
    func bodyProblem(_ body: [UInt8]) -> APNsFailure? {
        if body.count > self.configuration.limits.apnsPayloadBytes { return APNsFailure(status: 413, reason: "PayloadTooLarge") }
        return body.isEmpty ? .bad("PayloadEmpty") : nil
    }

    /// With an admin token configured, the push must carry it (or a simulation's admin token,
    /// which reaches only that simulation) as its provider token. Routes call
    /// `authenticateProvider(_:for:)`, which applies this to simulations without provider keys.
    func checkProviderToken(_ headers: HTTPHeaders) -> Result<Principal, APNsFailure> {
        guard self.access.isEnabled else { return .success(.admin) }
        guard let token = Access.presentedToken(headers: headers, query: nil), !token.isEmpty else {
            return .failure(APNsFailure(status: 403, reason: "MissingProviderToken"))
        }
        guard let principal = try? self.access.principal(for: token, scoped: self.simulationTokens), principal.mayMutate
        else {
            return .failure(APNsFailure(status: 403, reason: "InvalidProviderToken"))
        }
        return .success(principal)
    }

    /// 410 `Unregistered` with the dismissal instant (ms), as APNs reports when a token stopped
    /// being valid.
    private func unregistered(_ resolution: TokenResolution) -> APNsFailure {
        var failure = APNsFailure(status: 410, reason: "Unregistered")
        failure.timestamp = resolution.dismissedAt?.millisecondsSinceEpoch
        return failure
    }
}

/// `text` cut to at most `limit` bytes of UTF-8, at a character boundary.
private func clipped(_ text: String, toBytes limit: Int) -> String {
    guard text.utf8.count > limit else { return text }
    var kept = ""
    for character in text {
        if kept.utf8.count + character.utf8.count > limit { break }
        kept.append(character)
    }
    return kept
}
