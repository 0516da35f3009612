public import IsletCore
public import IsletTransport

/// A `Transport` without sockets, for server tests (the role of NIO's `EmbeddedChannel`).
///
/// The test plays the client: `request(…)` delivers a request and returns the reply if the
/// server answered at once; `openWebSocket(…)`, `receive(…)` and `peerClose(…)` drive streams;
/// `sent(to:)` and `closes` show what the server did. Messages "sent" stay queued (counting
/// against the cap) until `drain(_:)`, so slow-consumer rules can be tested.
/// - Warning: Not thread-safe; use it on one thread (the test's).
public final class InMemoryTransport: Transport {
    public weak var delegate: (any TransportDelegate)?
    public var outboundCapBytes: Int
    public private(set) var responses: [RequestID: HTTPResponse] = [:]
    public private(set) var delivered: [ConnectionID: [WebSocketMessage]] = [:]
    public private(set) var closes: [ConnectionID: (code: WebSocketCloseCode, reason: String)] = [:]
    public private(set) var isAccepting = true
    public private(set) var shutdownCompleted = false
    public private(set) var statistics = TransportStatistics()
    private var queued: [ConnectionID: [WebSocketMessage]] = [:]
    private var drainNotices: Set<ConnectionID> = []
    private var open: Set<ConnectionID> = []
    private var nextID: UInt64 = 1
    private var pendingShutdown: (() -> Void)?

    public init(outboundCapBytes: Int = 1024 * 1024) { self.outboundCapBytes = outboundCapBytes }

    // MARK: Driving the server

    /// Delivers a request; returns the reply if the server answered synchronously.
    @discardableResult
    public func request(
        _ method: HTTPMethod, _ path: String, query: [QueryItem] = [], headers: HTTPHeaders = [:], body: [UInt8] = [],
        bodyProblem: HTTPRequest.BodyProblem? = nil
    ) -> HTTPResponse? {
        let id = RequestID(connection: self.makeID(), sequence: 1)
        self.delegate?.transport(
            self,
            didReceive: HTTPRequest(
                id: id, method: method, path: path, query: query, headers: headers, body: body, bodyProblem: bodyProblem
            ))
        return self.responses[id]
    }

    /// Asks to open a WebSocket; returns its identifier, or nil if the server refused it.
    public func openWebSocket(
        path: String = "/v1/stream", subprotocol: String? = "islet.v1", query: [QueryItem] = [],
        headers: HTTPHeaders = [:]
    ) -> ConnectionID? {
        let upgrade = WebSocketUpgrade(path: path, query: query, headers: headers, subprotocol: subprotocol)
        guard self.isAccepting, self.delegate?.transport(self, shouldAccept: upgrade) == true else { return nil }
        let id = self.makeID()
        self.open.insert(id)
        self.statistics.openWebSockets += 1
        self.delegate?.transport(self, didOpen: id, upgrade: upgrade)
        return id
    }

    /// Delivers a message from the client.
    public func receive(_ message: WebSocketMessage, from connection: ConnectionID) {
        guard self.open.contains(connection) else { return }
        self.statistics.bytesReceived += UInt64(message.bytes.count)
        self.delegate?.transport(self, didReceive: message, from: connection)
    }

    /// Delivers a text message from the client.
    public func receive(text: String, from connection: ConnectionID) {
        self.receive(.text(Array(text.utf8)), from: connection)
    }

    /// The client closes (or drops, with `code: nil`) the connection.
    public func peerClose(_ connection: ConnectionID, code: WebSocketCloseCode? = .normal) {
        self.finishClose(connection, code: code)
    }

    /// Everything sent to a connection so far (written or still queued).
    public func sent(to connection: ConnectionID) -> [WebSocketMessage] {
        (self.delivered[connection] ?? []) + (self.queued[connection] ?? [])
    }

    /// The text messages sent to a connection, parsed as JSON.
    public func sentJSON(to connection: ConnectionID) throws -> [JSONValue] {
        try self.sent(to: connection).map { try JSONParser.stored.parse($0.bytes) }
    }

    /// Pretends the socket wrote everything queued for a connection (and then reports a drain
    /// notice, if one was asked for).
    public func drain(_ connection: ConnectionID) {
        self.delivered[connection, default: []] += self.queued.removeValue(forKey: connection) ?? []
        if self.drainNotices.remove(connection) != nil { self.delegate?.transport(self, didDrain: connection) }
    }

    public func requestDrainNotice(for connection: ConnectionID) {
        if self.open.contains(connection) { self.drainNotices.insert(connection) }
    }

    public func isOpen(_ connection: ConnectionID) -> Bool { self.open.contains(connection) }

    // MARK: Transport

    public func respond(to request: RequestID, with response: HTTPResponse) {
        guard self.responses[request] == nil else { return }
        self.responses[request] = response
        self.statistics.bytesSent += UInt64(response.body.count)
    }

    public func send(_ message: WebSocketMessage, to connection: ConnectionID) -> SendResult {
        guard self.open.contains(connection), self.closes[connection] == nil else { return .notOpen }
        let queuedBytes = self.queuedBytes(of: connection)
        if queuedBytes > 0 && queuedBytes + message.bytes.count > self.outboundCapBytes { return .overCap }
        self.queued[connection, default: []].append(message)
        self.statistics.bytesSent += UInt64(message.bytes.count)
        return .queued
    }

    public func broadcast(_ message: WebSocketMessage, to connections: Set<ConnectionID>) -> BroadcastResult {
        var result = BroadcastResult()
        for id in connections.sorted() {
            switch self.send(message, to: id) {
            case .queued: result.queued += 1
            case .overCap: result.overCap.append(id)
            case .notOpen: break
            }
        }
        return result
    }

    public func close(_ connection: ConnectionID, code: WebSocketCloseCode, reason: String) {
        guard self.open.contains(connection), self.closes[connection] == nil else { return }
        self.closes[connection] = (code, reason)
        self.drain(connection)
        self.finishClose(connection, code: code)
    }

    public func queuedBytes(of connection: ConnectionID) -> Int {
        (self.queued[connection] ?? []).reduce(0) { $0 + $1.bytes.count }
    }

    public func discardQueued(of connection: ConnectionID, keeping keep: (WebSocketMessage) -> Bool) -> Int {
        let before = self.queuedBytes(of: connection)
        self.queued[connection] = self.queued[connection]?.filter(keep)
        return before - self.queuedBytes(of: connection)
    }

    public func stopAccepting() { self.isAccepting = false }

    public func shutdown(gracePeriod: Duration, completion: @escaping () -> Void) {
        self.isAccepting = false
        self.pendingShutdown = completion
        self.completeShutdownIfIdle()
    }

    private func finishClose(_ connection: ConnectionID, code: WebSocketCloseCode?) {
        guard self.open.remove(connection) != nil else { return }
        self.statistics.openWebSockets -= 1
        self.delegate?.transport(self, didClose: connection, code: code)
        self.completeShutdownIfIdle()
    }

    private func completeShutdownIfIdle() {
        guard self.open.isEmpty, let completion = self.pendingShutdown else { return }
        self.pendingShutdown = nil
        self.shutdownCompleted = true
        completion()
    }

    private func makeID() -> ConnectionID {
        defer { self.nextID += 1 }
        self.statistics.connectionsAccepted += 1
        return ConnectionID(self.nextID)
    }
}
