/// One open WebSocket's state, for the server and the client side alike: its outbound queue,
/// its message reassembly, and how it closes. Loop-confined.
final class WebSocketState {
    // The stored properties a write at once reads (`writeNow`) come first: the fan-out
    // prefetches the object's first `hotBytes` for each subscriber ahead of its write.
    let id: ConnectionID
    let connection: LWSConnection
    /// The connection's socket, for writes past libwebsockets (`sendFrames`); kept here
    /// because lws's own copy is on another cold line of its connection.
    let socket: Int32
    /// Whole messages are framed here (`WebSocketFraming`) and written as raw bytes, several
    /// per `send` when queued: a server connection without permessage-deflate (libwebsockets'
    /// listener has no TLS, so the bytes go to the socket as they are).
    let framesItself: Bool
    private var writableRequested = false
    /// Our close frame is written; we wait for the peer's.
    private(set) var sentClose = false
    /// Set by `close(code:reason:)`: written once the queue is empty.
    private(set) var pendingClose: (code: WebSocketCloseCode, reason: String)?
    private(set) var outbound: OutboundQueue
    private var assembler: MessageAssembler
    /// The code to report when the connection ends: the peer's, or the one we sent.
    private(set) var closeCode: WebSocketCloseCode?
    /// A drain notice is wanted: the next writable callback with nothing to write reports it.
    private var wantsDrainNotice = false
    /// Set when we fail the connection (a message over the limit, invalid UTF-8): later pieces
    /// are dropped, and the receive callback returns `verdictWithoutMessage`.
    private(set) var isFailing = false
    /// Messages wait in the queue for the write delay to end (`hold`), with no writable
    /// callback armed.
    private(set) var isHeld = false

    init(id: ConnectionID, connection: LWSConnection, outboundCap: Int, messageLimit: Int, framesItself: Bool) {
        self.id = id
        self.connection = connection
        self.socket = connection.socket
        self.framesItself = framesItself
        self.outbound = OutboundQueue(capBytes: outboundCap)
        self.assembler = MessageAssembler(limitBytes: messageLimit)
    }

    /// What a write handed to the socket: `send` calls, whole messages finished, payload bytes.
    struct Written: Equatable {
        var writes = 0
        var messages = 0
        var bytes = 0
    }

    /// Queues a message and arms one writable callback.
    func enqueue(_ message: WebSocketMessage) -> SendResult {
        guard self.pendingClose == nil, !self.sentClose else { return .notOpen }
        guard self.outbound.enqueue(message) == .queued else { return .overCap }
        self.requestWritable()
        return .queued
    }

    /// Queues a message to leave with the next flush of the write delay: no writable callback
    /// is armed until `release`, so the messages of the delay leave together.
    /// - Returns: The result, and whether the connection was not held before (its flush must
    ///   be scheduled).
    func hold(_ message: WebSocketMessage) -> (SendResult, newlyHeld: Bool) {
        assert(self.framesItself, "the write delay releases frames it frames itself")
        guard self.pendingClose == nil, !self.sentClose else { return (.notOpen, false) }
        guard self.outbound.enqueue(message) == .queued else { return (.overCap, false) }
        guard !self.isHeld, !self.writableRequested else { return (.queued, false) }
        self.isHeld = true
        return (.queued, true)
    }

    /// The write delay ended: writes what is queued, as many whole messages per `send` as the
    /// buffer holds, at once if the socket can take it, else from writable callbacks.
    /// - Returns: What was written now.
    func release(buffer: WriteBuffer) -> Written {
        guard self.isHeld else { return Written() }
        self.isHeld = false
        guard !self.outbound.isEmpty else { return Written() }
        guard !self.writableRequested, !self.sentClose, !self.connection.hasBufferedOutput else {
            self.requestWritable()
            return Written()
        }
        let (written, ok) = self.writeWholeMessages(buffer: buffer)
        if !ok {
            self.connection.closeSoon()
        } else if !self.outbound.isEmpty || self.pendingClose != nil || self.wantsDrainNotice {
            self.requestWritable()
        }
        return written
    }

    /// Messages up to this size may be written at once, outside a writable callback.
    static let directWriteLimit = 4096

    /// Writes a small message at once when nothing is queued, buffered or awaited, instead of
    /// queueing it and waiting for a writable callback: one `write` instead of a poll change, a
    /// wake-up and a write (the fan-out's common case). libwebsockets keeps what the socket
    /// does not take (at most this one message) and sends it before any later write.
    /// - Returns: false when the message must be queued instead.
    func writeNow(_ message: WebSocketMessage, buffer: WriteBuffer) -> Bool {
        guard self.canWriteNow,
            message.bytes.count <= min(Self.directWriteLimit, buffer.capacity - WebSocketFraming.maxHeaderBytes)
        else { return false }
        let written: Bool
        if self.framesItself {
            let header = WebSocketFraming.writeHeader(
                payload: message.bytes.count, isText: message.isText, to: buffer.payload)
            _ = buffer.load(message.bytes[...], at: header)
            written = self.connection.sendFrames(
                UnsafeRawBufferPointer(start: buffer.payload, count: header + message.bytes.count), on: self.socket)
        } else {
            let chunk = OutboundQueue.Chunk(
                isText: message.isText, isFirst: true, isLast: true, bytes: message.bytes[...])
            written = self.connection.writeWebSocket(chunk, buffer: buffer)
        }
        if !written { self.connection.closeSoon() }
        return true
    }

    /// `writeNow` for a message already framed (`WebSocketFraming.framed`), written from where
    /// it is: the fan-out frames a message once for all its connections.
    func writeNow(framed: UnsafeRawBufferPointer) -> Bool {
        guard self.framesItself, self.canWriteNow, framed.count <= Self.directWriteLimit + WebSocketFraming.maxHeaderBytes
        else { return false }
        if !self.connection.sendFrames(framed, on: self.socket) { self.connection.closeSoon() }
        return true
    }

    /// The bytes from the start of this object that hold what `writeNow(framed:)` reads (the
    /// object's header and the stored properties declared first, through `outbound`'s count),
    /// for prefetching.
    static let hotBytes = 128

    /// Nothing is queued, held, buffered by lws or awaited: a write now keeps the order.
    private var canWriteNow: Bool {
        self.outbound.isEmpty && !self.writableRequested && self.pendingClose == nil && !self.sentClose
            && !self.connection.hasBufferedOutput
    }

    /// Frames the queue's leading whole messages into `buffer`, as many as fit, and writes them
    /// in one `send`. Returns what left, and false when the write failed.
    private func writeWholeMessages(buffer: WriteBuffer) -> (Written, ok: Bool) {
        var used = 0
        var payloadBytes = 0
        var count = 0
        while let message = self.outbound.message(at: count) {
            let size = message.bytes.count
            let header = WebSocketFraming.headerBytes(payload: size)
            guard used + header + size <= buffer.capacity else { break }
            WebSocketFraming.writeHeader(payload: size, isText: message.isText, to: buffer.payload + used)
            used = buffer.load(message.bytes[...], at: used + header)
            payloadBytes += size
            count += 1
        }
        guard count > 0 else { return (Written(), true) }
        let ok = self.connection.sendFrames(UnsafeRawBufferPointer(start: buffer.payload, count: used), on: self.socket)
        self.outbound.removeFirst(count)
        return (Written(writes: 1, messages: count, bytes: payloadBytes), ok)
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
    /// connection (`isFailing`): the caller then returns `verdictWithoutMessage`.
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
                self.fail(.invalidPayload, "invalid UTF-8", compressed: true)
                return nil
            }
            return message
        case .tooLarge:
            self.fail(.messageTooBig, "message too big", compressed: compressed)
            return nil
        }
    }

    /// Fails the connection with `code`, with one close frame. Uncompressed, lws writes it when
    /// the receive callback returns -1 (`verdictWithoutMessage`), and nothing may follow it:
    /// this side counts it as sent. While lws inflates a compressed message, lws 4.1.6 acts on
    /// that -1 with a close frame of its own on some paths (`lws_ws_rx_sm` called for network
    /// input) and ignores it on others (its drain list, `rops_handle_POLLIN_ws`), so there this
    /// side writes the close frame itself, ahead of any queued message, the callback returns 0,
    /// and the connection is closed once the frame is written (RFC 6455 §7.1.7: a failed
    /// connection need not wait for the peer's close). Later pieces are dropped.
    private func fail(_ code: WebSocketCloseCode, _ reason: String, compressed: Bool) {
        self.isFailing = true
        self.closeCode = code
        if compressed {
            self.pendingClose = (code, reason)
            self.requestWritable()
        } else {
            self.connection.setCloseReason(code, reason)
            self.sentClose = true
        }
    }

    /// What the receive callback returns for a piece that completed no message: -1 (`.close`)
    /// once this side failed the connection and its close frame is lws's to write or written,
    /// else 0 (a compressed message's failure waits for this side's own close frame).
    var verdictWithoutMessage: LWSVerdict { self.isFailing && self.sentClose ? .close : .proceed }

    /// The writable callback: the queue's leading whole messages in one `send` (as many as the
    /// buffer holds, when this side frames its own messages), or one frame or fragment, else
    /// the close frame. Returns the verdict and what was written.
    func writeNext(buffer: WriteBuffer) -> (LWSVerdict, Written) {
        self.writableRequested = false
        self.isHeld = false
        if self.isFailing && !self.sentClose, let close = self.pendingClose {
            self.sentClose = true
            guard self.connection.writeClose(close.code, close.reason, buffer: buffer) else { return (.close, Written()) }
            self.connection.closeSoon()
            return (.proceed, Written())
        }
        guard !self.sentClose else { return (.proceed, Written()) }  // Nothing follows a close frame.
        if self.framesItself, !self.outbound.isHeadStarted {
            let (written, ok) = self.writeWholeMessages(buffer: buffer)
            guard ok else { return (.close, written) }
            if written.messages > 0 {
                if !self.outbound.isEmpty || self.pendingClose != nil || self.wantsDrainNotice { self.requestWritable() }
                return (.proceed, written)
            }
        }
        if let chunk = self.outbound.nextChunk(maxBytes: buffer.capacity) {
            guard self.connection.writeWebSocket(chunk, buffer: buffer) else { return (.close, Written()) }
            self.outbound.consume(chunk)
            if !self.outbound.isEmpty || self.pendingClose != nil || self.wantsDrainNotice { self.requestWritable() }
            return (.proceed, Written(writes: 1, messages: chunk.isLast ? 1 : 0, bytes: chunk.bytes.count))
        }
        guard let close = self.pendingClose, !self.sentClose else { return (.proceed, Written()) }
        self.closeCode = close.code
        self.sentClose = true
        return (self.connection.writeClose(close.code, close.reason, buffer: buffer) ? .proceed : .close, Written())
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
