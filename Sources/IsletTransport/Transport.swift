/// What a server needs from a transport: replies, WebSocket sends and closes, and shutdown.
///
/// `SocketTransport` implements it with libwebsockets on an `EventLoop`; tests use
/// `InMemoryTransport` (IsletTestSupport). Every method must be called on the loop thread
/// (for the in-memory transport: the test's thread).
public protocol Transport: AnyObject {
    /// Answers a request. A reply to a request whose connection has closed is dropped.
    func respond(to request: RequestID, with response: HTTPResponse)

    /// Queues a message for a WebSocket. Writing happens when the socket is writable.
    @discardableResult
    func send(_ message: WebSocketMessage, to connection: ConnectionID) -> SendResult

    /// Sends one message to many WebSockets, as `send(_:to:)` would to each (a fan-out). The
    /// transport may frame it once for all, and hold it for its write delay.
    @discardableResult
    func broadcast(_ message: WebSocketMessage, to connections: Set<ConnectionID>) -> BroadcastResult

    /// Closes a WebSocket with `code` after its queued messages have been written.
    func close(_ connection: ConnectionID, code: WebSocketCloseCode, reason: String)

    /// Bytes queued for a connection and not yet handed to the socket.
    func queuedBytes(of connection: ConnectionID) -> Int

    /// Drops the queued messages of a connection that have not started to be written (a message
    /// partly written is finished, to keep the framing intact), except those `keep` accepts,
    /// which stay queued in order. Returns the bytes dropped.
    @discardableResult
    func discardQueued(of connection: ConnectionID, keeping keep: (WebSocketMessage) -> Bool) -> Int

    /// Asks for one `transport(_:didDrain:)` call once the connection's queue is empty and its
    /// socket can take more (a writable callback found nothing left to write): the moment a
    /// reader that had fallen behind has caught up.
    func requestDrainNotice(for connection: ConnectionID)

    /// Refuses new connections from now on. Open connections continue.
    func stopAccepting()

    /// Ends the transport once every connection has closed and every reply has been written, or
    /// after `gracePeriod`, whichever comes first; then calls `completion`. Connections still
    /// open then are dropped.
    func shutdown(gracePeriod: Duration, completion: @escaping () -> Void)

    /// Counters for metrics.
    var statistics: TransportStatistics { get }
}

extension Transport {
    /// Drops every queued message of a connection not yet started (see
    /// `discardQueued(of:keeping:)`).
    @discardableResult
    public func discardQueued(of connection: ConnectionID) -> Int {
        self.discardQueued(of: connection, keeping: { _ in false })
    }
}

/// Receives what happens on a transport. Called on the loop thread.
public protocol TransportDelegate: AnyObject {
    /// A request arrived with its whole body (or with `bodyProblem` set). Answer it with
    /// `respond(to:with:)`, now or later.
    func transport(_ transport: any Transport, didReceive request: HTTPRequest)

    /// A client asks to open a WebSocket. Return false to refuse it (the socket is closed).
    func transport(_ transport: any Transport, shouldAccept upgrade: WebSocketUpgrade) -> Bool

    /// A WebSocket is open and may be sent to.
    func transport(_ transport: any Transport, didOpen connection: ConnectionID, upgrade: WebSocketUpgrade)

    /// A complete message arrived.
    func transport(_ transport: any Transport, didReceive message: WebSocketMessage, from connection: ConnectionID)

    /// The WebSocket closed. `code` is the peer's close code, or the one we sent, or nil if the
    /// connection simply dropped. Its identifier is invalid from now on.
    func transport(_ transport: any Transport, didClose connection: ConnectionID, code: WebSocketCloseCode?)

    /// The drain notice asked for with `requestDrainNotice(for:)`.
    func transport(_ transport: any Transport, didDrain connection: ConnectionID)
}

extension TransportDelegate {
    public func transport(_ transport: any Transport, didDrain connection: ConnectionID) {}
}
