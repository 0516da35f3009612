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
    var streamID: Int32
    var method = ""
    var path = ""
    var headers = HTTPHeaders()
    var body: [UInt8] = []
    var tooLarge = false
}

/// One HTTP/2 server connection's protocol state (nghttp2), bytes in and bytes out.
final class HTTP2Session {
    private var session: OpaquePointer?
    private var partial: [Int32: HTTP2Request] = [:]
    private var bodies: [Int32: (bytes: [UInt8], offset: Int)] = [:]
    private let maxBodyBytes: Int
    private var isReceiving = false
    /// A request is complete (its stream's END_STREAM arrived). Called from inside `receive`:
    /// it must not answer before `receive` returns.
    var onRequest: ((HTTP2Request) -> Void)?
    /// A stream ended (answered, reset or refused).
    var onStreamClosed: ((Int32) -> Void)?

    init(maxBodyBytes: Int) throws(TransportError) {
        self.maxBodyBytes = maxBodyBytes
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw TransportError(.contextFailed, call: "nghttp2_session_callbacks_new", message: "out of memory")
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            return HTTP2Session.from(user).beginHeaders(frame.pointee.hd)
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
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, _, user in
            guard let user else { return 0 }
            HTTP2Session.from(user).streamClosed(streamID)
            return 0
        }
        var session: OpaquePointer?
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new(&session, callbacks, user) == 0, let session else {
            throw TransportError(.contextFailed, call: "nghttp2_session_server_new", message: "out of memory")
        }
        self.session = session
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: 100)
        ]
        _ = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
    }

    deinit { if let session = self.session { nghttp2_session_del(session) } }

    private static func from(_ user: UnsafeMutableRawPointer) -> HTTP2Session {
        Unmanaged<HTTP2Session>.fromOpaque(user).takeUnretainedValue()
    }

    /// Feeds plaintext from TLS. Returns false on a protocol error (close the connection).
    func receive(_ bytes: [UInt8]) -> Bool {
        guard let session = self.session else { return false }
        self.isReceiving = true
        defer { self.isReceiving = false }
        let n = bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
        return n >= 0
    }

    /// Frames waiting to be sent.
    ///
    /// Must not be called while `receive` runs (nghttp2 forbids mem_send inside mem_recv).
    func takeOutput() -> [UInt8] {
        precondition(!self.isReceiving, "nghttp2_session_mem_send called from inside nghttp2_session_mem_recv")
        guard let session = self.session else { return [] }
        var output: [UInt8] = []
        while true {
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
        if sendsBody { self.bodies[stream] = (body, 0) }
        withHeaderBlock(fields) { nva, count in
            if sendsBody {
                var provider = nghttp2_data_provider(
                    source: nghttp2_data_source(ptr: nil),
                    read_callback: { _, streamID, buffer, length, flags, _, user in
                        guard let buffer, let flags, let user else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
                        return HTTP2Session.from(user).readBody(streamID, buffer, length, flags)
                    })
                _ = nghttp2_submit_response(session, stream, nva, count, &provider)
            } else {
                _ = nghttp2_submit_response(session, stream, nva, count, nil)
            }
        }
    }

    private static let connectionHeaders: Set<String> = [
        "connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "content-length",
    ]

    // MARK: nghttp2 callbacks

    private func beginHeaders(_ header: nghttp2_frame_hd) -> Int32 {
        guard header.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
        self.partial[header.stream_id] = HTTP2Request(streamID: header.stream_id)
        return 0
    }

    private func header(_ stream: Int32, _ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) {
        guard self.partial[stream] != nil else { return }
        let name = String(decoding: name, as: UTF8.self)
        let value = String(decoding: value, as: UTF8.self)
        switch name {
        case ":method": self.partial[stream]?.method = value
        case ":path": self.partial[stream]?.path = value
        case ":authority": self.partial[stream]?.headers.add(name: "host", value: value)
        default: if !name.hasPrefix(":") { self.partial[stream]?.headers.add(name: name, value: value) }
        }
    }

    private func data(_ stream: Int32, _ bytes: UnsafeBufferPointer<UInt8>) {
        guard var request = self.partial[stream] else { return }
        if request.tooLarge || request.body.count + bytes.count > self.maxBodyBytes {
            request.tooLarge = true
            request.body = []
        } else {
            request.body += bytes
        }
        self.partial[stream] = request
    }

    private func frameReceived(_ header: nghttp2_frame_hd) {
        let isRequestPart =
            header.type == UInt8(NGHTTP2_HEADERS.rawValue) || header.type == UInt8(NGHTTP2_DATA.rawValue)
        guard isRequestPart, header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0,
            let request = self.partial.removeValue(forKey: header.stream_id)
        else { return }
        self.onRequest?(request)
    }

    private func streamClosed(_ stream: Int32) {
        self.partial[stream] = nil
        self.bodies[stream] = nil
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
