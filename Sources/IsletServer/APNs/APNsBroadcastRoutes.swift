import IsletCore
import IsletTransport

/// Broadcast pushes and channel management as APNs serves them (iOS 18; Apple's "Sending
/// broadcast push notification requests to APNs" and "Sending channel management requests to
/// APNs"). APNs serves channel management on a host of its own; Islet serves both on its HTTP/1.1
/// and HTTP/2 listeners, also under `/v1/simulations/{id}`.
extension IsletServer {
    func addBroadcastRoutes() {
        let this = LoopConfined(self)
        func add(_ method: HTTPMethod, _ path: String, _ handler: @escaping @Sendable (IsletServer, RouteContext) -> RouteReply) {
            for pattern in [path, "/v1/simulations/{simulation}" + path] {
                self.router.add(method, pattern, access: .open) { (context: RouteContext) throws(APIError) -> RouteReply in
                    guard let server = this.value else { throw APIError(.internal, "server gone") }
                    return handler(server, context)
                }
            }
        }
        add(.POST, "/4/broadcasts/apps/{bundle}") { server, context in server.broadcast(context) }
        add(.POST, "/1/apps/{bundle}/channels") { server, context in server.createChannel(context) }
        add(.GET, "/1/apps/{bundle}/channels") { server, context in server.readChannel(context) }
        add(.DELETE, "/1/apps/{bundle}/channels") { server, context in server.deleteChannel(context) }
        add(.GET, "/1/apps/{bundle}/all-channels") { server, context in server.listChannels(context) }
    }

    /// `POST /4/broadcasts/apps/<bundleId>` with `apns-channel-id`: one update or end for every
    /// activity subscribed to the channel; 200 once committed, whatever the devices do with it.
    private func broadcast(_ context: RouteContext) -> RouteReply {
        let bundle = context.parameters["bundle"] ?? ""
        let channel = context.request.headers["apns-channel-id"]
        return self.serveAPNs(context, knows: { channel.flatMap($0.channelOwner) == bundle }) { simulation, apnsID in
            let request = context.request
            let headers: APNsHeaders
            switch APNsHeaders.readBroadcast(request.headers, bundleID: bundle) {
            case .failure(let failure): return .failure(failure)
            case .success(let read): headers = read
            }
            let id: String
            switch Self.channelID(request.headers) {
            case .failure(let failure): return .failure(failure)
            case .success(let read): id = read
            }
            if let problem = self.bodyProblem(request.body) { return .failure(problem) }
            guard simulation.live.engine.channelOwner(id) == bundle else { return .failure(.bad("ChannelNotRegistered")) }
            let ignore = { (problem: DeviceProblem) in
                self.ignore(problem, app: bundle, activity: nil, channel: id, headers: headers, apnsID: apnsID)
            }
            // "You can't use broadcast push notifications to start a Live Activity": whatever
            // else a start lacks.
            let start = DeviceProblem(
                strictReason: "BadEvent", reason: "event_invalid", detail: "a broadcast cannot start an activity",
                event: "start")
            let command: Result<JSONValue, APNsFailure>
            switch APNsPayload.read(request.body) {
            case .failure(.apns(let failure)): return .failure(failure)
            case .failure(.device(let problem)): command = ignore(problem.event == "start" ? start : problem)
            case .success(let payload) where payload.event == .start: command = ignore(start)
            case .success(let payload):
                let broadcast = payload.broadcastCommand(channel: id, headers: headers, apnsID: apnsID)
                command = self.decodable(broadcast, event: payload.event).flatMapError(ignore)
            }
            return command.map { command in
                .submit(command) { _ in HTTPResponse(status: 200, headers: ["apns-id": apnsID]) }
            }
        }
    }

    /// `POST /1/apps/<bundleId>/channels` `{"message-storage-policy": 0|1, "push-type":
    /// "LiveActivity"}`: 201 with the new `apns-channel-id`.
    private func createChannel(_ context: RouteContext) -> RouteReply {
        let bundle = context.parameters["bundle"] ?? ""
        let knows = { (engine: Engine) in Self.channels(bundle, in: engine) != nil }
        return self.serveAPNs(context, idHeader: APNsRoutes.requestIDHeader, knows: knows) {
            simulation, requestID in
            guard case .object(let body)? = try? JSONParser(maxDepth: 4).parse(context.request.body) else {
                return .failure(.bad("BadPayload"))
            }
            guard let pushType = body["push-type"] else { return .failure(.bad("MissingPushType")) }
            guard pushType == "LiveActivity" else { return .failure(.bad("InvalidPushType")) }
            guard let policy = body["message-storage-policy"]?.numberValue, policy == 0 || policy == 1 else {
                return .failure(.bad("BadMessageStoragePolicy"))
            }
            guard let channels = Self.channels(bundle, in: simulation.live.engine) else {
                return .failure(.bad("TopicDisallowed"))
            }
            guard channels.count < EngineLimits.channelsPerApp else { return .failure(.bad("CannotCreateChannelConfig")) }
            let command: JSONValue = ["type": "channel.create", "app": .string(bundle), "storagePolicy": .number(policy)]
            return .success(
                .submit(command) { result in
                    var headers: HTTPHeaders = [APNsRoutes.requestIDHeader: requestID]
                    if let id = result["id"]?.stringValue { headers.add(name: "apns-channel-id", value: id) }
                    return HTTPResponse(status: 201, headers: headers)
                })
        }
    }

    /// `GET /1/apps/<bundleId>/channels` with `apns-channel-id`: the channel's storage policy.
    private func readChannel(_ context: RouteContext) -> RouteReply {
        self.withChannel(context) { simulation, bundle, id, requestID in
            let channel = Self.channels(bundle, in: simulation.live.engine)?[id]
            let policy = channel?["storagePolicy"] ?? 0
            var response = HTTPResponse.json(["message-storage-policy": policy, "push-type": "LiveActivity"])
            response.headers.add(name: APNsRoutes.requestIDHeader, value: requestID)
            return .success(.reply(response))
        }
    }

    /// `DELETE /1/apps/<bundleId>/channels` with `apns-channel-id`: 204; the id never returns.
    private func deleteChannel(_ context: RouteContext) -> RouteReply {
        self.withChannel(context) { _, bundle, id, requestID in
            let command: JSONValue = ["type": "channel.delete", "app": .string(bundle), "id": .string(id)]
            let headers: HTTPHeaders = [APNsRoutes.requestIDHeader: requestID]
            return .success(.submit(command) { _ in HTTPResponse(status: 204, headers: headers) })
        }
    }

    /// `GET /1/apps/<bundleId>/all-channels`: `{"channels": [id, …]}`.
    private func listChannels(_ context: RouteContext) -> RouteReply {
        let bundle = context.parameters["bundle"] ?? ""
        let knows = { (engine: Engine) in Self.channels(bundle, in: engine) != nil }
        return self.serveAPNs(context, idHeader: APNsRoutes.requestIDHeader, knows: knows) {
            simulation, requestID in
            guard let channels = Self.channels(bundle, in: simulation.live.engine) else {
                return .failure(.bad("TopicDisallowed"))
            }
            let ids = channels.keys.sorted().map(JSONValue.string)
            var response = HTTPResponse.json(["channels": .array(ids)])
            response.headers.add(name: APNsRoutes.requestIDHeader, value: requestID)
            return .success(.reply(response))
        }
    }

    /// The frame of a request about one existing channel of the app in the path.
    private func withChannel(
        _ context: RouteContext, _ body: (Simulation, String, String, String) -> Result<APNsAction, APNsFailure>
    ) -> RouteReply {
        let bundle = context.parameters["bundle"] ?? ""
        let header = context.request.headers["apns-channel-id"]
        let knows = { (engine: Engine) in header.flatMap(engine.channelOwner) == bundle }
        return self.serveAPNs(context, idHeader: APNsRoutes.requestIDHeader, knows: knows) {
            simulation, requestID in
            switch Self.channelID(context.request.headers) {
            case .failure(let failure): return .failure(failure)
            case .success(let id):
                guard simulation.live.engine.channelOwner(id) == bundle else { return .failure(.bad("ChannelNotRegistered")) }
                return body(simulation, bundle, id, requestID)
            }
        }
    }

    /// `apns-channel-id`: present, and base64.
    private static func channelID(_ headers: HTTPHeaders) -> Result<String, APNsFailure> {
        guard let id = headers["apns-channel-id"], !id.isEmpty else { return .failure(.bad("MissingChannelId")) }
        return isChannelID(id) ? .success(id) : .failure(.bad("BadChannelId"))
    }

    /// The app's channels as the document shows them, or nil when the simulation has no such app.
    private static func channels(_ bundle: String, in engine: Engine) -> JSONObject? {
        guard engine.value(at: JSONPointer(tokens: ["apps", bundle])) != nil else { return nil }
        return engine.value(at: JSONPointer(tokens: ["apps", bundle, "channels"]))?.objectValue ?? JSONObject()
    }
}
