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
    public let loop: EventLoop
    private let holder: Holder

    /// Loop-confined references, reachable only from jobs on `loop`.
    private final class Holder: @unchecked Sendable {
        var server: IsletServer?
        var transport: SocketTransport?
        /// The conformance echo in front of the server, when the configuration mounts it.
        var echo: ConformanceEcho?

        func shutdown(completion: @escaping () -> Void) {
            if let echo { echo.shutdown(completion: completion) } else { self.server?.shutdown(completion: completion) }
        }
    }

    private init(port: Int, loop: EventLoop, holder: Holder) {
        self.port = port
        self.loop = loop
        self.holder = holder
    }

    /// Starts a loop thread, binds the transport and creates the server on it.
    ///
    /// - Parameters:
    ///   - handleSignals: Shut down gracefully on SIGINT and SIGTERM (the `islet serve` case).
    ///   - position: The stream position for `hello` (until the engine is integrated).
    ///   - routes: Extra routes.
    /// - Throws: `ConfigurationError` or `TransportError`; the loop is closed before throwing.
    public static func start(
        configuration: IsletConfiguration, logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        position: @escaping @Sendable () -> StreamPosition = { .unpersisted }, routes: [Route] = [],
        handleSignals: Bool = false
    ) async throws -> RunningServer {
        try configuration.validate()
        let loop = try EventLoop(name: "islet-loop", logger: logger)
        try loop.start()
        let holder = Holder()
        do {
            let port = try await loop.submit {
                try Self.build(on: loop, holder, configuration, logger, registry, position, routes, handleSignals)
            }
            return RunningServer(port: port, loop: loop, holder: holder)
        } catch {
            _ = await loop.terminated()
            throw error
        }
    }

    private static func build(
        on loop: EventLoop, _ holder: Holder, _ configuration: IsletConfiguration, _ logger: Logger,
        _ registry: PrometheusCollectorRegistry, _ position: @escaping @Sendable () -> StreamPosition,
        _ routes: [Route], _ handleSignals: Bool
    ) throws -> Int {
        let transport: SocketTransport
        do {
            transport = try SocketTransport(
                loop: loop, configuration: IsletServer.transportConfiguration(for: configuration), logger: logger)
        } catch {
            loop.stop()
            throw error
        }
        do {
            let server = try IsletServer(
                configuration: configuration, transport: transport, logger: logger, registry: registry,
                position: position, routes: routes)
            transport.delegate = server
            holder.server = server
            holder.transport = transport
            if configuration.conformanceEcho {
                holder.echo = ConformanceEcho(server: server)
                transport.delegate = holder.echo
            }
            if handleSignals {
                for signal in [SIGINT, SIGTERM] {
                    try loop.onSignal(signal) { _ in holder.shutdown { loop.stop() } }
                }
            }
            return transport.boundPort
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
