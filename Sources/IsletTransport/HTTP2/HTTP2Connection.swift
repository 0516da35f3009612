import DequeModule

/// One TLS + HTTP/2 connection: ciphertext from the socket through TLS into nghttp2, requests
/// to the listener, replies back out. Loop-confined.
///
/// - Output is produced only outside nghttp2's receive callbacks: a request that completes
///   inside `nghttp2_session_mem_recv` waits in `ready` and goes to the listener (and so to the
///   delegate, which may answer at once) after it returned.
/// - Backpressure: requests wait in `ready` while the replies held (bodies not yet framed plus
///   the socket's queue) are over the outbound cap; nghttp2 is asked for output only while the
///   socket's queue is under the cap, and the socket is read only then. libuv's write callbacks
///   resume the flow. A peer that reads nothing thus costs at most about the cap, one reply and
///   its own requests (at most `maxConcurrentStreams`).
/// - `HTTP2Watchdog` ends connections that make no progress.
final class HTTP2Connection {
    let id: ConnectionID
    private let tcp: UVTCPHandle
    private let tls: TLSSession
    private unowned let owner: HTTP2Listener
    private unowned let loop: EventLoop
    private let limits: HTTP2Limits
    private var h2: HTTP2Session?
    private var watchdog: HTTP2Watchdog
    private var timer: (armedFor: UInt64, handle: LoopTimer)?
    /// Requests received and not yet given to the listener, oldest first.
    private var ready: Deque<HTTP2Request> = []
    /// Streams whose request went to the delegate and whose reply has not been submitted.
    var waiting: [Int32: HTTPMethod] = [:]
    private var isPumping = false
    private(set) var isClosed = false

    init(
        id: ConnectionID, tcp: UVTCPHandle, tls: TLSSession, owner: HTTP2Listener, loop: EventLoop,
        limits: HTTP2Limits, timeouts: TransportConfiguration.TLS
    ) {
        self.id = id
        self.tcp = tcp
        self.tls = tls
        self.owner = owner
        self.loop = loop
        self.limits = limits
        self.watchdog = HTTP2Watchdog(
            handshakeTimeout: timeouts.handshakeTimeout, idleTimeout: timeouts.idleTimeout,
            acceptedAt: loop.nowMilliseconds)
    }

    func start() {
        self.tcp.onRead = { [unowned self] bytes in self.received(bytes) }
        self.tcp.onWritten = { [unowned self] succeeded in self.written(succeeded) }
        self.tcp.startReading()
        self.watch()
    }

    /// True when no request waits for the delegate or for its reply.
    var isQuiet: Bool { self.waiting.isEmpty && self.ready.isEmpty }

    /// Bytes in the socket's write queue (ciphertext libuv has not written yet).
    var queuedBytes: Int { self.tcp.queuedBytes }

    /// The most bytes the socket's write queue has held, right after a write was queued.
    private(set) var mostQueuedBytes = 0

    /// Reply bytes held for the peer: bodies submitted but not yet framed, and the socket's queue.
    var heldReplyBytes: Int { (self.h2?.unsentBodyBytes ?? 0) + self.tcp.queuedBytes }

    /// True while the socket is read (false once its queue reached the cap, until it drains).
    var isReading: Bool { self.tcp.isReading }

    private var now: UInt64 { self.loop.nowMilliseconds }

    // MARK: Input

    private func received(_ bytes: UnsafeRawBufferPointer?) {
        guard let bytes else { return self.close(because: "peer closed") }
        self.tls.receive(bytes)
        if !self.tls.isEstablished {
            switch self.tls.handshake() {
            case .handshaking: return self.writeCiphertext()
            case .failed: return self.closeAfterWriting(because: "TLS handshake failed")
            case .established:
                guard self.tls.negotiatedProtocol == "h2", self.startHTTP2() else {
                    return self.closeAfterWriting(because: "no h2 by ALPN")
                }
                self.watchdog.handshakeFinished(at: self.now)
            }
        }
        guard let plaintext = self.tls.readPlaintext() else { return self.close(because: "TLS closed") }
        if let session = self.h2, !plaintext.isEmpty {
            let frames = session.framesReceived
            let accepted = session.receive(plaintext)
            if session.framesReceived != frames { self.watchdog.progressed(at: self.now) }
            guard accepted else { return self.closeAfterWriting(because: "HTTP/2 error") }
        }
        self.pump()
    }

    private func startHTTP2() -> Bool {
        guard let session = try? HTTP2Session(limits: self.limits) else { return false }
        session.onRequest = { [unowned self] request in self.ready.append(request) }
        session.onStreamClosed = { [unowned self] stream in
            self.waiting[stream] = nil
            self.ready.removeAll { $0.streamID == stream }
        }
        self.h2 = session
        return true
    }

    // MARK: Output

    /// Answers a request the delegate was given. Must be called on the loop thread.
    func respond(stream: Int32, with response: HTTPResponse) {
        guard let method = self.waiting.removeValue(forKey: stream) else { return }
        self.submit(stream, response, omitBody: method == .HEAD)
    }

    /// Answers a request the transport refuses itself (the delegate never sees it).
    func refuse(stream: Int32, with response: HTTPResponse) {
        self.submit(stream, response, omitBody: false)
    }

    private func submit(_ stream: Int32, _ response: HTTPResponse, omitBody: Bool) {
        guard !self.isClosed, let session = self.h2 else { return }
        session.respond(
            stream: stream, status: response.status, headers: response.headers, body: response.body,
            omitBody: omitBody)
        if !omitBody { self.owner.sent(response.body.count) }
        // The idle clock restarts when the application answers, not when the request came.
        self.watchdog.progressed(at: self.now)
        self.pump()
    }

    /// Gives waiting requests to the listener while the held replies are under the cap, hands
    /// nghttp2's output to the socket up to the cap, and reads only while the socket's queue is
    /// under it. Does nothing when called again from inside (a delegate answering at once): the
    /// pump under way writes that reply.
    private func pump() {
        guard !self.isClosed, !self.isPumping, let session = self.h2 else { return }
        self.isPumping = true
        while self.heldReplyBytes < self.limits.outboundCapBytes, let request = self.ready.popFirst() {
            self.owner.dispatch(request, on: self)
            if self.isClosed { return }
        }
        self.isPumping = false
        let room = self.limits.outboundCapBytes - self.tcp.queuedBytes
        guard self.tls.write(session.takeOutput(atMost: room)) else { return self.close(because: "TLS write failed") }
        self.writeCiphertext()
        guard session.isAlive else { return self.close(because: "HTTP/2 session ended") }
        if self.tcp.queuedBytes >= self.limits.outboundCapBytes {
            self.tcp.stopReading()
        } else {
            self.tcp.startReading()
        }
        self.watch()
    }

    private func written(_ succeeded: Bool) {
        guard succeeded else { return self.close(because: "write failed") }
        self.watchdog.progressed(at: self.now)
        self.pump()
    }

    private func writeCiphertext() {
        self.tcp.write(self.tls.takeCiphertext())
        self.mostQueuedBytes = max(self.mostQueuedBytes, self.tcp.queuedBytes)
    }

    // MARK: Timeouts and closing

    private func watch() {
        guard !self.isClosed else { return }
        let verdict = self.watchdog.verdict(
            at: self.now, awaitingApplication: !self.waiting.isEmpty,
            outputStuck: self.tcp.queuedBytes >= self.limits.outboundCapBytes)
        switch verdict {
        case .wait(until: nil): return
        case .wait(until: let deadline?):
            if let timer = self.timer, timer.handle.isActive, timer.armedFor <= deadline { return }
            self.timer?.handle.cancel()
            let handle = self.loop.scheduleTimer(after: .milliseconds(deadline - min(deadline, self.now))) {
                [weak self] in self?.watch()
            }
            self.timer = (deadline, handle)
        case .handshakeTimedOut: self.close(because: "TLS handshake timed out")
        case .idle: self.goAway(because: "idle")
        case .stalled: self.goAway(because: "stalled: the peer reads nothing")
        }
    }

    /// Sends GOAWAY (NO_ERROR) if the socket takes it, then closes.
    private func goAway(because reason: String) {
        if let session = self.h2 {
            session.goAway()
            let room = self.limits.outboundCapBytes - self.tcp.queuedBytes
            if self.tls.write(session.takeOutput(atMost: room)) { self.writeCiphertext() }
        }
        self.close(because: reason)
    }

    /// Writes what TLS has for the peer (an alert, nghttp2's GOAWAY), then closes: libuv writes
    /// at once what the socket takes, and the rest is dropped.
    private func closeAfterWriting(because reason: String) {
        self.writeCiphertext()
        self.close(because: reason)
    }

    func close(because reason: String = "transport closed") {
        guard !self.isClosed else { return }
        self.isClosed = true
        self.timer?.handle.cancel()
        self.timer = nil
        self.tcp.close()
        self.owner.closed(self, because: reason)
    }
}
