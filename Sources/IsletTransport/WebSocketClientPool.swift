public import Logging

/// Receives what happens to a pool's client connections. Called on the loop thread.
public protocol WebSocketClientDelegate: AnyObject {
    func client(_ pool: WebSocketClientPool, didOpen connection: ConnectionID)
    func client(_ pool: WebSocketClientPool, didReceive message: WebSocketMessage, from connection: ConnectionID)
    /// The connection could not be made (refused, handshake failed, timed out).
    func client(_ pool: WebSocketClientPool, didFail connection: ConnectionID, reason: String)
    func client(_ pool: WebSocketClientPool, didClose connection: ConnectionID, code: WebSocketCloseCode?)
}

/// Many WebSocket client connections on one `EventLoop`, through libwebsockets' client mode:
/// the load generator of `islet bench`. The same queues, reassembly and write rules as the
/// server side apply (one lws_write per writable callback; lws masks the write buffer in place,
/// and the buffer is refilled before every write).
///
/// Loop-confined: create and use it on the loop thread.
public final class WebSocketClientPool {
    public let loop: EventLoop
    public weak var delegate: (any WebSocketClientDelegate)?
    let lws: LWSContext
    let writeBuffer: WriteBuffer
    let logger: Logger
    let messageLimit: Int
    var sockets: [ConnectionID: WebSocketState] = [:]
    private var connecting: Set<ConnectionID> = []
    private var nextID: UInt64 = 1
    private var shutdownCompletion: (() -> Void)?

    /// Creates a client-only libwebsockets context on `loop`. Must be called on the loop thread.
    ///
    /// - Parameter compression: Offer permessage-deflate on every connection.
    public init(
        loop: EventLoop, logger: Logger, maxMessageBytes: Int = 16 * 1024 * 1024, compression: Bool = false
    ) throws(TransportError) {
        self.loop = loop
        self.logger = logger
        self.messageLimit = maxMessageBytes
        self.writeBuffer = WriteBuffer(capacity: 64 * 1024)
        self.lws = try LWSContext(
            loop: loop, protocolNames: ["islet-client"], rxBufferBytes: 4096, compression: compression, logger: logger)
        self.lws.handler = self
        do { _ = try self.lws.createVhost(host: nil, port: nil) } catch {
            self.lws.destroy()
            throw error
        }
    }

    /// Connections opened and not yet closed.
    public var openCount: Int { self.sockets.count }
    /// Connections started and not yet open or failed.
    public var connectingCount: Int { self.connecting.count }

    /// Starts a connection to `ws://host:port/path`. Returns its identifier, or nil if lws
    /// could not even start it. The outcome arrives through the delegate.
    public func connect(host: String, port: Int, path: String, subprotocol: String?) -> ConnectionID? {
        let id = ConnectionID(self.nextID)
        self.nextID += 1
        self.connecting.insert(id)
        guard self.lws.connect(host: host, port: port, path: path, subprotocol: subprotocol, id: id) else {
            self.connecting.remove(id)
            return nil
        }
        return id
    }

    /// Queues a message (no cap on the client side beyond 64 MiB).
    @discardableResult
    public func send(_ message: WebSocketMessage, to connection: ConnectionID) -> SendResult {
        self.sockets[connection]?.enqueue(message) ?? .notOpen
    }

    /// Closes a connection after its queued messages.
    public func close(_ connection: ConnectionID, code: WebSocketCloseCode = .normal, reason: String = "") {
        self.sockets[connection]?.close(code: code, reason: reason)
    }

    /// Closes every connection and destroys the context once they are gone (or after
    /// `gracePeriod`), then calls `completion`.
    public func shutdown(gracePeriod: Duration, completion: @escaping () -> Void) {
        self.shutdownCompletion = completion
        for id in self.sockets.keys { self.close(id, code: .goingAway, reason: "") }
        self.loop.scheduleTimer(after: gracePeriod) { self.finish() }
        self.finishIfIdle()
    }

    private func finishIfIdle() {
        guard self.shutdownCompletion != nil, self.sockets.isEmpty else { return }
        self.loop.scheduleTimer(after: .zero) { self.finish() }
    }

    private func finish() {
        guard let completion = self.shutdownCompletion else { return }
        self.shutdownCompletion = nil
        self.lws.destroy()
        completion()
    }
}

extension WebSocketClientPool: LWSEvents {
    func webSocketOpened(_ connection: LWSConnection) -> LWSVerdict {
        guard let id = connection.id, self.connecting.remove(id) != nil else { return .close }
        self.sockets[id] = WebSocketState(
            id: id, connection: connection, outboundCap: 64 * 1024 * 1024, messageLimit: self.messageLimit,
            framesItself: false)
        self.delegate?.client(self, didOpen: id)
        return .proceed
    }

    func clientConnectFailed(_ connection: LWSConnection, _ reason: String?) {
        guard let id = connection.id, self.connecting.remove(id) != nil else { return }
        self.delegate?.client(self, didFail: id, reason: reason ?? "connection failed")
    }

    func webSocketReceived(_ connection: LWSConnection, _ bytes: UnsafeRawBufferPointer) -> LWSVerdict {
        guard let id = connection.id, let state = self.sockets[id] else { return .close }
        guard let message = state.received(bytes) else { return state.verdictWithoutMessage }
        self.delegate?.client(self, didReceive: message, from: id)
        return .proceed
    }

    func webSocketWritable(_ connection: LWSConnection) -> LWSVerdict {
        guard let id = connection.id, let state = self.sockets[id] else { return .proceed }
        return state.writeNext(buffer: self.writeBuffer).0
    }

    func webSocketPeerClosing(_ connection: LWSConnection, _ payload: UnsafeRawBufferPointer) -> LWSVerdict {
        guard let id = connection.id, let state = self.sockets[id] else { return .proceed }
        return state.peerClosing(payload)
    }

    func webSocketClosed(_ connection: LWSConnection) {
        guard let id = connection.id else { return }
        if self.connecting.remove(id) != nil {
            self.delegate?.client(self, didFail: id, reason: "closed during the handshake")
        } else if let state = self.sockets.removeValue(forKey: id) {
            self.delegate?.client(self, didClose: id, code: state.closeCode)
        }
        self.finishIfIdle()
    }

    func connectionDestroyed(_ connection: LWSConnection) {
        if connection.id.map({ self.sockets[$0] != nil || self.connecting.contains($0) }) == true {
            self.webSocketClosed(connection)
        }
    }
}
