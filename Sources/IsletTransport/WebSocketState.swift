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
    /// A drain notice is wanted: the next writable callback with nothing to write reports it.
    private var wantsDrainNotice = false
    /// Set when we fail the connection (a message over the limit, invalid UTF-8): the receive
    /// callback must return `.close`, and later pieces are dropped.
    private(set) var isFailing = false

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

    /// Messages up to this size may be written at once, outside a writable callback.
    static let directWriteLimit = 4096

    /// Writes a small message at once when nothing is queued, buffered or awaited, instead of
    /// queueing it and waiting for a writable callback: one `write` instead of a poll change, a
    /// wake-up and a write (the fan-out's common case). libwebsockets keeps what the socket
    /// does not take (at most this one message) and sends it before any later write.
    /// - Returns: false when the message must be queued instead.
    func writeNow(_ message: WebSocketMessage, buffer: WriteBuffer) -> Bool {
        guard self.outbound.isEmpty, !self.writableRequested, self.pendingClose == nil, !self.sentClose,
            message.bytes.count <= min(Self.directWriteLimit, buffer.capacity), !self.connection.hasBufferedOutput
        else { return false }
        let chunk = OutboundQueue.Chunk(isText: message.isText, isFirst: true, isLast: true, bytes: message.bytes[...])
        if !self.connection.writeWebSocket(chunk, buffer: buffer) { self.connection.closeSoon() }
        return true
    }

    /// Asks for a close frame after the queued messages.
    func close(code: WebSocketCloseCode, reason: String) {
        guard self.pendingClose == nil else { return }
        self.pendingClose = (code, reason)
        // A peer that stopped reading would never let the close frame out: drop it after 10 s.
        self.connection.expire(afterSeconds: 10)
        self.requestWritable()
    }

    /// Asks for a drain notice (see `Transport.requestDrainNotice`).
    func requestDrainNotice() {
        self.wantsDrainNotice = true
        self.requestWritable()
    }

    /// In a writable callback: true, once, when a drain notice is wanted and nothing is left to
    /// write (the callback then writes nothing).
    func takeDrainNotice() -> Bool {
        guard self.wantsDrainNotice, self.outbound.isEmpty, self.pendingClose == nil else { return false }
        self.wantsDrainNotice = false
        self.writableRequested = false
        return true
    }

    func discardQueued(keeping keep: (WebSocketMessage) -> Bool) -> Int { self.outbound.discardUnstarted(keeping: keep) }

    /// Bytes held for a message being reassembled (at most the message limit).
    var reassemblyBytes: Int { self.assembler.bufferedBytes }

    /// A piece of a message arrived. Returns the message once complete. A message over the
    /// limit (1009), or a compressed text message that is not UTF-8 (1007), fails the
    /// connection (`isFailing`): the caller must then return `.close`.
    func received(_ bytes: UnsafeRawBufferPointer) -> WebSocketMessage? {
        if self.sentClose || self.isFailing { return nil }  // After our close frame, data is discarded.
        let frame = self.connection.receivedFrame
        let compressed = self.assembler.nextPieceIsCompressed(frameIsCompressed: frame.isCompressed)
        switch self.assembler.append(
            bytes, isBinary: frame.isBinary, isFinal: frame.isFinal, remainingInFrame: frame.remaining,
            isCompressed: compressed)
        {
        case .incomplete:
            if compressed { self.connection.continueInflating() }
            return nil
        case .message(let message):
            // lws validates UTF-8 as it inflates, but a failure found after the first inflated
            // buffer is not acted on (see `fail`): check compressed text messages once more.
            if compressed && message.isText && String(validating: message.bytes, as: UTF8.self) == nil {
                self.fail(.invalidPayload, "invalid UTF-8")
                return nil
            }
            return message
        case .tooLarge:
            self.fail(.messageTooBig, "message too big")
            return nil
        }
    }

    /// Fails the connection with `code`. lws sends the close frame and closes when the receive
    /// callback returns -1, except while it is inflating a compressed message from its drain
    /// list, where lws 4.1.6 ignores the result (`rops_handle_POLLIN_ws`). So the close frame
    /// is also scheduled here, ahead of any queued message, and the connection is closed once
    /// it is written (RFC 6455 §7.1.7: a failed connection need not wait for the peer's close).
    private func fail(_ code: WebSocketCloseCode, _ reason: String) {
        self.isFailing = true
        self.closeCode = code
        self.connection.setCloseReason(code, reason)
        self.pendingClose = (code, reason)
        self.requestWritable()
    }

    /// The writable callback: one frame (or fragment) of the queue, else the close frame.
    /// Returns the verdict and the payload bytes written.
    func writeNext(buffer: WriteBuffer) -> (LWSVerdict, Int) {
        self.writableRequested = false
        if self.isFailing && !self.sentClose, let close = self.pendingClose {
            self.sentClose = true
            guard self.connection.writeClose(close.code, close.reason, buffer: buffer) else { return (.close, 0) }
            self.connection.closeSoon()
            return (.proceed, 0)
        }
        if let chunk = self.outbound.nextChunk(maxBytes: buffer.capacity) {
            guard self.connection.writeWebSocket(chunk, buffer: buffer) else { return (.close, 0) }
            self.outbound.consume(chunk)
            if !self.outbound.isEmpty || self.pendingClose != nil || self.wantsDrainNotice { self.requestWritable() }
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
