import IsletCore
import IsletTransport

/// The API routes of API.md: commands, the resource routes (sugar for single commands), state
/// reads and the text scene.
extension IsletServer {
    /// A resource route: method, pattern, command type, and whether the body is optional.
    private struct Sugar {
        let method: HTTPMethod
        let pattern: String
        let type: String
        /// The path parameter that becomes the command's `id` (or `device`), if any.
        let idMember: String?
        let optionalBody: Bool
    }

    private static let sugar: [Sugar] = [
        Sugar(method: .PUT, pattern: "/v1/devices/{id}", type: "device.upsert", idMember: "id", optionalBody: false),
        Sugar(method: .DELETE, pattern: "/v1/devices/{id}", type: "device.delete", idMember: "id", optionalBody: true),
        Sugar(method: .PUT, pattern: "/v1/apps/{id}", type: "app.upsert", idMember: "id", optionalBody: false),
        Sugar(method: .DELETE, pattern: "/v1/apps/{id}", type: "app.delete", idMember: "id", optionalBody: true),
        Sugar(method: .POST, pattern: "/v1/activities", type: "activity.request", idMember: nil, optionalBody: false),
        Sugar(
            method: .PATCH, pattern: "/v1/activities/{id}", type: "activity.update", idMember: "id", optionalBody: false
        ),
        Sugar(
            method: .POST, pattern: "/v1/activities/{id}/end", type: "activity.end", idMember: "id", optionalBody: true),
        Sugar(
            method: .POST, pattern: "/v1/activities/{id}/dismiss", type: "activity.dismiss", idMember: "id",
            optionalBody: true),
        Sugar(
            method: .DELETE, pattern: "/v1/activities/{id}", type: "activity.dismiss", idMember: "id",
            optionalBody: true),
        Sugar(method: .PUT, pattern: "/v1/widgets/{id}", type: "widget.upsert", idMember: "id", optionalBody: false),
        Sugar(method: .DELETE, pattern: "/v1/widgets/{id}", type: "widget.delete", idMember: "id", optionalBody: true),
        Sugar(
            method: .PUT, pattern: "/v1/widgets/{id}/timeline", type: "widget.setTimeline", idMember: "id",
            optionalBody: false),
        Sugar(
            method: .POST, pattern: "/v1/widgets/{id}/reload", type: "widget.reload", idMember: "id", optionalBody: true
        ),
        Sugar(
            method: .POST, pattern: "/v1/widgets/{id}/interact", type: "widget.interact", idMember: "id",
            optionalBody: true),
        Sugar(method: .PUT, pattern: "/v1/stacks/{id}", type: "stack.upsert", idMember: "id", optionalBody: false),
        Sugar(method: .DELETE, pattern: "/v1/stacks/{id}", type: "stack.delete", idMember: "id", optionalBody: true),
        Sugar(
            method: .POST, pattern: "/v1/devices/{id}/press", type: "island.press", idMember: "device",
            optionalBody: true),
        Sugar(
            method: .POST, pattern: "/v1/devices/{id}/standby/tap", type: "standby.tap", idMember: "device",
            optionalBody: true),
        Sugar(
            method: .PUT, pattern: "/v1/relevance/weights", type: "relevance.setWeights", idMember: nil,
            optionalBody: false),
        Sugar(method: .PUT, pattern: "/v1/clock", type: "clock.set", idMember: nil, optionalBody: false),
        Sugar(method: .POST, pattern: "/v1/clock/advance", type: "clock.advance", idMember: nil, optionalBody: false),
        Sugar(method: .PUT, pattern: "/v1/config", type: "config.set", idMember: nil, optionalBody: false),
        Sugar(method: .PUT, pattern: "/v1/templates", type: "template.put", idMember: nil, optionalBody: false),
    ]

    /// A route handler given the simulation the route names.
    typealias SimulationRouteHandler =
        @Sendable (IsletServer, Simulation, RouteContext) throws(APIError) -> RouteReply

    /// Registers a route of one simulation twice: at `pattern` for `default`, and under
    /// `/v1/simulations/{simulation}` for any (`/v1/state` → `/v1/simulations/{simulation}/state`,
    /// `/3/device/{token}` → `/v1/simulations/{simulation}/3/device/{token}`).
    func addPerSimulation(
        _ method: HTTPMethod, _ pattern: String, body: RouteBody = .none, access: RouteAccess = .read,
        _ handler: @escaping SimulationRouteHandler
    ) {
        let this = LoopConfined(self)
        for registered in [pattern, Self.perSimulation(pattern)] {
            self.router.add(method, registered, body: body, access: access) {
                (context: RouteContext) throws(APIError) -> RouteReply in
                guard let server = this.value else { throw APIError(.internal, "server gone") }
                return try server.withSimulation(named: context.parameters["simulation"], context) {
                    simulation throws(APIError) in try handler(server, simulation, context)
                }
            }
        }
    }

    /// Where a route of one simulation lives for any simulation: `/v1/state` →
    /// `/v1/simulations/{simulation}/state`, `/3/device/{token}` → `/v1/simulations/{simulation}/3/device/{token}`.
    static func perSimulation(_ pattern: String) -> String {
        pattern.hasPrefix("/v1/")
            ? "/v1/simulations/{simulation}/" + pattern.dropFirst("/v1/".count) : "/v1/simulations/{simulation}" + pattern
    }

    /// Runs `body` with the simulation a route names. A cluster node that does not know it yet
    /// first reads the control stream to its current end (a world created on another node a
    /// moment ago), so a harness may create on one node and use the world on any other.
    func withSimulation(
        named name: String?, _ context: RouteContext, _ body: @escaping (Simulation) throws(APIError) -> RouteReply
    ) throws(APIError) -> RouteReply {
        let id = name ?? SimulationName.default
        guard self.simulations[id] == nil, let cluster = self.cluster else {
            return try body(try self.simulation(named: id))
        }
        cluster.catchUp { [weak self] in
            guard let self else { return }
            let reply: RouteReply
            do throws(APIError) { reply = try body(try self.simulation(named: id)) } catch {
                reply = .now(self.refusal(error))
            }
            if case .now(let response) = reply { context.respondLater(response) }
        }
        return .later
    }

    /// The simulation a route names (`default` when it names none).
    /// - Throws: `not_found` with the id when there is no such simulation.
    func simulation(named name: String?) throws(APIError) -> Simulation {
        let id = name ?? SimulationName.default
        guard let simulation = self.simulations[id] else {
            throw APIError(.notFound, "no simulation \"\(id.prefix(80))\"")
        }
        return simulation
    }

    func addAPIRoutes() {
        self.addPerSimulation(.POST, "/v1/commands", body: .json, access: .mutate) { (server: IsletServer, simulation: Simulation, context: RouteContext) throws(APIError) -> RouteReply in
            try server.postCommands(context, in: simulation)
        }
        for sugar in Self.sugar {
            self.addPerSimulation(
                sugar.method, sugar.pattern, body: sugar.optionalBody ? .optionalJSON : .json, access: .mutate
            ) { (server: IsletServer, simulation: Simulation, context: RouteContext) throws(APIError) -> RouteReply in
                try server.runSugar(sugar, context, in: simulation)
            }
        }
        self.addPerSimulation(.GET, "/v1/state") { (server: IsletServer, simulation: Simulation, context: RouteContext) throws(APIError) -> RouteReply in
            let text = context.request.query["path"] ?? ""
            let path: JSONPointer
            do throws(APIError) { path = try JSONPointer(parsing: text) } catch {
                throw APIError(.invalidArgument, "the path query parameter: \(error.message)")
            }
            return server.whenPublished(context, in: simulation) { simulation throws(APIError) in
                try Self.stateResponse(simulation, at: path)
            }
        }
        self.addPerSimulation(.GET, "/v1/clock") { (server: IsletServer, simulation: Simulation, context: RouteContext) throws(APIError) -> RouteReply in
            server.whenPublished(context, in: simulation) { simulation throws(APIError) in
                Self.clockResponse(simulation)
            }
        }
        self.addPerSimulation(.GET, "/v1/devices/{id}/scene") { (server: IsletServer, simulation: Simulation, context: RouteContext) throws(APIError) -> RouteReply in
            let id = context.parameters["id"] ?? ""
            let resolve = context.request.query["resolve"]
            guard resolve == nil || resolve == "text" else {
                throw APIError(.invalidArgument, "resolve must be \"text\" (or absent)")
            }
            return server.whenPublished(context, in: simulation) { simulation throws(APIError) in
                try Self.sceneResponse(simulation, device: id, resolveText: resolve == "text")
            }
        }
        for collection in ["devices", "apps", "activities", "widgets", "stacks"] {
            self.addPerSimulation(.GET, "/v1/\(collection)/{id}") { (server: IsletServer, simulation: Simulation, context: RouteContext) throws(APIError) -> RouteReply in
                let path = JSONPointer(tokens: [collection, context.parameters["id"] ?? ""])
                return server.whenPublished(context, in: simulation) { simulation throws(APIError) in
                    try Self.stateResponse(simulation, at: path)
                }
            }
        }
        for method in [HTTPMethod.GET, .POST] {
            self.addPerSimulation(method, "/v1/stacks/{id}/forecast", body: .optionalJSON) { (server: IsletServer, simulation: Simulation, context: RouteContext) throws(APIError) -> RouteReply in
                try server.forecast(context, in: simulation)
            }
        }
        self.addAPNsRoutes()
    }

    /// The what-if query: the stack's rotation over the coming hours, on a copy of the engine,
    /// with optional trial weights (query or body). A read: no command, no revision.
    private func forecast(_ context: RouteContext, in simulation: Simulation) throws(APIError) -> RouteReply {
        let id = context.parameters["id"] ?? ""
        var request = try ForecastRequest(query: context.request.query.map { ($0.name, $0.value) })
        if let body = context.json { request = try ForecastRequest(body: body, over: request) }
        return self.whenPublished(context, in: simulation) { simulation throws(APIError) in
            .json200(
                resultBody(
                    rev: simulation.live.publishedRev, result: try simulation.live.engine.forecast(stack: id, request).json))
        }
    }

    // MARK: Commands

    private func postCommands(_ context: RouteContext, in simulation: Simulation) throws(APIError) -> RouteReply {
        guard case .object(let body)? = context.json else {
            throw APIError(.invalidArgument, "the body must be {\"commands\": [ … ]}", field: .root)
        }
        if let unknown = body.keys.first(where: { $0 != "commands" }) {
            throw APIError(.invalidArgument, "unknown member \"\(unknown)\"", field: JSONPointer(tokens: [unknown]))
        }
        guard case .array(let commands)? = body["commands"] else {
            throw APIError(.invalidArgument, "\"commands\" must be an array of command objects", field: "/commands")
        }
        return try self.submit(commands, context, in: simulation) { revision in
            .json200(resultsBody(rev: revision.rev, results: revision.results))
        } mapError: {
            $0
        }
    }

    private func runSugar(_ sugar: Sugar, _ context: RouteContext, in simulation: Simulation) throws(APIError)
        -> RouteReply
    {
        var command = JSONObject()
        switch context.json {
        case .none: break
        case .object(let object)?: command = object
        case let other?:
            throw APIError(.invalidArgument, "the body must be a JSON object, not \(other.typeName)", field: .root)
        }
        guard command["type"] == nil else {
            throw APIError(.invalidArgument, "the route names the command type; leave out \"type\"", field: "/type")
        }
        if let member = sugar.idMember, let id = context.parameters["id"] {
            if let given = command[member], given != .string(id) {
                throw APIError(
                    .invalidArgument, "\"\(member)\" differs from the path's \(id)",
                    field: JSONPointer(tokens: [member]))
            }
            command[member] = .string(id)
        }
        command["type"] = .string(sugar.type)
        let prefix = JSONPointer(tokens: ["commands", "0"])
        return try self.submit([.object(command)], context, in: simulation) { revision in
            .json200(resultBody(rev: revision.rev, result: revision.results.first ?? [:]))
        } mapError: { error in
            // The body is the command: point into it, not into a batch.
            var mapped = error
            if let field = error.field, field.isWithin(prefix) {
                mapped.field = JSONPointer(tokens: Array(field.tokens.dropFirst(2)))
            }
            return mapped
        }
    }

    /// Submits a batch for a request: rate limit, pipeline, reply after the commit.
    func submit(
        _ commands: [JSONValue], _ context: RouteContext, in simulation: Simulation,
        reply: @escaping (Revision) -> HTTPResponse,
        mapError: @escaping (APIError) -> APIError
    ) throws(APIError) -> RouteReply {
        if let limited = self.rateLimited(commands.count, key: context.token) {
            let seconds = limited.message.split(separator: " ").dropLast().last.map(String.init) ?? "1"
            return .now(limited.httpResponse(headers: ["retry-after": seconds]))
        }
        simulation.live.submit(commands) { result in
            switch result {
            case .success(let revision): context.respondLater(reply(revision))
            case .failure(let error): context.respondLater(mapError(error).httpResponse())
            }
        }
        return .later
    }

    // MARK: Reads

    /// Answers with `body` once every revision produced so far is published (at once when the
    /// pipeline is idle), so a read never shows an uncommitted revision.
    func whenPublished(
        _ context: RouteContext, in simulation: Simulation,
        _ body: @escaping (Simulation) throws(APIError) -> HTTPResponse
    )
        -> RouteReply
    {
        self.whenPublished(context, in: simulation, reply: { simulation throws(APIError) in .now(try body(simulation)) })
    }

    /// ``whenPublished(_:in:_:)`` for a body that may answer later itself (`.later`, then
    /// `context.respondLater`): a fork that rebuilds a past revision off the loop.
    func whenPublished(
        _ context: RouteContext, in simulation: Simulation,
        reply body: @escaping (Simulation) throws(APIError) -> RouteReply
    )
        -> RouteReply
    {
        var immediate: RouteReply?
        var answered = false
        simulation.live.whenPublished {
            let reply: RouteReply
            if let failure = simulation.live.failure, !simulation.live.holdsPublishedState {
                reply = .now(failure.httpResponse())
            } else {
                do throws(APIError) { reply = try body(simulation) } catch { reply = .now(self.refusal(error)) }
            }
            if !answered {
                immediate = reply
            } else if case .now(let response) = reply {
                context.respondLater(response)
            }
        }
        answered = true
        // A body that answers later has started work that will answer.
        if case .later? = immediate { return .later }
        return immediate ?? .later
    }

    static func stateResponse(_ simulation: Simulation, at path: JSONPointer) throws(APIError) -> HTTPResponse {
        let engine = simulation.live.engine
        let rev = simulation.position.revision
        let epoch = simulation.position.epoch
        if path.isRoot {
            return .json200(
                stateBody(epoch: epoch, path: path, rev: rev) { writer in
                    engine.writeDocument { writer.writeEncoded($0) }
                })
        }
        guard let value = engine.value(at: path) else {
            throw APIError(.notFound, "nothing at \(path) in the state document")
        }
        return .json200(stateBody(epoch: epoch, path: path, rev: rev) { $0.write(value) })
    }

    /// `{"nextTransition", "result": <the /clock object>, "rev"}`. `nextTransition` is the engine's
    /// earliest scheduled deadline (or null): harnesses step a paused clock to it, and the
    /// deadline queue is not in the document. A deadline computed past the last writable instant
    /// (a dismissal four hours after an end at 23:00 on 9999-12-31) is never reached, since the
    /// clock stops there, and no `to` can name it: null.
    static func clockResponse(_ simulation: Simulation) -> HTTPResponse {
        let engine = simulation.live.engine
        var writer = JSONWriter()
        writer.writeRaw("{\"nextTransition\":")
        let next = engine.nextDeadline.flatMap { $0 <= .latestWritable ? $0 : nil }
        writer.write(next.map { .string($0.rfc3339) } ?? .null)
        writer.writeRaw(",\"result\":")
        writer.write(engine.value(at: "/clock") ?? .null)
        writer.writeRaw(",\"rev\":")
        writer.write(integer: simulation.live.publishedRev)
        writer.writeRaw("}")
        return .json200(writer.bytes)
    }

    static func sceneResponse(_ simulation: Simulation, device: String, resolveText: Bool) throws(APIError)
        -> HTTPResponse
    {
        let engine = simulation.live.engine
        let path = JSONPointer(tokens: ["devices", device, "scene"])
        guard let scene = engine.value(at: path) else { throw APIError(.notFound, "no device \"\(device)\"") }
        let value = resolveText ? SceneText(engine: engine).resolve(scene) : scene
        let position = simulation.position
        return .json200(stateBody(epoch: position.epoch, path: path, rev: position.revision) { $0.write(value) })
    }
}

extension HTTPResponse {
    /// A 200 JSON response with an already encoded body.
    static func json200(_ body: [UInt8]) -> HTTPResponse {
        HTTPResponse(
            status: 200, headers: ["content-type": "application/json", "cache-control": "no-store"], body: body)
    }
}
