/// The TLS listener of a `SocketTransport`: HTTP/2 (ALPN `h2`) over TLS, on its own port, with
/// requests delivered to the same delegate as HTTP/1.1 ones and answered through the same
/// `respond(to:with:)`.
///
/// libwebsockets 4.1.6 does TLS and ALPN, but in HTTP/2 it drops every request header it does
/// not know (`apns-topic`, `apns-push-type`…: `lib/roles/h2/hpack.c` marks them ignored), which
/// the APNs-style ingress needs. So this listener does TLS with OpenSSL (memory BIOs) and HTTP/2
/// with nghttp2, over libuv TCP handles on the transport's loop. HTTP/2 ends streams, never the
/// connection: a reply that asks to close its connection (a refused body) just ends its stream.
/// Loop-confined.
final class HTTP2Listener {
    private unowned let transport: SocketTransport
    private let context: TLSContext
    private let listener: UVTCPHandle
    private var connections: [ConnectionID: HTTP2Connection] = [:]
    private(set) var port = 0

    init(transport: SocketTransport, settings: TransportConfiguration.TLS, host: String) throws(TransportError) {
        self.transport = transport
        self.context = try TLSContext(certificatePath: settings.certificatePath, keyPath: settings.keyPath)
        self.listener = UVTCPHandle(loop: transport.loop.uv)
        do {
            self.port = try self.listener.listen(host: host, port: settings.port)
        } catch {
            self.listener.close()
            throw error
        }
        self.listener.onConnection = { [unowned self] in self.accept() }
    }

    private func accept() {
        let client = UVTCPHandle(loop: self.transport.loop.uv)
        guard self.listener.accept(into: client), self.transport.acceptsNewConnection(), !self.transport.isShuttingDown,
            let tls = try? TLSSession(context: self.context)
        else { return client.close() }
        let id = self.transport.newConnectionID()
        let connection = HTTP2Connection(id: id, tcp: client, tls: tls, owner: self)
        self.connections[id] = connection
        self.transport.statistics.openHTTPConnections += 1
        connection.start()
    }

    /// True when `connection` is one of this listener's.
    func owns(_ connection: ConnectionID) -> Bool { self.connections[connection] != nil }

    /// True when no request is waiting for its reply.
    var isIdle: Bool { self.connections.values.allSatisfy { $0.waiting.isEmpty } }

    func respond(to request: RequestID, with response: HTTPResponse) {
        self.connections[request.connection]?.respond(stream: Int32(request.sequence), with: response)
    }

    /// Stops listening (open connections go on).
    func stopAccepting() { self.listener.close() }

    /// Closes the listener and every connection.
    func closeAll() {
        self.listener.close()
        for connection in self.connections.values { connection.close() }
    }

    fileprivate func dispatch(_ request: HTTP2Request, on connection: HTTP2Connection) {
        guard let method = HTTPMethod(rawValue: request.method) else {
            return connection.respond(stream: request.streamID, with: HTTPResponse(status: 405), method: nil)
        }
        let (path, query) = splitTarget(request.path)
        var http = HTTPRequest(
            id: RequestID(connection: connection.id, sequence: UInt32(request.streamID)), method: method, path: path,
            query: query, headers: request.headers, body: request.body)
        let limit = self.transport.configuration.maxRequestBodyBytes
        let announced = request.headers["content-length"].flatMap { Int($0) } ?? 0
        if request.tooLarge || announced > limit {
            http.body = []
            http.bodyProblem = .tooLarge(limit: limit)
        }
        if !self.transport.admits(connection.id) {
            http.connectionLimit = self.transport.configuration.maxConnections
        }
        connection.waiting[request.streamID] = method
        self.transport.statistics.bytesReceived += UInt64(http.body.count)
        self.transport.delegate?.transport(self.transport, didReceive: http)
    }

    fileprivate func closed(_ connection: HTTP2Connection) {
        guard self.connections.removeValue(forKey: connection.id) != nil else { return }
        self.transport.connectionEnded(connection.id)
        self.transport.statistics.openHTTPConnections -= 1
        self.transport.checkShutdown()
    }

    fileprivate func sent(_ bytes: Int) { self.transport.statistics.bytesSent += UInt64(bytes) }
}

/// One TLS + HTTP/2 connection. Loop-confined.
private final class HTTP2Connection {
    let id: ConnectionID
    let tcp: UVTCPHandle
    let tls: TLSSession
    unowned let owner: HTTP2Listener
    var h2: HTTP2Session?
    /// Streams whose request went to the delegate and whose reply has not been submitted.
    var waiting: [Int32: HTTPMethod] = [:]
    private var isClosed = false

    init(id: ConnectionID, tcp: UVTCPHandle, tls: TLSSession, owner: HTTP2Listener) {
        self.id = id
        self.tcp = tcp
        self.tls = tls
        self.owner = owner
    }

    func start() {
        self.tcp.onRead = { [unowned self] bytes in self.received(bytes) }
        self.tcp.startReading()
    }

    private func received(_ bytes: UnsafeRawBufferPointer?) {
        guard let bytes else { return self.close() }
        self.tls.receive(bytes)
        if !self.tls.isEstablished {
            switch self.tls.handshake() {
            case .handshaking: return self.flush()
            case .failed: return self.flushAndClose()
            case .established:
                guard self.tls.negotiatedProtocol == "h2", self.startHTTP2() else { return self.flushAndClose() }
            }
        }
        guard let plaintext = self.tls.readPlaintext() else { return self.close() }
        if !plaintext.isEmpty, self.h2?.receive(plaintext) != true { return self.flushAndClose() }
        self.flush()
    }

    private func startHTTP2() -> Bool {
        guard let session = try? HTTP2Session(maxBodyBytes: self.owner.transportLimit) else { return false }
        session.onRequest = { [unowned self] request in self.owner.dispatch(request, on: self) }
        session.onStreamClosed = { [unowned self] stream in self.waiting[stream] = nil }
        self.h2 = session
        return true
    }

    func respond(stream: Int32, with response: HTTPResponse, method: HTTPMethod?? = .none) {
        guard !self.isClosed, let session = self.h2 else { return }
        let requestMethod: HTTPMethod?
        if case .some(let given) = method {
            requestMethod = given
        } else {
            guard let waiting = self.waiting.removeValue(forKey: stream) else { return }
            requestMethod = waiting
        }
        session.respond(
            stream: stream, status: response.status, headers: response.headers, body: response.body,
            omitBody: requestMethod == .HEAD)
        if requestMethod != .HEAD { self.owner.sent(response.body.count) }
        self.flush()
    }

    private func flush() {
        if let session = self.h2 {
            let output = session.takeOutput()
            guard self.tls.write(output) else { return self.close() }
        }
        self.tcp.write(self.tls.takeCiphertext())
        if let session = self.h2, !session.isAlive { self.close() }
    }

    private func flushAndClose() {
        self.tcp.write(self.tls.takeCiphertext())
        self.close()
    }

    func close() {
        guard !self.isClosed else { return }
        self.isClosed = true
        self.tcp.close()
        self.owner.closed(self)
    }
}

extension HTTP2Listener {
    fileprivate var transportLimit: Int { self.transport.configuration.maxRequestBodyBytes }
}

/// Splits `:path` into the percent-decoded path and the query items.
func splitTarget(_ target: String) -> (String, [QueryItem]) {
    let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    let path = percentDecoded(parts.first.map(String.init) ?? "/")
    guard parts.count == 2 else { return (path, []) }
    let items = parts[1].split(separator: "&").map { pair -> QueryItem in
        let halves = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        return QueryItem(
            name: percentDecoded(String(halves[0]), plusIsSpace: true),
            value: halves.count == 2 ? percentDecoded(String(halves[1]), plusIsSpace: true) : "")
    }
    return (path, items)
}

private func percentDecoded(_ text: String, plusIsSpace: Bool = false) -> String {
    var bytes: [UInt8] = []
    var utf8 = Array(text.utf8)[...]
    while let byte = utf8.popFirst() {
        if byte == UInt8(ascii: "%"), utf8.count >= 2,
            let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
        {
            bytes.append(value)
            utf8 = utf8.dropFirst(2)
        } else if plusIsSpace && byte == UInt8(ascii: "+") {
            bytes.append(UInt8(ascii: " "))
        } else {
            bytes.append(byte)
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}
