/// One open WebSocket's state: its outbound queue, its message reassembly, how it closes.
final class WebSocketState {
    let id: ConnectionID
    let connection: LWSConnection
    var outbound: OutboundQueue
    var assembler: MessageAssembler
    var writableRequested = false
    /// Set by `close(_:code:reason:)`: written once the queue is empty.
    var pendingClose: (code: WebSocketCloseCode, reason: String)?
    /// Our close frame is written; we wait for the peer's.
    var sentClose = false
    /// The code to report when the connection ends: the peer's, or the one we sent.
    var closeCode: WebSocketCloseCode?

    init(id: ConnectionID, connection: LWSConnection, outboundCap: Int, messageLimit: Int) {
        self.id = id
        self.connection = connection
        self.outbound = OutboundQueue(capBytes: outboundCap)
        self.assembler = MessageAssembler(limitBytes: messageLimit)
    }

    func requestWritable() {
        guard !self.writableRequested else { return }
        self.writableRequested = true
        self.connection.requestWritable()
    }
}

extension SocketTransport {
    func upgradeRequested(_ connection: LWSConnection) -> LWSVerdict {
        guard self.isAccepting, let (_, path) = connection.methodAndPath() else { return .close }
        let id = self.makeID(for: connection)
        let name = connection.protocolName
        let upgrade = WebSocketUpgrade(
            path: path, query: connection.query(),
            headers: connection.headers(extraNames: self.configuration.extraHeaderNames),
            subprotocol: self.configuration.subprotocols.contains(name ?? "") ? name : nil)
        guard self.delegate?.transport(self, shouldAccept: upgrade) == true else { return .close }
        self.pendingUpgrades[id] = upgrade
        return .proceed
    }

    func webSocketOpened(_ connection: LWSConnection) -> LWSVerdict {
        guard let id = connection.id, let upgrade = self.pendingUpgrades.removeValue(forKey: id) else { return .close }
        if self.exchanges.removeValue(forKey: id) != nil { self.statistics.openHTTPConnections -= 1 }
        self.sockets[id] = WebSocketState(
            id: id, connection: connection, outboundCap: self.configuration.outboundCapBytes,
            messageLimit: self.configuration.maxMessageBytes)
        self.statistics.openWebSockets += 1
        self.delegate?.transport(self, didOpen: id, upgrade: upgrade)
        return .proceed
    }

    func webSocketReceived(_ connection: LWSConnection, _ bytes: UnsafeRawBufferPointer) -> LWSVerdict {
        guard let id = connection.id, let state = self.sockets[id] else { return .close }
        self.statistics.bytesReceived += UInt64(bytes.count)
        if state.sentClose { return .proceed }  // After our close frame, data is discarded.
        let frame = connection.receivedFrame
        switch state.assembler.append(bytes, isBinary: frame.isBinary, isFinal: frame.isFinal, remainingInFrame: frame.remaining) {
        case .incomplete:
            return .proceed
        case .message(let message):
            self.delegate?.transport(self, didReceive: message, from: id)
            return .proceed
        case .tooLarge:
            state.closeCode = .messageTooBig
            connection.setCloseReason(.messageTooBig, "message too big")
            return .close
        }
    }

    func webSocketWritable(_ connection: LWSConnection) -> LWSVerdict {
        guard let id = connection.id, let state = self.sockets[id] else { return .proceed }
        state.writableRequested = false
        if let chunk = state.outbound.nextChunk(maxBytes: self.writeBuffer.capacity) {
            guard connection.writeWebSocket(chunk, buffer: self.writeBuffer) else { return .close }
            state.outbound.consume(chunk)
            self.statistics.bytesSent += UInt64(chunk.bytes.count)
            if !state.outbound.isEmpty || state.pendingClose != nil { state.requestWritable() }
            return .proceed
        }
        guard let close = state.pendingClose, !state.sentClose else { return .proceed }
        state.closeCode = close.code
        state.sentClose = true
        return connection.writeClose(close.code, close.reason, buffer: self.writeBuffer) ? .proceed : .close
    }

    func webSocketPeerClosing(_ connection: LWSConnection, _ payload: UnsafeRawBufferPointer) -> LWSVerdict {
        guard let id = connection.id, let state = self.sockets[id] else { return .proceed }
        // The answer to our own close frame: done. Otherwise lws echoes the peer's close.
        if state.sentClose { return .close }
        state.closeCode = closeCode(fromClosePayload: payload) ?? .noStatus
        return .proceed
    }

    func webSocketClosed(_ connection: LWSConnection) {
        guard let id = connection.id, let state = self.sockets.removeValue(forKey: id) else { return }
        self.statistics.openWebSockets -= 1
        self.delegate?.transport(self, didClose: id, code: state.closeCode)
        self.checkShutdown()
    }

    @discardableResult
    public func send(_ message: WebSocketMessage, to connection: ConnectionID) -> SendResult {
        guard let state = self.sockets[connection], state.pendingClose == nil else { return .notOpen }
        guard state.outbound.enqueue(message) == .queued else { return .overCap }
        state.requestWritable()
        return .queued
    }

    public func close(_ connection: ConnectionID, code: WebSocketCloseCode, reason: String) {
        guard let state = self.sockets[connection], state.pendingClose == nil else { return }
        state.pendingClose = (code, reason)
        state.requestWritable()
    }

    public func queuedBytes(of connection: ConnectionID) -> Int {
        self.sockets[connection]?.outbound.queuedBytes ?? 0
    }

    @discardableResult
    public func discardQueued(of connection: ConnectionID) -> Int {
        self.sockets[connection]?.outbound.discardUnstarted() ?? 0
    }
}
