/// One open WebSocket's state, for the server and the client side alike: its outbound queue,
/// its message reassembly, and how it closes. Loop-confined.
final class WebSocketState {
    let id: ConnectionID
    let connection: LWSConnection
    private(set) var outbound: OutboundQueue
    private var assembler: MessageAssembler
    private var writableRequested = false
    /// Set by `close(code:reason:)`: written once the queue is empty.
    private(set) var pendingClose: (code: WebSocketCloseCode, reason: String)?
    /// Our close frame is written; we wait for the peer's.
    private(set) var sentClose = false
    /// The code to report when the connection ends: the peer's, or the one we sent.
    private(set) var closeCode: WebSocketCloseCode?

    init(id: ConnectionID, connection: LWSConnection, outboundCap: Int, messageLimit: Int) {
        self.id = id
        self.connection = connection
        self.outbound = OutboundQueue(capBytes: outboundCap)
        self.assembler = MessageAssembler(limitBytes: messageLimit)
    }

    /// Queues a message and arms one writable callback.
    func enqueue(_ message: WebSocketMessage) -> SendResult {
        guard self.pendingClose == nil else { return .notOpen }
        guard self.outbound.enqueue(message) == .queued else { return .overCap }
        self.requestWritable()
        return .queued
    }

    /// Asks for a close frame after the queued messages.
    func close(code: WebSocketCloseCode, reason: String) {
        guard self.pendingClose == nil else { return }
        self.pendingClose = (code, reason)
        self.requestWritable()
    }

    func discardQueued() -> Int { self.outbound.discardUnstarted() }

    /// Bytes held for a message being reassembled (at most the message limit).
    var reassemblyBytes: Int { self.assembler.bufferedBytes }

    /// A piece of a message arrived. Returns the message once complete. A message over the
    /// limit sets the close reason (1009) and `closeCode`: the caller must return `.close`.
    func received(_ bytes: UnsafeRawBufferPointer) -> WebSocketMessage? {
        if self.sentClose { return nil }  // After our close frame, data is discarded.
        let frame = self.connection.receivedFrame
        switch self.assembler.append(
            bytes, isBinary: frame.isBinary, isFinal: frame.isFinal, remainingInFrame: frame.remaining,
            isCompressed: frame.isCompressed)
        {
        case .incomplete:
            if self.assembler.isAssemblingCompressed { self.connection.continueInflating() }
            return nil
        case .message(let message):
            return message
        case .tooLarge:
            self.closeCode = .messageTooBig
            self.connection.setCloseReason(.messageTooBig, "message too big")
            return nil
        }
    }

    /// The writable callback: one frame (or fragment) of the queue, else the close frame.
    /// Returns the verdict and the payload bytes written.
    func writeNext(buffer: WriteBuffer) -> (LWSVerdict, Int) {
        self.writableRequested = false
        if let chunk = self.outbound.nextChunk(maxBytes: buffer.capacity) {
            guard self.connection.writeWebSocket(chunk, buffer: buffer) else { return (.close, 0) }
            self.outbound.consume(chunk)
            if !self.outbound.isEmpty || self.pendingClose != nil { self.requestWritable() }
            return (.proceed, chunk.bytes.count)
        }
        guard let close = self.pendingClose, !self.sentClose else { return (.proceed, 0) }
        self.closeCode = close.code
        self.sentClose = true
        return (self.connection.writeClose(close.code, close.reason, buffer: buffer) ? .proceed : .close, 0)
    }

    /// The peer's close frame arrived: the answer to ours ends the connection; otherwise lws
    /// echoes it.
    func peerClosing(_ payload: UnsafeRawBufferPointer) -> LWSVerdict {
        if self.sentClose { return .close }
        self.closeCode = IsletTransport.closeCode(fromClosePayload: payload) ?? .noStatus
        return .proceed
    }

    private func requestWritable() {
        guard !self.writableRequested else { return }
        self.writableRequested = true
        self.connection.requestWritable()
    }
}
