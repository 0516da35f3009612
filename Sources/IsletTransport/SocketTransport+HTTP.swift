/// One HTTP connection's state: the request being received and the response being written.
final class HTTPExchange {
    struct ResponseProgress {
        var response: HTTPResponse
        var omitBody: Bool
        var headersSent = false
        var offset = 0
    }

    let id: ConnectionID
    let connection: LWSConnection
    var sequence: UInt32 = 0
    /// A request waiting for its body.
    var pending: HTTPRequest?
    /// The request's body is still arriving.
    var awaitingBody = false
    /// Body bytes are thrown away (the body was refused).
    var discardingBody = false
    /// The request was given to the delegate and not yet fully answered.
    var inFlight = false
    /// Body bytes of the current request received so far.
    var bodyBytes = 0
    /// The current request's body has ended (`httpBodyCompleted`).
    var bodyCompleted = false
    /// Ends of the body lws reported again within the loop turn `repeatedEndsTurn`: a few
    /// while a pipelined request waits behind this one; without end (never giving the loop
    /// back) for a pipelined request with a body (`SocketTransport.isOwnRequestLine`).
    var repeatedEnds = 0
    var repeatedEndsTurn: UInt64 = 0
    var method: HTTPMethod = .GET
    var response: ResponseProgress?
    var closeAfterResponse = false
    var closeWhenBodyEnds = false

    init(id: ConnectionID, connection: LWSConnection) {
        self.id = id
        self.connection = connection
    }

    /// Between requests on a keep-alive connection.
    var isIdle: Bool { !self.inFlight && !self.awaitingBody && self.response == nil }
}

extension SocketTransport {
    private static let bodyMethods: Set<HTTPMethod> = [.POST, .PUT, .PATCH]

    func httpRequestStarted(_ connection: LWSConnection) -> LWSVerdict {
        let id = self.makeID(for: connection)
        let exchange = self.exchanges[id] ?? self.addExchange(id, connection)
        guard let (maybeMethod, path) = connection.methodAndPath(), let method = maybeMethod else { return .close }
        exchange.sequence &+= 1
        exchange.method = method
        exchange.bodyBytes = 0
        exchange.bodyCompleted = false
        exchange.repeatedEnds = 0
        exchange.closeAfterResponse = false
        exchange.closeWhenBodyEnds = false
        exchange.discardingBody = false
        let headers = connection.headers(extraNames: self.configuration.extraHeaderNames)
        var request = HTTPRequest(
            id: RequestID(connection: id, sequence: exchange.sequence), method: method, path: path,
            query: connection.query(), headers: headers)
        let contentLength = headers["content-length"].flatMap(Self.byteCount)
        if !self.admits(id) {
            request.connectionLimit = self.configuration.maxConnections
            self.refuseBody(
                exchange, request, bodyArrives: (contentLength ?? 0) > 0 || (method == .POST && contentLength == 0))
        } else if !connection.hasHTTPVersion {
            request.bodyProblem = .truncatedTarget
            self.refuseBody(exchange, request, bodyArrives: (contentLength ?? 0) > 0)
        } else if headers["transfer-encoding"] != nil {
            // lws 4.1 does not decode chunked request bodies.
            request.bodyProblem = .lengthRequired
            self.refuseBody(exchange, request, bodyArrives: false)
        } else if headers["content-length"] != nil && contentLength == nil {
            request.bodyProblem = .invalidLength
            self.refuseBody(exchange, request, bodyArrives: false)
        } else if Self.bodyMethods.contains(method) && contentLength == nil {
            // No length means no body (RFC 9112 §6.3), but lws 4.1 then expects one of up to
            // 100 MB: answer with an empty body and close, so no stray byte is read as a body.
            self.refuseBody(exchange, request, bodyArrives: false)
        } else if let length = contentLength, length > self.configuration.maxRequestBodyBytes {
            request.bodyProblem = .tooLarge(limit: self.configuration.maxRequestBodyBytes)
            self.refuseBody(exchange, request, bodyArrives: true)
        } else if (contentLength ?? 0) > 0 || (method == .POST && contentLength == 0) {
            // lws delivers BODY and BODY_COMPLETION (also for an explicit empty POST body).
            exchange.awaitingBody = true
            request.body.reserveCapacity(contentLength ?? 0)
            exchange.pending = request
        } else {
            self.dispatch(request, on: exchange)
        }
        return .proceed
    }

    /// A `Content-Length` value: 1 to 18 decimal digits (RFC 9110 §8.6), nothing else.
    private static func byteCount(_ text: String) -> Int? {
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy(digits.contains) else { return nil }
        return Int(text)
    }

    private func addExchange(_ id: ConnectionID, _ connection: LWSConnection) -> HTTPExchange {
        let exchange = HTTPExchange(id: id, connection: connection)
        self.exchanges[id] = exchange
        self.statistics.openHTTPConnections += 1
        return exchange
    }

    /// Answers now, throws the body away as it arrives (never buffering it), and closes after
    /// the reply; reading the body first keeps the client from seeing a reset before the reply.
    private func refuseBody(_ exchange: HTTPExchange, _ request: HTTPRequest, bodyArrives: Bool) {
        exchange.discardingBody = true
        exchange.awaitingBody = bodyArrives
        exchange.closeAfterResponse = true
        self.dispatch(request, on: exchange)
    }

    private func dispatch(_ request: HTTPRequest, on exchange: HTTPExchange) {
        exchange.inFlight = true
        self.statistics.bytesReceived += UInt64(request.body.count)
        self.delegate?.transport(self, didReceive: request)
    }

    func httpBodyReceived(_ connection: LWSConnection, _ bytes: UnsafeRawBufferPointer) -> LWSVerdict {
        guard let id = connection.id, let exchange = self.exchanges[id] else { return .close }
        if exchange.bodyBytes == 0 && Self.isOwnRequestLine(bytes, of: exchange.method) { return .close }
        exchange.bodyBytes += bytes.count
        guard !exchange.discardingBody, exchange.pending != nil else { return .proceed }
        guard exchange.pending!.body.count + bytes.count <= self.configuration.maxRequestBodyBytes else {
            return .close
        }
        exchange.pending!.body.append(contentsOf: bytes)
        return .proceed
    }

    func httpBodyCompleted(_ connection: LWSConnection) -> LWSVerdict {
        guard let id = connection.id, let exchange = self.exchanges[id] else { return .close }
        if exchange.bodyCompleted {
            if exchange.repeatedEndsTurn != self.loopTurns {
                exchange.repeatedEndsTurn = self.loopTurns
                exchange.repeatedEnds = 0
            }
            exchange.repeatedEnds += 1
            return exchange.repeatedEnds > Self.repeatedEndsPerTurn ? .close : .proceed
        }
        exchange.bodyCompleted = true
        exchange.awaitingBody = false
        if exchange.closeWhenBodyEnds { return .close }
        if let request = exchange.pending {
            exchange.pending = nil
            self.dispatch(request, on: exchange)
        }
        return .proceed
    }

    /// lws 4.1 mishandles a request with a body that was pipelined behind an earlier one (sent
    /// before that one's response): it hands the request's own head to the body callback as the
    /// body (from the start of its request line), then ends the body over and over without
    /// consuming anything, never returning to the loop. Such a connection is closed at the first
    /// sign: a body whose first bytes are its own request's method and a space, or as much of
    /// them as the first chunk holds (after the empty lines a client may send between requests;
    /// never a JSON body), or, should the head not be where
    /// the body starts, more than `repeatedEndsPerTurn` ends of one body within a loop turn.
    /// Requests answered before it keep their responses; the client sends the closed one again
    /// on a new connection, as it would after any keep-alive close.
    private static func isOwnRequestLine(_ bytes: UnsafeRawBufferPointer, of method: HTTPMethod) -> Bool {
        let line = Array(method.rawValue.utf8) + [UInt8(ascii: " ")]
        let start = bytes.drop { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }
        return !start.isEmpty && start.prefix(line.count).elementsEqual(line.prefix(start.count))
    }

    /// Repeated ends of one body allowed within a loop turn: lws reports a few per turn while a
    /// pipelined request waits; past this it is looping (`isOwnRequestLine`).
    static let repeatedEndsPerTurn = 64

    public func respond(to request: RequestID, with response: HTTPResponse) {
        if let secure = self.secure, secure.owns(request.connection) {
            return secure.respond(to: request, with: response)
        }
        guard let exchange = self.exchanges[request.connection], exchange.sequence == request.sequence,
            exchange.inFlight, exchange.response == nil
        else { return }
        if response.closeConnection { exchange.closeAfterResponse = true }
        exchange.response = HTTPExchange.ResponseProgress(response: response, omitBody: exchange.method == .HEAD)
        exchange.connection.requestWritable()
    }

    func httpWritable(_ connection: LWSConnection) -> LWSVerdict {
        guard let id = connection.id, let exchange = self.exchanges[id], var progress = exchange.response else {
            return .proceed
        }
        let body = progress.response.body
        if !progress.headersSent {
            var headers = progress.response.headers
            if exchange.closeAfterResponse || self.isShuttingDown {
                headers.replaceOrAdd(name: "connection", value: "close")
            }
            guard
                connection.writeResponseHead(
                    status: progress.response.status, headers: headers, contentLength: body.count,
                    buffer: self.writeBuffer)
            else { return .close }
            progress.headersSent = true
            exchange.response = progress
            if progress.omitBody || body.isEmpty { return self.finishResponse(exchange) }
            connection.requestWritable()
            return .proceed
        }
        let end = min(body.count, progress.offset + self.writeBuffer.capacity)
        guard connection.writeBody(body[progress.offset..<end], isFinal: end == body.count, buffer: self.writeBuffer)
        else {
            return .close
        }
        self.statistics.bytesSent += UInt64(end - progress.offset)
        progress.offset = end
        exchange.response = progress
        if end == body.count { return self.finishResponse(exchange) }
        connection.requestWritable()
        return .proceed
    }

    private func finishResponse(_ exchange: HTTPExchange) -> LWSVerdict {
        exchange.response = nil
        exchange.inFlight = false
        if exchange.closeAfterResponse {
            guard exchange.awaitingBody else { return .close }
            exchange.closeWhenBodyEnds = true
            return .proceed
        }
        if self.isShuttingDown { return .close }
        return exchange.connection.completeTransaction() ? .proceed : .close
    }

    func httpClosed(_ connection: LWSConnection) {
        guard let id = connection.id, self.exchanges.removeValue(forKey: id) != nil else { return }
        self.statistics.openHTTPConnections -= 1
        self.checkShutdown()
    }
}
