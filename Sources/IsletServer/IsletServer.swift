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
    let simulation: LiveSimulation
    let hub: StreamHub
    let access: Access
    var rateLimiter: RateLimiter
    private let hello: StreamHello
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
    ///   - routes: Extra routes, matched after the built-in ones.
    /// - Throws: `ConfigurationError` if the public directory is unusable.
    public init(
        configuration: IsletConfiguration, transport: any Transport, logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        timeSource: any TimeSource = SystemTimeSource(), commitStage: any CommitStage = ImmediateCommitStage(),
        engine: Engine? = nil, epoch: String? = nil, recovered: RecoveredState? = nil, routes: [Route] = []
    ) throws(ConfigurationError) {
        self.configuration = configuration
        self.transport = transport
        self.logger = logger
        self.metrics = ServerMetrics(registry: registry)
        self.hello = StreamHello(limits: configuration.limits)
        self.access = Access(configuration: configuration)
        self.rateLimiter = RateLimiter(configuration.rateLimit)
        self.staticFiles = try configuration.publicDirectory.map { directory throws(ConfigurationError) in
            try StaticFiles(directory: directory)
        }
        let clock = TurnClock(source: timeSource)
        self.simulation = LiveSimulation(
            engine: recovered?.engine ?? engine ?? Self.freshEngine(configuration, at: clock.now),
            epoch: recovered?.epoch ?? epoch ?? randomEpoch(), clock: clock, commitStage: commitStage, logger: logger)
        self.hub = StreamHub(
            transport: transport, simulation: self.simulation, configuration: configuration, logger: logger)
        if let recovered { self.hub.restore(history: recovered.history) }
        self.simulation.publish = { [unowned self] records in self.hub.publish(records) }
        self.simulation.failed = { [unowned self] _ in self.storeFailed() }
        self.simulation.committed = { [unowned self] count, duration in self.metrics.committed(count, in: duration) }
        self.addBuiltInRoutes()
        self.addAPIRoutes()
        for route in routes { self.router.add(route) }
    }

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
                TransportConfiguration.TLS(certificatePath: $0.certificatePath, keyPath: $0.keyPath, port: $0.port)
            },
            webSocketCompression: configuration.webSocketCompression)
    }

    private func addBuiltInRoutes() {
        let this = LoopConfined(self)
        self.router.add(.GET, "/healthz", access: .open) { _ in .now(.json(["status": "ok"])) }
        self.router.add(.GET, "/metrics") { (_: RouteContext) throws(APIError) -> RouteReply in
            guard let server = this.value else { throw APIError(.internal, "server gone") }
            let body = server.metrics.render(transport: server.transport.statistics, stream: server.hub.counters)
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
        self.simulation.flush()
        if self.simulation.isIdle {
            self.hub.serviceAll(now: self.simulation.clock.now)
            self.snapshotIfDue()
        }
        self.rearmWakeUp()
        self.simulation.clock.endTurn()
    }

    /// Hands the published state to the commit stage when it wants a snapshot. The pipeline is
    /// idle, so the engine is exactly at the published (and committed) revision.
    private func snapshotIfDue() {
        let stage = self.simulation.commitStage
        guard self.simulation.failure == nil, stage.snapshotIsDue(rev: self.engine.rev, wall: self.now) else { return }
        stage.snapshot(self.publishedState)
    }

    /// The engine and stream history at the published revision (call when the pipeline is idle).
    var publishedState: PublishedState {
        PublishedState(engine: self.engine, wall: self.now, history: self.hub.history)
    }

    private func rearmWakeUp() {
        let wake = [self.simulation.engine.nextWakeUp, self.hub.nextSlowDeadline].compactMap { $0 }.min()
        guard wake != self.armedWakeUp else { return }
        self.armedWakeUp = wake
        self.wakeUpChanged?(wake)
    }

    /// The wall clock reading of this turn.
    var now: Instant { self.simulation.clock.now }

    /// The published position (for `hello`, tests and diagnostics).
    public var position: StreamPosition {
        StreamPosition(epoch: self.simulation.epoch, revision: self.simulation.publishedRev)
    }

    /// The engine as it is now (it may be ahead of `position` within a loop turn).
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
            // start its replay; then the store closes.
            let state = self.simulation.isIdle && self.simulation.failure == nil ? self.publishedState : nil
            self.isClosed = true
            self.simulation.commitStage.close(state, completion: completion)
        }
    }

    private func storeFailed() {
        for connection in self.hub.connections.keys.sorted() {
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
            patchFrames: self.hub.counters.patchFrames, historyRevisions: self.hub.history.count,
            oldestHistoryRevision: self.hub.history.oldest,
            queuedBytes: self.hub.connections.keys.sorted().map { self.transport.queuedBytes(of: $0) })
    }
}
