public import IsletCore
public import IsletTransport
public import Logging
public import Prometheus

#if canImport(Glibc)
import Glibc
#endif

/// An Islet server running on its own event loop thread with a real socket transport.
///
/// ```swift
/// let server = try await RunningServer.start(configuration: config, logger: logger)
/// print("listening on http://127.0.0.1:\(server.port)")
/// server.shutdown()                               // from any thread, or SIGTERM
/// let termination = await server.terminated()    // termination.isClean: uv_loop_close == 0
/// ```
public final class RunningServer: Sendable {
    /// The port the server listens on.
    public let port: Int
    /// The port of the HTTP/2-over-TLS listener, when TLS is configured.
    public let securePort: Int?
    public let loop: EventLoop
    private let holder: Holder

    /// Loop-confined references, reachable only from jobs on `loop`.
    private final class Holder: @unchecked Sendable {
        var server: IsletServer?
        var transport: SocketTransport?
        var hook: LoopHook?
        var timer: LoopTimer?
        var demoTimer: LoopTimer?

        /// Arms the one wake-up timer for the wall instant `wake` (the turn it fires in flushes).
        func arm(_ wake: Instant?, now: Instant, on loop: EventLoop) {
            self.timer?.cancel()
            self.timer = nil
            guard let wake else { return }
            let delay = max(1, wake.milliseconds(since: now))
            self.timer = loop.scheduleTimer(after: .milliseconds(delay)) { [weak self] in
                self?.timer = nil
                self?.server?.wakeUpFired()
            }
        }

        /// The conformance echo in front of the server, when the configuration mounts it.
        var echo: ConformanceEcho?

        func shutdown(completion: @escaping () -> Void) {
            if let echo { echo.shutdown(completion: completion) } else { self.server?.shutdown(completion: completion) }
        }
    }

    private init(port: Int, securePort: Int?, loop: EventLoop, holder: Holder) {
        self.port = port
        self.securePort = securePort
        self.loop = loop
        self.holder = holder
    }

    /// Whether `start` failed on what was asked for rather than on the machine: an address that
    /// cannot be listened on (in use, not this machine's), TLS files that do not load. `islet
    /// serve` refuses these with exit code 2, as a database that cannot be used.
    public static func isUnusableSetting(_ error: any Error) -> Bool {
        guard let error = error as? TransportError else { return false }
        return error.kind == .bindFailed || error.kind == .contextFailed
    }

    /// Starts a loop thread, binds the transport and creates the server on it.
    ///
    /// - Parameters:
    ///   - handleSignals: Shut down gracefully on SIGINT and SIGTERM (the `islet serve` case).
    ///   - timeSource: The wall clock (tests may drive it).
    ///   - commitStage: Where each loop turn's revisions are made durable. By default (nil) the
    ///     command log of `configuration.store`: it is opened, and its state recovered, before the
    ///     server listens. A stage given here starts a fresh simulation instead.
    ///   - routes: Extra routes.
    /// - Throws: `ConfigurationError`, `TransportError`, `StoreError` (the database cannot be
    ///   used) or `RecoveryError` (its log does not replay); the loop is closed before throwing.
    public static func start(
        configuration: IsletConfiguration, logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        timeSource: any TimeSource = SystemTimeSource(),
        commitStage: (@Sendable () -> any CommitStage)? = nil, routes: [Route] = [],
        handleSignals: Bool = false
    ) async throws -> RunningServer {
        try configuration.validate()
        let loop = try EventLoop(name: "islet-loop", logger: logger)
        try loop.start()
        let holder = Holder()
        do {
            let (port, securePort) = try await loop.submit {
                try Self.build(
                    on: loop, holder, configuration, logger, registry, timeSource, commitStage, routes, handleSignals)
            }
            return RunningServer(port: port, securePort: securePort, loop: loop, holder: holder)
        } catch {
            _ = await loop.terminated()
            throw error
        }
    }

    private static func build(
        on loop: EventLoop, _ holder: Holder, _ configuration: IsletConfiguration, _ logger: Logger,
        _ registry: PrometheusCollectorRegistry, _ timeSource: any TimeSource,
        _ commitStage: (() -> any CommitStage)?, _ routes: [Route], _ handleSignals: Bool
    ) throws -> (Int, Int?) {
        let transport: SocketTransport
        let stage: any CommitStage
        let recovered: RecoveredState?
        do {
            if let commitStage {
                (stage, recovered) = (commitStage(), nil)
            } else if configuration.cluster != nil {
                // A cluster node keeps no store: its worlds come from the shared log.
                (stage, recovered) = (ImmediateCommitStage(), nil)
            } else {
                // Before binding: a store that cannot be used must not leave a listening socket.
                let opened = try StorePersistence.open(
                    configuration, loop: loop, wall: timeSource.now, logger: logger)
                (stage, recovered) = (opened.stage, opened.state)
            }
            transport = try SocketTransport(
                loop: loop, configuration: IsletServer.transportConfiguration(for: configuration), logger: logger)
        } catch {
            loop.stop()
            throw error
        }
        do {
            let server = try IsletServer(
                configuration: configuration, transport: transport, logger: logger, registry: registry,
                timeSource: timeSource, commitStage: stage, recovered: recovered,
                storage: commitStage == nil && configuration.cluster == nil
                    ? .beside(configuration, loop: loop, logID: recovered?.logID) : .none,
                routes: routes)
            if configuration.cluster == nil { try server.restoreSimulations() }
            transport.delegate = server
            holder.server = server
            holder.transport = transport
            holder.hook = loop.beforePoll { holder.server?.flush() }
            server.wakeUpChanged = { [unowned server] wake in holder.arm(wake, now: server.now, on: loop) }
            server.joinCluster(loop: loop)
            if configuration.demo != .off {
                if configuration.cluster == nil { server.loadDemoIfWanted() }
                let interval = IsletServer.demoInterval
                holder.demoTimer = loop.scheduleTimer(after: interval, repeating: interval) {
                    holder.server?.driveDemo()
                }
            }
            if configuration.conformanceEcho {
                holder.echo = ConformanceEcho(server: server)
                transport.delegate = holder.echo
            }
            if handleSignals {
                for signal in [SIGINT, SIGTERM] {
                    try loop.onSignal(signal) { _ in holder.shutdown { loop.stop() } }
                }
            }
            return (transport.boundPort, transport.securePort)
        } catch {
            transport.shutdown(gracePeriod: .zero) { loop.stop() }
            throw error
        }
    }

    /// Starts a graceful shutdown (see `IsletServer.shutdown`). Safe to call from any thread,
    /// any number of times.
    public func shutdown() {
        let holder = self.holder
        let loop = self.loop
        loop.execute { holder.shutdown { loop.stop() } }
    }

    /// Waits until the loop has closed.
    public func terminated() async -> Termination {
        Termination(loopCloseResult: await self.loop.terminated().loopCloseResult)
    }

    /// How the server's loop ended.
    public struct Termination: Sendable, Equatable {
        /// What `uv_loop_close` returned: 0 when every handle had been closed.
        public let loopCloseResult: Int32
        /// True when nothing leaked.
        public var isClean: Bool { self.loopCloseResult == 0 }
    }

    /// Runs `body` with the server on its loop thread (for tests and diagnostics).
    public func withServer<T: Sendable>(_ body: @escaping @Sendable (IsletServer) -> T) async throws -> T {
        let holder = self.holder
        return try await self.loop.submit {
            guard let server = holder.server else { throw TransportError.loopStopped }
            return body(server)
        }
    }
}
