public import IsletCore
import IsletRender
public import IsletTransport
public import Logging
public import Prometheus

/// Islet's HTTP and WebSocket application: the engine and its command pipeline, routes, static
/// files, stream sessions and fan-out, auth, metrics and graceful shutdown, on any `Transport`.
///
/// Loop-confined: create it and call it on the transport's loop thread (with
/// `InMemoryTransport`, on the test's thread). It is the transport's delegate. Call `flush()`
/// at the end of every loop turn (`RunningServer` registers it as the loop's before-poll
/// hook; in-memory tests call it themselves).
public final class IsletServer {
    public let configuration: IsletConfiguration
    public let transport: any Transport
    /// The routes. Add application routes before traffic arrives.
    public var router = Router()
    /// Called when the wall instant the server next needs a turn at changes (nil: none); a
    /// loop arms one timer for it. `RunningServer` sets it.
    public var wakeUpChanged: ((Instant?) -> Void)?
    let staticFiles: StaticFiles?
    let metrics: ServerMetrics
    let logger: Logger
    let clock: TurnClock
    let hub: StreamHub
    /// Every world, `default` included, by id; `order` lists them in creation order.
    private(set) var simulations: [String: Simulation] = [:]
    var order: [String] = []
    /// Where simulations other than `default` keep their logs.
    let storage: SimulationStorage
    /// The per-simulation tokens of every simulation that has them.
    private(set) var simulationTokens: [String: Principal] = [:]
    /// This node's side of a cluster (`--cluster`): the worlds' order lives in Redis.
    var cluster: ClusterNode?
    /// Streams opened with a token this node did not know, waiting for it to catch up with the
    /// cluster's creations, with the messages they sent meanwhile.
    var streamsCatchingUp: [ConnectionID: [WebSocketMessage]] = [:]
    /// Work waiting for a fork's genesis snapshot to be written, by the fork's id.
    var genesisWaiters: [String: [() -> Void]] = [:]
    let access: Access
    var rateLimiter: RateLimiter
    let hello: StreamHello
    private var armedWakeUp: Instant?
    public private(set) var isShuttingDown = false
    /// Set once the commit stage was closed at shutdown: no turn produces revisions after it.
    private var isClosed = false

    /// The WebSocket subprotocol of `/v1/stream`.
    public static let streamSubprotocol = "islet.v1"
    public static let streamPath = "/v1/stream"

    /// Creates the server on `transport`. Make it the transport's delegate afterwards
    /// (`transport.delegate = server`); `RunningServer` does this.
    ///
    /// - Parameters:
    ///   - registry: Where metrics are recorded and rendered from (`/metrics`).
    ///   - timeSource: The wall clock, read at most once per loop turn.
    ///   - commitStage: Where each turn's revisions are made durable before anyone sees them.
    ///   - engine: The engine to serve; by default an empty one (Mustache renderer).
    ///   - epoch: The history's name; by default a random one (a server without a store starts
    ///     a new history every time).
    ///   - recovered: The state recovered from a command log (`StoreRecovery`): its engine,
    ///     epoch and stream history replace `engine` and `epoch`.
    ///   - storage: Where the other simulations keep their logs (see `restoreSimulations()`).
    ///   - routes: Extra routes, matched after the built-in ones.
    /// - Throws: `ConfigurationError` if the public directory is unusable.
    public init(
        configuration: IsletConfiguration, transport: any Transport, logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        timeSource: any TimeSource = SystemTimeSource(), commitStage: any CommitStage = ImmediateCommitStage(),
        engine: Engine? = nil, epoch: String? = nil, recovered: RecoveredState? = nil,
        storage: SimulationStorage = .none, routes: [Route] = []
    ) throws(ConfigurationError) {
        self.configuration = configuration
        self.transport = transport
        self.logger = logger
        self.metrics = ServerMetrics(registry: registry)
        self.hello = StreamHello(limits: configuration.limits, node: configuration.cluster?.nodeID)
        self.access = Access(configuration: configuration)
        self.rateLimiter = RateLimiter(configuration.rateLimit)
        self.staticFiles = try configuration.publicDirectory.map { directory throws(ConfigurationError) in
            try StaticFiles(directory: directory)
        }
        let clock = TurnClock(source: timeSource)
        self.clock = clock
        self.storage = storage
        self.hub = StreamHub(transport: transport, clock: clock, configuration: configuration, logger: logger)
        let history = RevisionHistory(
            maxRevisions: configuration.stream.historyRevisions, maxBytes: configuration.stream.historyBytes)
        self.attach(
            SimulationName.default,
            engine: recovered?.engine ?? engine ?? Self.freshEngine(configuration, at: clock.now),
            epoch: recovered?.epoch ?? epoch ?? randomEpoch(), history: recovered?.history ?? history,
            stage: commitStage, created: clock.now, tokens: nil)
        self.addBuiltInRoutes()
        self.addSimulationRoutes()
        self.addAPIRoutes()
        self.addOpenAPIRoute()
        for route in routes { self.router.add(route) }
    }

    /// Serves a world from now on: its pipeline publishes to the hub, its failures close its streams.
    @discardableResult
    func attach(
        _ id: String, engine: Engine, epoch: String, history: RevisionHistory, stage: any CommitStage, created: Instant,
        tokens: SimulationTokens?
    ) -> Simulation {
        let live = LiveSimulation(engine: engine, epoch: epoch, clock: self.clock, commitStage: stage, logger: self.logger)
        let stream = SimulationStream(id: id, simulation: live, history: history)
        live.publish = { [unowned self, unowned stream] records in
            self.metrics.published(records)
            self.metrics.discarded(records)
            self.hub.publish(records, in: stream)
        }
        live.failed = { [unowned self] _ in self.storeFailed(id) }
        live.refused = { [unowned self] error in self.metrics.refused(error) }
        live.committed = { [unowned self] count, duration in self.metrics.committed(count, in: duration) }
        self.hub.add(stream)
        let simulation = Simulation(id: id, live: live, stream: stream, created: created, tokens: tokens)
        self.simulations[id] = simulation
        if let tokens {
            self.simulationTokens[tokens.admin] = Principal(role: .admin, simulation: id)
            self.simulationTokens[tokens.viewer] = Principal(role: .viewer, simulation: id)
        }
        self.order.append(id)
        return simulation
    }

    /// Stops serving a world (its stage is closed by the caller). Its commands still waiting for
    /// a cluster's log are answered `not_found`: their entries will not be applied.
    func detach(_ id: String) {
        self.simulations[id]?.live.abandonProposals(APIError(.notFound, "simulation \"\(id)\" was deleted"))
        if let tokens = self.simulations[id]?.tokens {
            self.simulationTokens[tokens.admin] = nil
            self.simulationTokens[tokens.viewer] = nil
        }
        self.hub.remove(simulation: id)
        self.simulations[id] = nil
        self.order.removeAll { $0 == id }
    }

    /// The `default` simulation: the unprefixed routes, the demo and `hello` address it.
    var defaultSimulation: Simulation { self.simulations[SimulationName.default]! }

    /// The `default` simulation's pipeline.
    var simulation: LiveSimulation { self.defaultSimulation.live }

    /// An empty simulation on the clock the configuration asks for.
    static func freshEngine(_ configuration: IsletConfiguration, at wall: Instant) -> Engine {
        let clock = configuration.virtualClockStart.map { SimulationClock.virtual(now: $0, rate: 0, atWall: wall) }
        return Engine(renderer: MustacheRenderer(), at: wall, clock: clock)
    }

    /// The transport settings that follow from this configuration.
    public static func transportConfiguration(for configuration: IsletConfiguration) -> TransportConfiguration {
        TransportConfiguration(
            host: configuration.host, port: configuration.port, subprotocols: [Self.streamSubprotocol],
            maxRequestBodyBytes: configuration.limits.httpBodyBytes,
            maxMessageBytes: configuration.limits.webSocketMessageBytes,
            outboundCapBytes: configuration.limits.outboundBytes, extraHeaderNames: APNsRoutes.headerNames,
            tls: configuration.tls.map {
                TransportConfiguration.TLS(
                    certificatePath: $0.certificatePath, keyPath: $0.keyPath, port: $0.port,
                    handshakeTimeout: $0.handshakeTimeout, idleTimeout: .seconds(configuration.stream.idleTimeoutSeconds))
            },
            webSocketCompression: configuration.webSocketCompression,
            webSocketWriteDelay: .milliseconds(configuration.stream.writeDelayMilliseconds),
            pingIntervalSeconds: configuration.stream.pingSeconds,
            idleTimeoutSeconds: configuration.stream.idleTimeoutSeconds,
            maxConnections: configuration.limits.connections)
    }

    private func addBuiltInRoutes() {
        let this = LoopConfined(self)
        // 503 once a simulation's store failed: it accepts no more commands until a restart.
        self.router.add(.GET, "/healthz", access: .open) { (_: RouteContext) throws(APIError) -> RouteReply in
            guard let server = this.value else { throw APIError(.internal, "server gone") }
            let failed = server.order.filter { id in
                server.simulations[id].map { $0.live.failure != nil && !$0.live.isLost } ?? false
            }
            guard failed.isEmpty else {
                let body: JSONValue = ["status": "store_failed", "simulations": .array(failed.map(JSONValue.string))]
                return .now(HTTPResponse(status: 503, headers: ["content-type": "application/json"], body: body.encoded))
            }
            // A cluster node behind the log is taken out by the balancer; one that cannot reach
            // Redis is no further behind than any other, so it keeps serving reads.
            if let cluster = server.cluster {
                let health = cluster.health
                let body: JSONValue = [
                    "status": .string(health == "lagging" ? "lagging" : "ok"), "cluster": .string(health),
                    "node": .string(cluster.settings.nodeID),
                ]
                return .now(
                    HTTPResponse(
                        status: health == "lagging" ? 503 : 200, headers: ["content-type": "application/json"],
                        body: body.encoded))
            }
            return .now(.json(["status": "ok"]))
        }
        self.router.add(.GET, "/v1/cluster") { (_: RouteContext) throws(APIError) -> RouteReply in
            guard let server = this.value else { throw APIError(.internal, "server gone") }
            guard let cluster = server.cluster else {
                throw APIError(.notFound, "this server is not a cluster node (islet serve --cluster redis://…)")
            }
            return .now(.json200(cluster.summary.encoded))
        }
        self.router.add(.GET, "/metrics") { (_: RouteContext) throws(APIError) -> RouteReply in
            guard let server = this.value else { throw APIError(.internal, "server gone") }
            let body = server.metrics.render(
                transport: server.transport.statistics, stream: server.hub.counters,
                simulations: server.simulations.count)
            return .now(HTTPResponse(status: 200, headers: ["content-type": "text/plain; version=0.0.4"], body: body))
        }
        self.router.add(.GET, Self.streamPath) { (_: RouteContext) throws(APIError) -> RouteReply in
            throw APIError(
                .invalidArgument, "\(Self.streamPath) is a WebSocket endpoint (subprotocol \(Self.streamSubprotocol))")
        }
    }

    // MARK: The loop turn

    /// The end of a loop turn: due transitions, the commit stage, replies, patches, pending
    /// snapshots and resyncs, the slow-consumer timeout, and the wake-up timer.
    public func flush() {
        guard !self.isClosed else { return }
        for id in self.order { self.simulations[id]?.live.flush() }
        self.cluster?.flush()
        self.hub.serviceAll(now: self.now)
        for id in self.order {
            guard let simulation = self.simulations[id], simulation.live.isIdle else { continue }
            self.snapshotIfDue(simulation)
        }
        self.rearmWakeUp()
        self.clock.endTurn()
    }

    /// Hands the published state to the commit stage when it wants a snapshot. The pipeline is
    /// idle, so the engine is exactly at the published (and committed) revision.
    private func snapshotIfDue(_ simulation: Simulation) {
        let live = simulation.live
        guard live.failure == nil, live.commitStage.snapshotIsDue(rev: live.publishedRev, wall: self.now) else {
            return
        }
        live.commitStage.snapshot(simulation.publishedState(wall: self.now))
    }

    /// The loop's wake-up timer fired. It may fire before the instant it was armed for (libuv
    /// counts from its cached loop time, which may be a turn old, in whole milliseconds): the
    /// turn then finds nothing due, so the next turn arms it again even for the same instant,
    /// or nothing would wake the server for it.
    public func wakeUpFired() {
        self.armedWakeUp = nil
    }

    private func rearmWakeUp() {
        var wake = self.hub.nextSlowDeadline
        // A simulation whose store failed fires nothing (its turns stop at the failure): its
        // deadline, soon past, would otherwise be armed again after every firing.
        for simulation in self.simulations.values where simulation.live.failure == nil {
            if let next = simulation.live.nextWakeUp, wake.map({ next < $0 }) ?? true { wake = next }
        }
        guard wake != self.armedWakeUp else { return }
        self.armedWakeUp = wake
        self.wakeUpChanged?(wake)
    }

    /// The wall clock reading of this turn.
    var now: Instant { self.clock.now }

    /// The `default` simulation's published position (for `hello`, tests and diagnostics).
    public var position: StreamPosition { self.defaultSimulation.position }

    /// The `default` simulation's engine as it is now (it may be ahead of `position` within a loop turn).
    public var engine: Engine { self.simulation.engine }

    // MARK: Shutdown

    /// Stops accepting connections, closes every stream with 1001 after its queued messages,
    /// lets replies drain (at most `shutdownGracePeriod`), then calls `completion`.
    public func shutdown(completion: @escaping () -> Void) {
        guard !self.isShuttingDown else { return }
        self.isShuttingDown = true
        self.logger.info("shutting down", metadata: ["islet.open.streams": "\(self.hub.connections.count)"])
        self.transport.stopAccepting()
        for connection in self.hub.connections.keys.sorted() {
            self.transport.close(connection, code: .goingAway, reason: "server shutting down")
        }
        self.transport.shutdown(gracePeriod: self.configuration.shutdownGracePeriod) { [self] in
            // Replies have drained: what is published is final. A last snapshot spares the next
            // start its replay; then the stores close, one after the other.
            let worlds = self.order.compactMap { self.simulations[$0] }
            let wall = self.now
            self.isClosed = true
            let storage = self.storage
            func close(_ index: Int) {
                guard index < worlds.count else {
                    storage.close()
                    return completion()
                }
                let live = worlds[index].live
                let state = live.isIdle && live.failure == nil ? worlds[index].publishedState(wall: wall) : nil
                live.commitStage.close(state) { close(index + 1) }
            }
            guard let cluster = self.cluster else { return close(0) }
            cluster.close { close(0) }
        }
    }

    /// A simulation's store failed: its streams close with 1011 (connections subscribed elsewhere too).
    private func storeFailed(_ id: String) {
        for connection in self.hub.connections.keys.sorted() {
            guard self.hub.connections[connection]?.subscriptions.values.contains(where: { $0.simulation == id }) ?? false
                || id == SimulationName.default
            else { continue }
            self.transport.close(connection, code: .internalError, reason: "store failed")
        }
    }

    /// Open `/v1/stream` sessions.
    public var openStreams: Int { self.hub.connections.count }
}

/// A random name for a new history: 32 hexadecimal digits.
func randomEpoch() -> String {
    var generator = SystemRandomNumberGenerator()
    return (0..<2).map { _ in
        let hex = String(generator.next() as UInt64, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }.joined()
}

/// Carries a loop-confined value into a `@Sendable` closure that will only run on the loop
/// thread (route handlers). The reference is weak so a route never keeps the server alive.
final class LoopConfined<T: AnyObject>: @unchecked Sendable {
    weak var value: T?
    init(_ value: T) { self.value = value }
}

/// What the stream side is doing, for tests and diagnostics.
public struct StreamDiagnostics: Sendable, Equatable {
    public var openStreams: Int
    /// Connections over their outbound cap, waiting for their queue to drain.
    public var slowConsumers: Int
    public var resyncs: UInt64
    public var slowConsumerCloses: UInt64
    public var patchFrames: UInt64
    /// Revisions held for resuming, and the oldest.
    public var historyRevisions: Int
    public var oldestHistoryRevision: UInt64?
    /// Queued outbound bytes per open stream (the cap bounds each).
    public var queuedBytes: [Int]
}

extension IsletServer {
    public var streamDiagnostics: StreamDiagnostics {
        StreamDiagnostics(
            openStreams: self.hub.connections.count, slowConsumers: self.hub.slowCount,
            resyncs: self.hub.counters.resyncs, slowConsumerCloses: self.hub.counters.slowConsumerCloses,
            patchFrames: self.hub.counters.patchFrames, historyRevisions: self.defaultSimulation.stream.history.count,
            oldestHistoryRevision: self.defaultSimulation.stream.history.oldest,
            queuedBytes: self.hub.connections.keys.sorted().map { self.transport.queuedBytes(of: $0) })
    }
}
