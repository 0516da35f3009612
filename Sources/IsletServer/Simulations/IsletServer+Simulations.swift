import IsletCore
import IsletRender
import IsletTransport
import Logging

/// `/v1/simulations`: create (or fork), list, read and delete the isolated worlds of a server.
extension IsletServer {
    func addSimulationRoutes() {
        let this = LoopConfined(self)
        self.router.add(.POST, "/v1/simulations", body: .optionalJSON, access: .mutate) {
            (context: RouteContext) throws(APIError) -> RouteReply in
            guard let server = this.value else { throw APIError(.internal, "server gone") }
            return try server.createSimulation(try SimulationRequest(context.json), context)
        }
        self.router.add(.GET, "/v1/simulations") { (_: RouteContext) throws(APIError) -> RouteReply in
            guard let server = this.value else { throw APIError(.internal, "server gone") }
            let list = server.simulations.keys.sorted().compactMap { id in
                server.simulations[id].map { $0.summary(bytes: server.storage.bytes(of: id, logger: server.logger)) }
            }
            return .now(.json200(JSONValue.object(["simulations": .array(list)]).encoded))
        }
        self.router.add(.GET, "/v1/simulations/{simulation}") { (context: RouteContext) throws(APIError) -> RouteReply in
            guard let server = this.value else { throw APIError(.internal, "server gone") }
            return try server.withSimulation(named: context.parameters["simulation"], context) { simulation in
                .now(.json200(simulation.summary(bytes: server.storage.bytes(of: simulation.id, logger: server.logger)).encoded))
            }
        }
        self.router.add(.DELETE, "/v1/simulations/{simulation}", access: .mutate) {
            (context: RouteContext) throws(APIError) -> RouteReply in
            guard let server = this.value else { throw APIError(.internal, "server gone") }
            return try server.withSimulation(named: context.parameters["simulation"], context) {
                simulation throws(APIError) in try server.deleteSimulation(simulation, context)
            }
        }
    }

    /// Serves every simulation the storage holds besides `default` (at start, before traffic).
    /// - Throws: `StoreError` or `RecoveryError` naming the file of a simulation that cannot be
    ///   restored; nothing is started over it.
    public func restoreSimulations() throws {
        let stage = self.defaultSimulation.live.commitStage
        let restored = try self.storage.recoverAll(configuration: self.configuration, logger: self.logger) {
            stage.engine(at: $0)
        }
        for stored in restored {
            let simulation = self.attach(
                stored.id, engine: stored.state.engine, epoch: stored.state.epoch, history: stored.state.history,
                stage: stored.stage, created: stored.created, tokens: stored.tokens)
            if let genesis = stored.pendingGenesis {
                self.writeGenesis(genesis, of: simulation, forkOf: stored.pendingGenesisSource)
            }
        }
        if self.simulations.count > 1 {
            self.logger.info("simulations restored", metadata: ["islet.sims": "\(self.simulations.count - 1)"])
        }
    }

    /// The ids of the simulations served, in creation order (`default` first).
    public var simulationIDs: [String] { self.order }

    // MARK: Create and fork

    private func createSimulation(_ request: SimulationRequest, _ context: RouteContext) throws(APIError) -> RouteReply {
        let id = request.id ?? self.unusedSimulationID()
        guard self.simulations[id] == nil else {
            throw APIError(.conflict, "simulation \"\(id)\" exists", field: "/id")
        }
        guard let from = request.from else {
            let engine = Engine(
                renderer: MustacheRenderer(), at: self.now, clock: request.clock(at: self.now) ?? self.freshClock)
            return try self.establish(id, engine: engine, tokens: request.tokens, demo: request.demo, context)
        }
        if let cluster = self.cluster {
            return try self.withSimulation(named: from.simulation, context) { [unowned self] source throws(APIError) in
                // A replica's engine is always at an applied revision: a fork of the latest starts
                // from it; one of the past is rebuilt from Redis.
                guard let rev = from.rev, rev != source.live.publishedRev else {
                    return try self.establish(
                        id, engine: source.live.engine, clock: request.clock(at: self.now), tokens: request.tokens,
                        demo: request.demo, context)
                }
                cluster.engine(of: source, at: rev) { [weak self] result in
                    guard let self else { return }
                    let reply: RouteReply
                    do throws(APIError) {
                        reply = try self.establish(
                            id, engine: try result.get(), clock: request.clock(at: self.now), tokens: request.tokens,
                            demo: request.demo, context)
                    } catch {
                        reply = .now(self.refusal(error))
                    }
                    if case .now(let response) = reply { context.respondLater(response) }
                }
                return .later
            }
        }
        let source = try self.simulation(named: from.simulation)
        // The source's engine is its published state only when its pipeline is idle.
        return self.whenPublished(context, in: source, reply: { [unowned self] source throws(APIError) in
            let published = source.live.publishedRev
            guard let rev = from.rev, rev != published else {
                return .now(try self.fork(id, of: source, at: published, .success(source.live.engine), request, context))
            }
            guard rev < published else {
                let unavailable = Self.revisionUnavailable(source, rev)
                return .now(try self.fork(id, of: source, at: rev, .failure(unavailable), request, context))
            }
            // A past revision is replayed from the log off the loop: up to `--snapshot-every`
            // records, which would hold up every other simulation's clients.
            source.live.commitStage.rebuild(at: rev) { [weak self] result in
                guard let self else { return }
                let engine = result.mapError { _ in Self.revisionUnavailable(source, rev) }
                let response: HTTPResponse
                do throws(APIError) {
                    response = try self.fork(id, of: source, at: rev, engine, request, context)
                } catch {
                    response = self.refusal(error)
                }
                context.respondLater(response)
            }
            return .later
        })
    }

    /// A fork of `source` at `rev`, once its state (`engine`) is at hand or known unavailable.
    private func fork(
        _ id: String, of source: Simulation, at rev: UInt64, _ engine: Result<Engine, APIError>,
        _ request: SimulationRequest, _ context: RouteContext
    ) throws(APIError) -> HTTPResponse {
        // Other requests ran meanwhile: the source may be gone, the name or the last place taken.
        guard self.simulations[source.id] === source else {
            throw APIError(.notFound, "no simulation \"\(source.id)\"", field: "/from/simulation")
        }
        let engine = try engine.get()
        guard self.simulations[id] == nil else {
            throw APIError(.conflict, "simulation \"\(id)\" exists", field: "/id")
        }
        let created = try self.establish(
            id, engine: engine, clock: request.clock(at: self.now), forkOf: (source.id, rev), tokens: request.tokens,
            demo: request.demo, context)
        guard case .now(let response) = created else { preconditionFailure("a fork loads no demo") }
        return response
    }

    /// A cluster's create: the world starts on every node from the log; the reply waits for
    /// this node to serve it (and, with `demo`, for the demo's setup to come back applied).
    private func establishInCluster(
        _ cluster: ClusterNode, _ id: String, genesis: Engine, tokens: SimulationTokens?, demo: Bool,
        _ context: RouteContext
    ) -> RouteReply {
        cluster.create(id, genesis: genesis, tokens: tokens) { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let error): context.respondLater(self.refusal(error))
            case .success(let simulation):
                guard demo else { return context.respondLater(Self.createdResponse(simulation)) }
                self.loadDemo(into: simulation)
                let reply = self.whenPublished(context, in: simulation) { simulation throws(APIError) in
                    Self.createdResponse(simulation)
                }
                if case .now(let response) = reply { context.respondLater(response) }
            }
        }
        return .later
    }

    /// The clock a new world gets when the request names none: the one `--virtual-clock` asks for.
    private var freshClock: SimulationClock? {
        self.configuration.virtualClockStart.map { SimulationClock.virtual(now: $0, rate: 0, atWall: self.now) }
    }

    /// `conflict` at `/from/rev`: the source's log does not reach `rev` (or it is yet to come).
    private static func revisionUnavailable(_ source: Simulation, _ rev: UInt64) -> APIError {
        let published = source.live.publishedRev
        let earliest = source.live.commitStage.earliestRevision() ?? published
        return APIError(
            .conflict,
            "simulation \"\(source.id)\" has no revision \(rev) to fork from: the earliest available is \(earliest), the latest \(published)",
            field: "/from/rev")
    }

    /// Stores the new world's revision 0 and starts serving it; with `demo`, the demo scenario's
    /// setup follows as its first revisions, and the reply waits for their commit.
    private func establish(
        _ id: String, engine: Engine, clock: SimulationClock? = nil, forkOf source: (id: String, rev: UInt64)? = nil,
        tokens wantsTokens: Bool, demo: Bool, _ context: RouteContext
    ) throws(APIError) -> RouteReply {
        // Checked here, not on arrival: a fork waits for its source, and other creations may come first.
        guard self.simulations.count < self.configuration.maxSimulations else { throw self.simulationLimitError }
        let tokens = wantsTokens ? SimulationTokens.random() : nil
        var random = SystemRandomNumberGenerator()
        let salt = (random.next() | 1) & ((1 << 53) - 1)
        let genesis = engine.forked(clock: clock, atWall: self.now, tokenSalt: salt)
        if let cluster = self.cluster {
            return self.establishInCluster(cluster, id, genesis: genesis, tokens: tokens, demo: demo, context)
        }
        // A fork stores a reference to its source at once and its (possibly large) genesis
        // snapshot afterwards, off the loop: the reply does not wait for the encoding.
        let reference = source.map {
            ForkReference(source: $0.id, rev: $0.rev, clock: clock, created: self.now, salt: salt)
        }
        let stored: StoredSimulation
        do {
            stored = try self.storage.create(
                id, engine: genesis, wall: self.now, tokens: tokens, fork: reference, configuration: self.configuration,
                logger: self.logger)
        } catch let error as APIError {
            throw error
        } catch {
            self.logger.error("creating a simulation failed", metadata: ["islet.sim": "\(id)", "error": "\(error)"])
            throw APIError(.internal, "the simulation's log could not be created: \(error)")
        }
        let simulation = self.attach(
            id, engine: stored.state.engine, epoch: stored.state.epoch, history: stored.state.history,
            stage: stored.stage, created: stored.created, tokens: stored.tokens)
        if let pending = stored.pendingGenesis { self.writeGenesis(pending, of: simulation, forkOf: source?.id) }
        self.logger.info(
            "simulation created", metadata: ["islet.sim": "\(id)", "islet.sim.epoch": "\(simulation.live.epoch)"])
        guard demo else { return .now(Self.createdResponse(simulation)) }
        self.loadDemo(into: simulation)
        return self.whenPublished(context, in: simulation) { simulation throws(APIError) in
            Self.createdResponse(simulation)
        }
    }

    /// Writes a fork's genesis snapshot in the background; until it is written the fork's log
    /// refers to its source, so deleting the source waits for it (`genesisWaiters`). A write
    /// that fails keeps the reference (and the genesis, to try again when the source is deleted).
    private func writeGenesis(_ genesis: Engine, of simulation: Simulation, forkOf source: String?) {
        simulation.pendingGenesisSource = source ?? SimulationName.default
        simulation.unwrittenGenesis = nil
        // The fork may be deleted before its genesis is written: the waiters on it run all the same.
        let id = simulation.id
        let stage = simulation.live.commitStage
        stage.writeGenesis(genesis, wall: simulation.created) { [weak self, weak simulation] written in
            if written {
                simulation?.pendingGenesisSource = nil
            } else {
                simulation?.unwrittenGenesis = genesis
            }
            guard let self else { return }
            let waiters = self.genesisWaiters.removeValue(forKey: id) ?? []
            for waiter in waiters { waiter() }
        }
    }

    /// `201 {"id","epoch","rev","tokens"?}` at the published revision.
    private static func createdResponse(_ simulation: Simulation) -> HTTPResponse {
        var body: JSONObject = [
            "id": .string(simulation.id), "epoch": .string(simulation.live.epoch),
            "rev": .number(Double(simulation.live.publishedRev)),
        ]
        if let tokens = simulation.tokens { body["tokens"] = tokens.json }
        return HTTPResponse(
            status: 201, headers: ["content-type": "application/json", "cache-control": "no-store"],
            body: JSONValue.object(body).encoded)
    }

    /// `s-` and 8 hexadecimal digits, not in use.
    private func unusedSimulationID() -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let hex = String(generator.next() as UInt32, radix: 16)
            let id = "s-" + String(repeating: "0", count: 8 - hex.count) + hex
            if self.simulations[id] == nil { return id }
        }
    }

    // MARK: Delete

    /// Deletes a world once its pipeline is idle: its streams get `resync` (`deleted`), its log
    /// closes and its files are removed. `default` always exists. `retried`: the forks whose
    /// failed genesis write this delete has already tried again.
    private func deleteSimulation(
        _ simulation: Simulation, _ context: RouteContext, retried: Set<String> = []
    ) throws(APIError) -> RouteReply {
        guard simulation.id != SimulationName.default else {
            throw APIError(.conflict, "the default simulation always exists; it cannot be deleted")
        }
        if let fork = self.simulations.values.first(where: { $0.pendingGenesisSource == simulation.id }) {
            return try self.deleteAfterGenesis(of: fork, source: simulation, context, retried: retried)
        }
        if let cluster = self.cluster {
            cluster.delete(simulation) { result in
                switch result {
                case .failure(let error): context.respondLater(self.refusal(error))
                case .success:
                    context.respondLater(.json200(JSONValue.object(["id": .string(simulation.id), "deleted": true]).encoded))
                }
            }
            return .later
        }
        return self.whenPublished(context, in: simulation, reply: { [unowned self] simulation throws(APIError) in
            guard self.simulations[simulation.id] === simulation else {
                throw APIError(.notFound, "no simulation \"\(simulation.id)\"")
            }
            self.removeStored(simulation, context)
            return .later
        })
    }

    /// A fork whose genesis snapshot is not written yet refers to `source`'s log: the delete
    /// waits for the write (trying a failed one again, once per fork); while it fails, the
    /// delete is refused (`503`) rather than leave a fork no restart could rebuild.
    private func deleteAfterGenesis(
        of fork: Simulation, source: Simulation, _ context: RouteContext, retried: Set<String>
    ) throws(APIError) -> RouteReply {
        var retried = retried
        if let genesis = fork.unwrittenGenesis {
            guard !retried.contains(fork.id) else {
                throw APIError(
                    .unavailable,
                    "simulation \"\(source.id)\" cannot be deleted yet: the first snapshot of its fork "
                        + "\"\(fork.id)\" could not be written (see the server's log), so that fork still needs its "
                        + "log; retry once the cause is fixed, or delete \"\(fork.id)\" first")
            }
            self.writeGenesis(genesis, of: fork, forkOf: source.id)
            retried.insert(fork.id)
        }
        self.genesisWaiters[fork.id, default: []].append { [weak self] in
            guard let self else { return }
            let reply: RouteReply
            do throws(APIError) { reply = try self.deleteSimulation(source, context, retried: retried) } catch {
                reply = .now(self.refusal(error))
            }
            if case .now(let response) = reply { context.respondLater(response) }
        }
        return .later
    }

    /// Closes an idle world's log and removes it from the store, then detaches it. Acknowledged
    /// once the deletion is written: if it cannot be (a full disk), the reply is 500 and the
    /// world stays, its log intact, refusing commands as after a failed commit.
    private func removeStored(_ simulation: Simulation, _ context: RouteContext) {
        let storage = self.storage
        let logger = self.logger
        simulation.live.commitStage.close(nil) { [weak self] in
            guard let self else { return }
            do {
                try storage.remove(simulation.id, logger: logger)
            } catch {
                simulation.live.storeFailed(error)
                let message = "the store failed: simulation \"\(simulation.id)\" stays, refusing commands"
                context.respondLater(APIError(.internal, message + ", until a restart").httpResponse())
                return
            }
            self.detach(simulation.id)
            self.logger.info("simulation deleted", metadata: ["islet.sim": "\(simulation.id)"])
            context.respondLater(.json200(JSONValue.object(["id": .string(simulation.id), "deleted": true]).encoded))
        }
    }
}

/// The body of `POST /v1/simulations`, checked.
struct SimulationRequest {
    struct Source {
        var simulation: String
        var rev: UInt64?
    }

    var id: String?
    var clockMode: SimulationClock.Mode?
    var clockNow: Instant?
    var clockRate: Double?
    var demo = false
    var tokens = false
    var from: Source?

    init(_ body: JSONValue?) throws(APIError) {
        guard let body else { return }
        guard case .object(let object) = body else {
            throw APIError(.invalidArgument, "the body must be a JSON object", field: .root)
        }
        try Self.rejectUnknown(object, ["id", "clock", "demo", "tokens", "from"], under: .root)
        if let value = object["id"] {
            guard let id = value.stringValue else { throw APIError(.invalidArgument, "\"id\" must be a string", field: "/id") }
            try SimulationName.validate(id, field: "/id")
            self.id = id
        }
        if let value = object["demo"] {
            guard case .bool(let demo) = value else {
                throw APIError(.invalidArgument, "\"demo\" must be true or false", field: "/demo")
            }
            self.demo = demo
        }
        if let value = object["tokens"] {
            guard case .bool(let tokens) = value else {
                throw APIError(.invalidArgument, "\"tokens\" must be true or false", field: "/tokens")
            }
            self.tokens = tokens
        }
        if let value = object["clock"] { try self.readClock(value) }
        if let value = object["from"] { try self.readSource(value) }
        if self.demo && self.from != nil {
            throw APIError(.invalidArgument, "\"demo\" loads into an empty simulation, not into a fork", field: "/demo")
        }
    }

    private mutating func readClock(_ value: JSONValue) throws(APIError) {
        guard case .object(let clock) = value else {
            throw APIError(.invalidArgument, "\"clock\" must be {\"mode\", \"now\"?, \"rate\"?}", field: "/clock")
        }
        try Self.rejectUnknown(clock, ["mode", "now", "rate"], under: "/clock")
        if let mode = clock["mode"] {
            guard let mode = mode.stringValue.flatMap(SimulationClock.Mode.init(rawValue:)) else {
                throw APIError(.invalidArgument, "\"mode\" is \"virtual\" or \"wall\"", field: "/clock/mode")
            }
            self.clockMode = mode
        }
        if let now = clock["now"] {
            guard let text = now.stringValue, let instant = try? Instant(rfc3339: text) else {
                throw APIError(.invalidArgument, "\"now\" must be an RFC 3339 date", field: "/clock/now")
            }
            self.clockNow = instant
        }
        if let rate = clock["rate"] {
            guard let rate = rate.numberValue, rate >= 0, rate <= 1_000_000 else {
                throw APIError(
                    .invalidArgument, "a rate is from 0 (paused) to 1000000 simulated seconds per second",
                    field: "/clock/rate")
            }
            self.clockRate = rate
        }
        if (self.clockMode ?? .virtual) == .wall, self.clockNow != nil || (self.clockRate ?? 1) != 1 {
            throw APIError(.invalidArgument, "a wall clock has no \"now\" and runs at rate 1", field: "/clock")
        }
    }

    private mutating func readSource(_ value: JSONValue) throws(APIError) {
        guard case .object(let from) = value else {
            throw APIError(.invalidArgument, "\"from\" must be {\"simulation\": id, \"rev\"?: n}", field: "/from")
        }
        try Self.rejectUnknown(from, ["simulation", "rev"], under: "/from")
        guard let simulation = from["simulation"]?.stringValue else {
            throw APIError(.invalidArgument, "\"from.simulation\" must be a simulation id", field: "/from/simulation")
        }
        try SimulationName.validate(simulation, field: "/from/simulation")
        var source = Source(simulation: simulation)
        if let rev = from["rev"] {
            guard case .number(let number) = rev, let exact = number.uint64Value else {
                throw APIError(.invalidArgument, "\"from.rev\" must be a revision number", field: "/from/rev")
            }
            source.rev = exact
        }
        self.from = source
    }

    /// The clock the request asks for, anchored at `wall`; nil when it names none.
    func clock(at wall: Instant) -> SimulationClock? {
        guard self.clockMode != nil || self.clockNow != nil || self.clockRate != nil else { return nil }
        switch self.clockMode ?? .virtual {
        case .wall: return .wall(at: wall)
        case .virtual: return .virtual(now: self.clockNow ?? wall, rate: self.clockRate ?? 0, atWall: wall)
        }
    }

    private static func rejectUnknown(_ object: JSONObject, _ known: Set<String>, under prefix: JSONPointer)
        throws(APIError)
    {
        if let unknown = object.keys.first(where: { !known.contains($0) }) {
            throw APIError(.invalidArgument, "unknown member \"\(unknown)\"", field: prefix.appending(unknown))
        }
    }
}

extension IsletServer {
    /// The refusal of a simulation past `--max-simulations`.
    var simulationLimitError: APIError {
        var error = APIError(
            .limitExceeded, "at most \(self.configuration.maxSimulations) simulations (--max-simulations)")
        error.limit = "simulations"
        return error
    }
}
