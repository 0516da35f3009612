public import Logging
import DequeModule

#if canImport(Glibc)
import Glibc
#endif

/// The real transport: libwebsockets (HTTP/1.1 and WebSockets) on an `EventLoop`.
///
/// Create it on the loop thread; every method must be called on that thread. It reports
/// requests and WebSocket events to its delegate. A small message to a connection with nothing
/// queued is written at once; anything else waits in the connection's queue (with a cap) for
/// libwebsockets' writable callback, which writes as many whole frames as fit in one `send`.
///
/// ```swift
/// loop.execute {
///     let transport = try SocketTransport(loop: loop, configuration: .init(port: 0), logger: logger)
///     transport.delegate = server
///     print(transport.boundPort)
/// }
/// ```
public final class SocketTransport: Transport {
    public let loop: EventLoop
    public let configuration: TransportConfiguration
    /// The port the transport listens on (useful when the configuration asked for port 0).
    public private(set) var boundPort: Int = 0
    /// The port of the HTTP/2-over-TLS listener, when one is configured.
    public var securePort: Int? { self.secure?.port }
    var secure: HTTP2Listener?
    /// Receives requests and WebSocket events. Not retained.
    public weak var delegate: (any TransportDelegate)?
    public internal(set) var statistics = TransportStatistics()

    let logger: Logger
    let lws: LWSContext
    let writeBuffer: WriteBuffer
    private var nextID: UInt64 = 1
    var exchanges: [ConnectionID: HTTPExchange] = [:]
    let sockets = OpenWebSockets()
    var pendingUpgrades: [ConnectionID: WebSocketUpgrade] = [:]
    /// True while a received message is being handed to the delegate. Replies sent then are
    /// queued, never written at once: libwebsockets may still owe the peer a pong for a ping
    /// that arrived before the message, and writes it first from the next writable callback.
    var isDeliveringMessage = false
    var isAccepting = true
    /// Connections holding messages for the write delay, one group per broadcast that began
    /// holding them, by when to release them (in order: the delay is the same for all).
    var held: Deque<(due: ContinuousClock.Instant, ids: [ConnectionID])> = []
    private var shutdown: ShutdownState?
    /// Connections counted in `maxConnections`, and those accepted beyond it, which are not
    /// served until there is room (each request meanwhile is refused, so the client is told).
    private var served: Set<ConnectionID> = []
    private var unserved: Set<ConnectionID> = []
    /// Loop iterations so far (counted before each poll): what happens within one turn never
    /// gave the loop back (`HTTPExchange.repeatedEnds`).
    private(set) var loopTurns: UInt64 = 0
    private var turnCounter: LoopHook?
    /// Accepted sockets at or above this descriptor are closed at once (`admitsDescriptor`): the
    /// rest of the open-file limit is kept for the logs and the process itself.
    private let descriptorCeiling: Int

    /// Unserved connections held at once; while there are this many, new ones are closed at
    /// accept (a flood of them must not hold descriptors to be told one by one).
    static let unservedMax = 128

    /// The open-file soft limit less what is kept back: a sixteenth, at least 32.
    private static func descriptorCeiling() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return .max }
        let soft = Int(clamping: limit.rlim_cur)  // RLIM_INFINITY clamps to Int.max
        return soft - max(32, soft / 16)
    }

    private struct ShutdownState {
        var completion: (() -> Void)?
        var timer: LoopTimer?
    }

    /// Creates the libwebsockets context on `loop` and starts listening.
    ///
    /// Must be called on the loop thread.
    /// - Throws: `TransportError` when the context cannot be created or the address not bound.
    public init(loop: EventLoop, configuration: TransportConfiguration, logger: Logger) throws(TransportError) {
        self.loop = loop
        self.configuration = configuration
        self.logger = logger
        self.writeBuffer = WriteBuffer(capacity: max(configuration.writeChunkBytes, 4096))
        self.descriptorCeiling = Self.descriptorCeiling()
        self.lws = try LWSContext(
            loop: loop, protocolNames: ["islet-http"] + configuration.subprotocols, rxBufferBytes: 4096,
            txPacketBytes: self.writeBuffer.capacity + WebSocketFraming.maxHeaderBytes, compression: configuration.webSocketCompression, logger: logger)
        self.lws.handler = self
        do {
            let idle = configuration.idleTimeoutSeconds > 0
                ? (ping: configuration.pingIntervalSeconds, hangup: configuration.idleTimeoutSeconds) : nil
            self.boundPort = try self.lws.createVhost(host: configuration.host, port: configuration.port, idle: idle)
            if let tls = configuration.tls {
                self.secure = try HTTP2Listener(transport: self, settings: tls, host: configuration.host)
            }
        } catch {
            self.lws.destroy()
            throw error
        }
        self.turnCounter = loop.beforePoll { [weak self] in self?.loopTurns &+= 1 }
        if self.descriptorCeiling < configuration.maxConnections + Self.unservedMax {
            logger.warning(
                "the open-file limit leaves fewer descriptors for connections than --max-connections asks for",
                metadata: [
                    "islet.descriptor_ceiling": "\(self.descriptorCeiling)",
                    "islet.max_connections": "\(configuration.maxConnections)",
                    "islet.hint": "raise ulimit -n, or lower --max-connections",
                ])
        }
        logger.debug(
            "transport listening", metadata: ["islet.host": "\(configuration.host)", "islet.port": "\(self.boundPort)"])
    }

    func makeID(for connection: LWSConnection) -> ConnectionID {
        if let id = connection.id { return id }
        let id = self.newConnectionID()
        connection.id = id
        return id
    }

    /// A new connection identifier (shared by the HTTP/1.1 and the HTTP/2 listener), for a
    /// connection served if there is room under `maxConnections`.
    func newConnectionID() -> ConnectionID {
        let id = ConnectionID(self.nextID)
        self.nextID += 1
        self.statistics.connectionsAccepted += 1
        if self.served.count < self.configuration.maxConnections {
            self.served.insert(id)
            self.statistics.openConnections = self.served.count
        } else {
            self.unserved.insert(id)
        }
        return id
    }

    /// Whether connection `id` is served: it is, or there is room for it now. A refusal is
    /// counted (the caller tells the client).
    func admits(_ id: ConnectionID) -> Bool {
        if self.served.contains(id) { return true }
        guard self.served.count < self.configuration.maxConnections else {
            self.statistics.connectionRefusals += 1
            return false
        }
        self.unserved.remove(id)
        self.served.insert(id)
        self.statistics.openConnections = self.served.count
        return true
    }

    /// Whether to take a new connection: not while stopping, nor while `unservedMax` connections
    /// wait unserved (it is then closed at once, a refusal counted).
    func acceptsNewConnection() -> Bool {
        guard self.isAccepting else { return false }
        guard self.unserved.count >= Self.unservedMax, self.served.count >= self.configuration.maxConnections else {
            return true
        }
        self.statistics.connectionRefusals += 1
        return false
    }

    /// Whether a socket just accepted (on either port) may stay: not at or above the descriptor
    /// ceiling, for at the open-file limit lws's accept fails at every loop turn, the
    /// connection left in the backlog, and the loop spins on it.
    func admitsDescriptor(_ descriptor: Int) -> Bool {
        guard descriptor >= self.descriptorCeiling else { return true }
        self.statistics.connectionRefusals += 1
        return false
    }

    /// A connection is gone: its place, served or not, is free.
    func connectionEnded(_ id: ConnectionID) {
        if self.served.remove(id) != nil { self.statistics.openConnections = self.served.count }
        self.unserved.remove(id)
    }

    // MARK: Transport

    public func stopAccepting() {
        self.isAccepting = false
        self.secure?.stopAccepting()
    }

    public func shutdown(gracePeriod: Duration, completion: @escaping () -> Void) {
        self.loop.preconditionInEventLoop()
        guard self.shutdown == nil else { return }
        self.isAccepting = false
        self.secure?.stopAccepting()
        self.shutdown = ShutdownState(completion: completion, timer: nil)
        // The timers hold the transport strongly: it lives until its shutdown has finished.
        self.shutdown?.timer = self.loop.scheduleTimer(after: gracePeriod) { self.finishShutdown() }
        self.logger.debug(
            "transport shutdown",
            metadata: ["islet.open.websockets": "\(self.sockets.count)", "islet.open.http": "\(self.exchanges.count)"])
        for exchange in self.exchanges.values where exchange.isIdle { exchange.connection.closeSoon() }
        self.checkShutdown()
    }

    /// Finishes a shutdown in progress once nothing is left open.
    func checkShutdown() {
        guard self.shutdown != nil, self.sockets.isEmpty, self.exchanges.isEmpty, self.pendingUpgrades.isEmpty,
            self.secure?.isIdle ?? true
        else {
            return
        }
        // Not from inside the lws callback that reported the last close: from a fresh loop turn.
        self.loop.scheduleTimer(after: .zero) { self.finishShutdown() }
    }

    var isShuttingDown: Bool { self.shutdown != nil }

    private func finishShutdown() {
        guard var state = self.shutdown, let completion = state.completion else { return }
        state.completion = nil
        state.timer?.cancel()
        self.shutdown = state
        self.logger.debug(
            "transport closing",
            metadata: ["islet.open.websockets": "\(self.sockets.count)", "islet.open.http": "\(self.exchanges.count)"])
        self.secure?.closeAll()
        self.lws.destroy()
        self.turnCounter?.cancel()
        completion()
    }
}

extension SocketTransport: LWSEvents {
    func networkConnectionOffered(descriptor: Int) -> LWSVerdict {
        self.admitsDescriptor(descriptor) && self.acceptsNewConnection() ? .proceed : .close
    }

    /// Counts the connection from its accept on, before any request arrives.
    func connectionAccepted(_ connection: LWSConnection) { _ = self.makeID(for: connection) }

    func connectionDestroyed(_ connection: LWSConnection) {
        guard let id = connection.id else { return }
        self.connectionEnded(id)
        if self.exchanges.removeValue(forKey: id) != nil { self.statistics.openHTTPConnections -= 1 }
        self.pendingUpgrades[id] = nil
        if self.sockets[id] != nil { self.webSocketClosed(connection) }
        self.checkShutdown()
    }
}
