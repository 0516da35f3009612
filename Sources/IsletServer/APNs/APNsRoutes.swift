import IsletCore
import IsletTransport

/// The APNs-style ingress: `POST /3/device/<hex token>` answered the way APNs answers.
enum APNsRoutes {
    static let pathPrefix = "/3/"
    /// Request headers the transport must pass on (libwebsockets knows none of them).
    static let headerNames = [
        "apns-push-type", "apns-topic", "apns-priority", "apns-expiration", "apns-collapse-id", "apns-id",
    ]

    /// A refused body (too large or chunked) under `/3/`.
    static func refusal(_ problem: HTTPRequest.BodyProblem) -> HTTPResponse {
        switch problem {
        case .tooLarge: return APNsFailure(status: 413, reason: "PayloadTooLarge").httpResponse(apnsID: randomUUID())
        case .lengthRequired: return APNsFailure.bad("BadPayload").httpResponse(apnsID: randomUUID())
        }
    }
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
    }

    /// The simulation a push goes to: the one the path names, or else the first (in creation
    /// order) whose engine knows the token; nil when none does.
    private func pushTarget(_ context: RouteContext, scope: String?) -> Simulation? {
        if let name = context.parameters["simulation"] ?? scope { return self.simulations[name] }
        let token = context.parameters["token"] ?? ""
        for id in self.order {
            if let simulation = self.simulations[id], simulation.live.engine.resolve(token: token) != nil {
                return simulation
            }
        }
        return self.simulations[SimulationName.default]
    }

    /// One push: headers (AP-1…AP-4), token, payload (AP-5), then the engine command; 200 with
    /// `apns-id` once it is committed, whatever the device does with it (AP-6).
    private func push(_ context: RouteContext) -> RouteReply {
        let request = context.request
        let fallbackID =
            (request.headers["apns-id"].flatMap { isCanonicalUUID($0) ? $0.lowercased() : nil })
            ?? randomUUID()
        guard let simulation = self.pushTarget(context, scope: self.providerTokenScope(request.headers)) else {
            if case .failure(let failure) = self.checkProviderToken(request.headers) {
                return .now(failure.httpResponse(apnsID: fallbackID))
            }
            return .now(APNsFailure(status: 404, reason: "BadPath").httpResponse(apnsID: fallbackID))
        }
        if case .failure(let failure) = self.authenticateProvider(request.headers, for: simulation) {
            return .now(failure.httpResponse(apnsID: fallbackID))
        }
        let outcome = self.checkPush(context, in: simulation)
        switch outcome {
        case .failure(let failure):
            return .now(failure.httpResponse(apnsID: fallbackID))
        case .success(let (command, apnsID)):
            if self.rateLimited(1, key: context.token) != nil {
                return .now(APNsFailure(status: 429, reason: "TooManyRequests").httpResponse(apnsID: apnsID))
            }
            simulation.live.submit([command]) { result in
                switch result {
                case .success:
                    context.respondLater(HTTPResponse(status: 200, headers: ["apns-id": apnsID]))
                case .failure(let error):
                    let status = error.code == .internal ? 500 : 400
                    let reason = error.code == .internal ? "InternalServerError" : "BadPayload"
                    context.respondLater(APNsFailure(status: status, reason: reason).httpResponse(apnsID: apnsID))
                }
            }
            return .later
        }
    }

    private func checkPush(_ context: RouteContext, in simulation: Simulation) -> Result<(JSONValue, String), APNsFailure> {
        let request = context.request
        let token = context.parameters["token"] ?? ""
        guard isHexToken(token) else { return .failure(.bad("BadDeviceToken")) }
        let headers: APNsHeaders
        switch APNsHeaders.read(request.headers) {
        case .failure(let failure): return .failure(failure)
        case .success(let read): headers = read
        }
        guard request.body.count <= self.configuration.limits.apnsPayloadBytes else {
            return .failure(APNsFailure(status: 413, reason: "PayloadTooLarge"))
        }
        guard !request.body.isEmpty else { return .failure(.bad("PayloadEmpty")) }
        guard let resolution = simulation.live.engine.resolve(token: token) else { return .failure(.bad("BadDeviceToken")) }
        if resolution.isDismissed { return .failure(self.unregistered(resolution)) }
        guard resolution.app == headers.bundleID else { return .failure(.bad("DeviceTokenNotForTopic")) }
        let payload: APNsPayload
        switch APNsPayload.read(request.body) {
        case .failure(let failure): return .failure(failure)
        case .success(let read): payload = read
        }
        // A start goes to the app's push-to-start token; updates and ends to an activity's token.
        guard (payload.event == .start) == resolution.isPushToStart else { return .failure(.bad("BadDeviceToken")) }
        let apnsID = headers.apnsID ?? randomUUID()
        return .success((payload.command(for: resolution, headers: headers, apnsID: apnsID), apnsID))
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
