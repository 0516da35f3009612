import IsletCore
public import IsletTransport
public import Logging
public import Prometheus

/// Islet's HTTP and WebSocket application: routes, static files, stream sessions, metrics and
/// graceful shutdown, on top of any `Transport`.
///
/// Loop-confined: create it and call it on the transport's loop thread (with
/// `InMemoryTransport`, on the test's thread). It is the transport's delegate.
public final class IsletServer {
    public let configuration: IsletConfiguration
    public let transport: any Transport
    /// The routes. Add application routes before traffic arrives.
    public var router = Router()
    let staticFiles: StaticFiles?
    let metrics: ServerMetrics
    let logger: Logger
    let position: () -> StreamPosition
    private let hello: StreamHello
    private var sessions: [ConnectionID: StreamSession] = [:]
    public private(set) var isShuttingDown = false

    /// The WebSocket subprotocol of `/v1/stream`.
    public static let streamSubprotocol = "islet.v1"
    public static let streamPath = "/v1/stream"

    /// Creates the server on `transport`. Make it the transport's delegate afterwards
    /// (`transport.delegate = server`); `RunningServer` does this.
    ///
    /// - Parameters:
    ///   - registry: Where metrics are recorded and rendered from (`/metrics`).
    ///   - position: The stream position reported in `hello`; the engine integration replaces it.
    ///   - routes: Extra routes, matched after the built-in ones.
    /// - Throws: `ConfigurationError` if the public directory is unusable.
    public init(
        configuration: IsletConfiguration, transport: any Transport, logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        position: @escaping () -> StreamPosition = { .unpersisted }, routes: [Route] = []
    ) throws(ConfigurationError) {
        self.configuration = configuration
        self.transport = transport
        self.logger = logger
        self.metrics = ServerMetrics(registry: registry)
        self.position = position
        self.hello = StreamHello(limits: configuration.limits)
        self.staticFiles = try configuration.publicDirectory.map { directory throws(ConfigurationError) in
            try StaticFiles(directory: directory)
        }
        self.addBuiltInRoutes()
        for route in routes { self.router.add(route) }
    }

    /// The transport settings that follow from this configuration.
    public static func transportConfiguration(for configuration: IsletConfiguration) -> TransportConfiguration {
        TransportConfiguration(
            host: configuration.host, port: configuration.port, subprotocols: [Self.streamSubprotocol],
            maxRequestBodyBytes: configuration.limits.httpBodyBytes,
            maxMessageBytes: configuration.limits.webSocketMessageBytes,
            outboundCapBytes: configuration.limits.outboundBytes,
            webSocketCompression: configuration.webSocketCompression)
    }

    private func addBuiltInRoutes() {
        let this = LoopConfined(self)
        self.router.add(.GET, "/healthz") { _ in .now(.json(["status": "ok"])) }
        self.router.add(.GET, "/metrics") { (_: RouteContext) throws(APIError) -> RouteReply in
            guard let server = this.value else { throw APIError(.internal, "server gone") }
            let body = server.metrics.render(transport: server.transport.statistics)
            return .now(HTTPResponse(status: 200, headers: ["content-type": "text/plain; version=0.0.4"], body: body))
        }
        self.router.add(.GET, Self.streamPath) { (_: RouteContext) throws(APIError) -> RouteReply in
            throw APIError(
                .invalidArgument, "\(Self.streamPath) is a WebSocket endpoint (subprotocol \(Self.streamSubprotocol))")
        }
    }

    // MARK: Shutdown

    /// Stops accepting connections, closes every stream with 1001 after its queued messages,
    /// lets replies drain (at most `shutdownGracePeriod`), then calls `completion`.
    public func shutdown(completion: @escaping () -> Void) {
        guard !self.isShuttingDown else { return }
        self.isShuttingDown = true
        self.logger.info("shutting down", metadata: ["islet.open.streams": "\(self.sessions.count)"])
        self.transport.stopAccepting()
        for connection in self.sessions.keys.sorted() {
            self.transport.close(connection, code: .goingAway, reason: "server shutting down")
        }
        self.transport.shutdown(gracePeriod: self.configuration.shutdownGracePeriod, completion: completion)
    }

    /// Open `/v1/stream` sessions.
    public var openStreams: Int { self.sessions.count }
}

extension IsletServer: TransportDelegate {
    public func transport(_ transport: any Transport, didReceive request: HTTPRequest) {
        let (route, reply) = self.handle(request)
        guard case .now(let response) = reply else { return }
        self.answer(request.id, route: route, with: response)
    }

    func answer(_ request: RequestID, route: String, with response: HTTPResponse) {
        self.metrics.requestAnswered(route: route, status: response.status)
        self.transport.respond(to: request, with: response)
    }

    public func transport(_ transport: any Transport, shouldAccept upgrade: WebSocketUpgrade) -> Bool {
        !self.isShuttingDown && upgrade.path == Self.streamPath && upgrade.subprotocol == Self.streamSubprotocol
    }

    public func transport(_ transport: any Transport, didOpen connection: ConnectionID, upgrade: WebSocketUpgrade) {
        let session = StreamSession(connection: connection)
        self.sessions[connection] = session
        self.logger.debug("stream opened", metadata: ["islet.conn.id": "\(connection)"])
        self.perform(session.opened(hello: self.hello.encoded(at: self.position())), for: connection)
    }

    public func transport(
        _ transport: any Transport, didReceive message: WebSocketMessage, from connection: ConnectionID
    ) {
        guard var session = self.sessions[connection] else { return }
        let actions = session.received(message)
        self.sessions[connection] = session
        self.perform(actions, for: connection)
    }

    public func transport(_ transport: any Transport, didClose connection: ConnectionID, code: WebSocketCloseCode?) {
        guard self.sessions.removeValue(forKey: connection) != nil else { return }
        self.logger.debug(
            "stream closed",
            metadata: ["islet.conn.id": "\(connection)", "islet.close.code": "\(code.map(\.description) ?? "none")"])
    }

    private func perform(_ actions: [StreamSession.Action], for connection: ConnectionID) {
        for action in actions {
            switch action {
            case .send(let bytes):
                if self.transport.send(.text(bytes), to: connection) == .overCap {
                    self.transport.close(connection, code: WebSocketCloseCode(4008), reason: "slow consumer")
                }
            case .close(let code, let reason):
                self.transport.close(connection, code: code, reason: reason)
            }
        }
    }
}

/// Carries a loop-confined value into a `@Sendable` closure that will only run on the loop
/// thread (route handlers). The reference is weak so a route never keeps the server alive.
final class LoopConfined<T: AnyObject>: @unchecked Sendable {
    weak var value: T?
    init(_ value: T) { self.value = value }
}
