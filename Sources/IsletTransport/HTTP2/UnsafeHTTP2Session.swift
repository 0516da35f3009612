// Thread and lifetime rules: an `HTTP2Session` wraps one nghttp2 server session for one TLS
// connection, on the loop thread. nghttp2 calls back only from inside `receive` and
// `takeOutput` (nghttp2_session_mem_recv / mem_send), synchronously; the callbacks find the
// session through the user-data pointer, unretained (the session outlives its nghttp2 object,
// which `deinit` deletes). Header values nghttp2 hands over are copied at once. Response
// bodies stay in Swift arrays owned by the session until their stream closes; nghttp2's data
// callback copies out of them.
//
// nghttp2 forbids producing output from inside mem_recv's callbacks: the callbacks here only
// record what arrived (complete requests go to `onRequest`, which must not answer at once),
// and `takeOutput` checks that no `receive` is under way.

internal import CNGHTTP2

/// A request as HTTP/2 delivered it, before it becomes an `HTTPRequest`.
struct HTTP2Request {
    /// Why a request is handed over before its stream ended, with nothing of it stored.
    enum Problem: Equatable {
        /// Its header list went over `maxHeaderListBytes` or `maxHeaderFields`.
        case headersTooLarge
        /// Its `content-length` or its DATA went over `maxBodyBytes`.
        case bodyTooLarge
    }

    var streamID: Int32
    var method = ""
    var path = ""
    var headers = HTTPHeaders()
    var body: [UInt8] = []
    var problem: Problem?
}

/// One HTTP/2 server connection's protocol state (nghttp2), bytes in and bytes out.
final class HTTP2Session {
    private struct Partial {
        var request: HTTP2Request
        var budget: HeaderListBudget
        /// The header block being decoded is the request's trailers (counted, not stored).
        var inTrailers = false
    }

    private var session: OpaquePointer?
    private let limits: HTTP2Limits
    private var partial: [Int32: Partial] = [:]
    /// Streams handed over before the client ended them: once our reply has ended the stream,
    /// RST_STREAM(NO_ERROR) tells the client to stop sending (RFC 9113 §8.1).
    private var answeredEarly: Set<Int32> = []
    private var bodies: [Int32: (bytes: [UInt8], offset: Int)] = [:]
    private var isReceiving = false
    /// Body bytes of submitted replies not yet handed to `takeOutput`.
    private(set) var unsentBodyBytes = 0
    /// Frames received so far, of every type (a sign of life from the peer).
    private(set) var framesReceived: UInt64 = 0
    /// A request is complete (its stream's END_STREAM arrived) or refused early (`problem`).
    /// Called from inside `receive`: it must not answer before `receive` returns.
    var onRequest: ((HTTP2Request) -> Void)?
    /// A stream ended (answered, reset or refused).
    var onStreamClosed: ((Int32) -> Void)?

    init(limits: HTTP2Limits) throws(TransportError) {
        self.limits = limits
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw TransportError(.contextFailed, call: "nghttp2_session_callbacks_new", message: "out of memory")
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        Self.install(callbacks)
        var options: OpaquePointer?
        guard nghttp2_option_new(&options) == 0, let options else {
            throw TransportError(.contextFailed, call: "nghttp2_option_new", message: "out of memory")
        }
        defer { nghttp2_option_del(options) }
        // nghttp2's flood guards, at their documented defaults, named so that a build against a
        // library without them fails to link instead of serving without them: queued SETTINGS
        // and PING ACKs, CONTINUATION frames per header block, and the rate of RST_STREAM from
        // the client ("rapid reset"). Over any, the connection ends with GOAWAY.
        nghttp2_option_set_max_outbound_ack(options, 1000)
        nghttp2_option_set_max_continuations(options, 8)
        nghttp2_option_set_stream_reset_rate_limit(options, 1000, 33)
        var session: OpaquePointer?
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new2(&session, callbacks, user, options) == 0, let session else {
            throw TransportError(.contextFailed, call: "nghttp2_session_server_new2", message: "out of memory")
        }
        self.session = session
        // nghttp2 refuses streams over MAX_CONCURRENT_STREAMS itself: with RST_STREAM
        // (REFUSED_STREAM) until the client acknowledged these settings, with a connection
        // error (GOAWAY, PROTOCOL_ERROR) after. MAX_HEADER_LIST_SIZE is advisory for the
        // client; `header` below enforces it.
        var settings = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: UInt32(clamping: limits.maxConcurrentStreams)),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: UInt32(clamping: limits.maxHeaderListBytes)),
        ]
        _ = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
    }

    deinit { if let session = self.session { nghttp2_session_del(session) } }

    private static func from(_ user: UnsafeMutableRawPointer) -> HTTP2Session {
        Unmanaged<HTTP2Session>.fromOpaque(user).takeUnretainedValue()
    }

    private static func install(_ callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            HTTP2Session.from(user).beginHeaders(frame)
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let name, let value, let user else { return 0 }
            HTTP2Session.from(user).header(
                frame.pointee.hd.stream_id, UnsafeBufferPointer(start: name, count: nameLength),
                UnsafeBufferPointer(start: value, count: valueLength))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, user in
            guard let data, let user else { return 0 }
            HTTP2Session.from(user).data(streamID, UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            HTTP2Session.from(user).frameReceived(frame.pointee.hd)
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            HTTP2Session.from(user).frameSent(frame.pointee.hd)
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, _, user in
            guard let user else { return 0 }
            HTTP2Session.from(user).streamClosed(streamID)
            return 0
        }
    }

    /// Feeds plaintext from TLS. Returns false on a protocol error (close the connection once
    /// the GOAWAY nghttp2 queued is written).
    func receive(_ bytes: [UInt8]) -> Bool {
        guard let session = self.session else { return false }
        self.isReceiving = true
        defer { self.isReceiving = false }
        let n = bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
        return n >= 0
    }

    /// Frames waiting to be sent, about `limit` bytes at most: it stops after the frame that
    /// reaches `limit` (a DATA frame carries at most 16 KiB).
    ///
    /// Must not be called while `receive` runs (nghttp2 forbids mem_send inside mem_recv).
    func takeOutput(atMost limit: Int) -> [UInt8] {
        precondition(!self.isReceiving, "nghttp2_session_mem_send called from inside nghttp2_session_mem_recv")
        guard let session = self.session else { return [] }
        var output: [UInt8] = []
        while output.count < limit {
            var data: UnsafePointer<UInt8>? = nil
            let n = nghttp2_session_mem_send(session, &data)
            guard n > 0, let data else { break }
            output += UnsafeBufferPointer(start: data, count: n)
        }
        return output
    }

    /// True while the connection should stay open (nghttp2 wants to read or write).
    var isAlive: Bool {
        guard let session = self.session else { return false }
        return nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0
    }

    /// Queues GOAWAY (NO_ERROR, the last stream processed): the session ends once it is sent.
    func goAway() {
        guard let session = self.session else { return }
        _ = nghttp2_session_terminate_session(session, UInt32(NGHTTP2_NO_ERROR.rawValue))
    }

    /// Answers a stream: `:status`, the headers (lowercased; connection-level ones dropped) and
    /// the body. The stream ends with the body (HTTP/2 closes streams, never the connection).
    /// Nothing is sent before `takeOutput`.
    func respond(stream: Int32, status: Int, headers: HTTPHeaders, body: [UInt8], omitBody: Bool) {
        guard let session = self.session else { return }
        var fields: [(String, String)] = [(":status", String(status))]
        for field in headers where !Self.connectionHeaders.contains(field.name) {
            fields.append((field.name, field.value))
        }
        fields.append(("content-length", String(body.count)))
        let sendsBody = !omitBody && !body.isEmpty
        let rc = withHeaderBlock(fields) { nva, count -> Int32 in
            guard sendsBody else { return nghttp2_submit_response(session, stream, nva, count, nil) }
            var provider = nghttp2_data_provider(
                source: nghttp2_data_source(ptr: nil),
                read_callback: { _, streamID, buffer, length, flags, _, user in
                    guard let buffer, let flags, let user else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
                    return HTTP2Session.from(user).readBody(streamID, buffer, length, flags)
                })
            return nghttp2_submit_response(session, stream, nva, count, &provider)
        }
        if rc == 0, sendsBody {
            self.bodies[stream] = (body, 0)
            self.unsentBodyBytes += body.count
        }
    }

    private static let connectionHeaders: Set<String> = [
        "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "content-length",
    ]

    // MARK: nghttp2 callbacks

    private func beginHeaders(_ frame: UnsafePointer<nghttp2_frame>) {
        let stream = frame.pointee.hd.stream_id
        guard frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return }
        if frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST {
            let budget = HeaderListBudget(
                maxBytes: self.limits.maxHeaderListBytes, maxFields: self.limits.maxHeaderFields)
            self.partial[stream] = Partial(request: HTTP2Request(streamID: stream), budget: budget)
        } else {
            self.partial[stream]?.inTrailers = true
        }
    }

    /// One decoded field of a request's header list or trailers. Fields over the budget are
    /// counted, never stored, and decoding goes on (the HPACK state must stay in step with the
    /// client's); the request is refused when its header block ends.
    private func header(_ stream: Int32, _ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
        // In place (no copy of the entry), so storing a field never copies the fields before it.
        guard let inTrailers = self.partial[stream]?.inTrailers, self.partial[stream]?.request.problem == nil
        else { return }
        guard self.partial[stream]!.budget.admit(nameBytes: name.count, valueBytes: value.count) else {
            self.partial[stream]!.request.problem = .headersTooLarge
            self.partial[stream]!.request.headers = HTTPHeaders()
            self.partial[stream]!.request.path = ""
            return
        }
        guard !inTrailers else { return }
        let name = String(decoding: name, as: UTF8.self)
        let value = String(decoding: value, as: UTF8.self)
        switch name {
        case ":method": self.partial[stream]?.request.method = value
        case ":path": self.partial[stream]?.request.path = value
        case ":authority": self.partial[stream]?.request.headers.add(name: "host", value: value)
        default: if !name.hasPrefix(":") { self.partial[stream]?.request.headers.add(name: name, value: value) }
        }
    }

    private func data(_ stream: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard self.partial[stream] != nil else { return }
        guard self.partial[stream]!.request.body.count + bytes.count <= self.limits.maxBodyBytes else {
            self.partial[stream]!.request.body = []
            self.partial[stream]!.request.problem = .bodyTooLarge
            return self.handOver(stream, ended: false)
        }
        self.partial[stream]!.request.body += bytes
    }

    private func frameReceived(_ header: nghttp2_frame_hd) {
        self.framesReceived += 1
        let stream = header.stream_id
        let ended = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        if ended { self.answeredEarly.remove(stream) }
        guard header.type == UInt8(NGHTTP2_HEADERS.rawValue) || header.type == UInt8(NGHTTP2_DATA.rawValue),
            let entry = self.partial[stream]
        else { return }
        if header.type == UInt8(NGHTTP2_HEADERS.rawValue), !entry.inTrailers,
            let length = entry.request.headers["content-length"].flatMap({ Int($0) }),
            length > self.limits.maxBodyBytes
        {
            self.partial[stream]!.request.problem = .bodyTooLarge
        }
        if ended || self.partial[stream]!.request.problem != nil { self.handOver(stream, ended: ended) }
    }

    /// Hands a request over: complete, or refused before its stream ended.
    private func handOver(_ stream: Int32, ended: Bool) {
        guard let entry = self.partial.removeValue(forKey: stream) else { return }
        if !ended { self.answeredEarly.insert(stream) }
        self.onRequest?(entry.request)
    }

    /// After the frame that ends our reply, a request the client is still sending is reset
    /// with NO_ERROR (RFC 9113 §8.1): the reply did not need the rest.
    private func frameSent(_ header: nghttp2_frame_hd) {
        guard header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0,
            self.answeredEarly.remove(header.stream_id) != nil, let session = self.session
        else { return }
        _ = nghttp2_submit_rst_stream(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), header.stream_id, UInt32(NGHTTP2_NO_ERROR.rawValue))
    }

    private func streamClosed(_ stream: Int32) {
        self.partial[stream] = nil
        self.answeredEarly.remove(stream)
        if let (bytes, offset) = self.bodies.removeValue(forKey: stream) {
            self.unsentBodyBytes -= bytes.count - offset
        }
        self.onStreamClosed?(stream)
    }

    private func readBody(
        _ stream: Int32, _ buffer: UnsafeMutablePointer<UInt8>, _ length: Int, _ flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        guard let (bytes, offset) = self.bodies[stream] else {
            flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
            return 0
        }
        let count = min(length, bytes.count - offset)
        bytes.withUnsafeBufferPointer { source in
            buffer.update(from: source.baseAddress! + offset, count: count)
        }
        self.unsentBodyBytes -= count
        if offset + count == bytes.count {
            flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
            self.bodies[stream] = nil
        } else {
            self.bodies[stream] = (bytes, offset + count)
        }
        return count
    }
}

/// Calls `body` with an `nghttp2_nv` array for `fields`, valid during the call.
private func withHeaderBlock<R>(_ fields: [(String, String)], _ body: (UnsafePointer<nghttp2_nv>, Int) -> R) -> R {
    var storage: [UnsafeMutablePointer<UInt8>] = []
    defer { storage.forEach { $0.deallocate() } }
    func copy(_ text: String) -> (UnsafeMutablePointer<UInt8>, Int) {
        let bytes = Array(text.utf8)
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, bytes.count))
        pointer.initialize(from: bytes, count: bytes.count)
        storage.append(pointer)
        return (pointer, bytes.count)
    }
    let entries = fields.map { name, value -> nghttp2_nv in
        let (namePointer, nameLength) = copy(name)
        let (valuePointer, valueLength) = copy(value)
        return nghttp2_nv(
            name: namePointer, value: valuePointer, namelen: nameLength, valuelen: valueLength,
            flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
    }
    return entries.withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
}
