import Logging

/// The TLS listener of a `SocketTransport`: HTTP/2 (ALPN `h2`) over TLS, on its own port, with
/// requests delivered to the same delegate as HTTP/1.1 ones and answered through the same
/// `respond(to:with:)`.
///
/// libwebsockets 4.1.6 does TLS and ALPN, but in HTTP/2 it drops every request header it does
/// not know (`apns-topic`, `apns-push-type`…: `lib/roles/h2/hpack.c` marks them ignored), which
/// the APNs-style ingress needs. So this listener does TLS with OpenSSL (memory BIOs) and HTTP/2
/// with nghttp2, over libuv TCP handles on the transport's loop. HTTP/2 ends streams, never the
/// connection: a reply that asks to close its connection (a refused body) just ends its stream.
/// The limits (`HTTP2Limits`) and timeouts (`HTTP2Watchdog`) are per connection. Loop-confined.
final class HTTP2Listener {
    private unowned let transport: SocketTransport
    private let context: TLSContext
    private let listener: UVTCPHandle
    private let settings: TransportConfiguration.TLS
    private let limits: HTTP2Limits
    private var connections: [ConnectionID: HTTP2Connection] = [:]
    private(set) var port = 0

    init(transport: SocketTransport, settings: TransportConfiguration.TLS, host: String) throws(TransportError) {
        self.transport = transport
        self.settings = settings
        self.limits = HTTP2Limits(configuration: transport.configuration, tls: settings)
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
        guard self.listener.accept(into: client), self.transport.admitsDescriptor(client.descriptor),
            self.transport.acceptsNewConnection(), !self.transport.isShuttingDown,
            let tls = try? TLSSession(context: self.context)
        else { return client.close() }
        let id = self.transport.newConnectionID()
        let connection = HTTP2Connection(
            id: id, tcp: client, tls: tls, owner: self, loop: self.transport.loop, limits: self.limits,
            timeouts: self.settings)
        self.connections[id] = connection
        self.transport.statistics.openHTTPConnections += 1
        connection.start()
    }

    /// True when `connection` is one of this listener's.
    func owns(_ connection: ConnectionID) -> Bool { self.connections[connection] != nil }

    /// One of this listener's connections.
    func connection(_ id: ConnectionID) -> HTTP2Connection? { self.connections[id] }

    /// True when no request is waiting for the delegate or for its reply.
    var isIdle: Bool { self.connections.values.allSatisfy { $0.isQuiet } }

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

    /// Turns a request into an `HTTPRequest` for the delegate, or refuses it here: a header list
    /// over the limits gets `431` (not RST_STREAM: the client learns why, and refusing costs
    /// nothing more, since HPACK decoding must go on either way), a method the server does not
    /// know `405`. A body over the limit goes to the delegate with `bodyProblem` set, as on
    /// HTTP/1.1 (`413`).
    func dispatch(_ request: HTTP2Request, on connection: HTTP2Connection) {
        if request.problem == .headersTooLarge {
            return connection.refuse(stream: request.streamID, with: self.headersTooLarge)
        }
        guard let method = HTTPMethod(rawValue: request.method) else {
            return connection.refuse(stream: request.streamID, with: HTTPResponse(status: 405))
        }
        let (path, query) = splitTarget(request.path)
        var http = HTTPRequest(
            id: RequestID(connection: connection.id, sequence: UInt32(request.streamID)), method: method, path: path,
            query: query, headers: request.headers, body: request.body)
        if request.problem == .bodyTooLarge {
            http.body = []
            http.bodyProblem = .tooLarge(limit: self.limits.maxBodyBytes)
        }
        if !self.transport.admits(connection.id) {
            http.connectionLimit = self.transport.configuration.maxConnections
        }
        connection.waiting[request.streamID] = method
        self.transport.statistics.bytesReceived += UInt64(http.body.count)
        self.transport.delegate?.transport(self.transport, didReceive: http)
    }

    private var headersTooLarge: HTTPResponse {
        let text = "request header fields too large: at most \(self.limits.maxHeaderFields) fields and "
            + "\(self.limits.maxHeaderListBytes) bytes (RFC 9113 section 6.5.2 sizes)\n"
        return HTTPResponse(status: 431, headers: ["content-type": "text/plain; charset=utf-8"], body: Array(text.utf8))
    }

    func closed(_ connection: HTTP2Connection, because reason: String) {
        guard self.connections.removeValue(forKey: connection.id) != nil else { return }
        self.transport.logger.debug(
            "http2 connection closed", metadata: ["islet.conn.id": "\(connection.id)", "islet.reason": "\(reason)"])
        self.transport.connectionEnded(connection.id)
        self.transport.statistics.openHTTPConnections -= 1
        self.transport.checkShutdown()
    }

    func sent(_ bytes: Int) { self.transport.statistics.bytesSent += UInt64(bytes) }
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
        // Two hexadecimal digits: `UInt8(_:radix:)` alone would also take a sign ("%+f").
        if byte == UInt8(ascii: "%"), utf8.count >= 2,
            utf8.prefix(2).allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }),
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
