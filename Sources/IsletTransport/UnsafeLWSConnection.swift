// Thread and lifetime rules: an `LWSConnection` wraps a `struct lws *` that libwebsockets owns.
// Use it only on the loop thread, and only inside a libwebsockets callback for that connection
// or between callbacks while the connection is known to be open (from its first callback to
// LWS_CALLBACK_CLOSED / CLOSED_HTTP, after which the pointer is dangling). Header accessors
// work only while lws still holds the request headers (HTTP, BODY and FILTER_* callbacks).
// The write helpers copy bytes into the transport's `WriteBuffer`, which leaves LWS_PRE bytes
// in front as lws_write requires, and issue one lws_write per call; `sendFrames` writes frames
// with one send() on the socket instead, and one lws_write for what the socket did not take.

internal import CLibWebSockets
internal import CPrefetch
#if canImport(Glibc)
import Glibc
#endif

/// One reusable buffer for lws_write, with the LWS_PRE headroom lws needs in front.
/// Allocated once per transport; single-threaded (the loop thread).
final class WriteBuffer {
    let capacity: Int
    private let base: UnsafeMutableRawPointer

    init(capacity: Int) {
        self.capacity = capacity
        self.base = .allocate(byteCount: islet_lws_pre + capacity, alignment: 16)
    }

    deinit { self.base.deallocate() }

    /// The first byte after the LWS_PRE headroom.
    var payload: UnsafeMutablePointer<UInt8> {
        (self.base + islet_lws_pre).assumingMemoryBound(to: UInt8.self)
    }

    /// Copies `bytes` after the headroom and returns the pointer to pass to lws_write.
    func load(_ bytes: ArraySlice<UInt8>) -> UnsafeMutablePointer<UInt8> {
        self.load(bytes, at: 0)
        return self.payload
    }

    /// Copies `bytes` to `offset` bytes after the headroom; returns the offset after them.
    @discardableResult
    func load(_ bytes: ArraySlice<UInt8>, at offset: Int) -> Int {
        precondition(offset + bytes.count <= self.capacity, "write larger than the write buffer")
        bytes.withUnsafeBytes { source in
            if let address = source.baseAddress {
                (self.payload + offset).update(from: address.assumingMemoryBound(to: UInt8.self), count: source.count)
            }
        }
        return offset + bytes.count
    }
}

/// A libwebsockets connection (`struct lws *`) with typed accessors.
struct LWSConnection {
    let wsi: OpaquePointer

    // MARK: Identity

    /// The transport's identifier for this connection, kept in lws's opaque user data.
    var id: ConnectionID? {
        get {
            guard let raw = lws_get_opaque_user_data(self.wsi) else { return nil }
            return ConnectionID(UInt64(UInt(bitPattern: raw)))
        }
        nonmutating set {
            lws_set_opaque_user_data(
                self.wsi, newValue.flatMap { UnsafeMutableRawPointer(bitPattern: UInt($0.rawValue)) })
        }
    }

    /// The name of the protocol lws bound this connection to.
    var protocolName: String? {
        guard let proto = lws_get_protocol(self.wsi), let name = proto.pointee.name else { return nil }
        return String(cString: name)
    }

    // MARK: Request head

    /// The request method and the URI libwebsockets parsed (percent-decoded, no query).
    func methodAndPath() -> (HTTPMethod?, String)? {
        var uri: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        let index = lws_http_get_uri_and_method(self.wsi, &uri, &length)
        guard index >= 0, let uri else { return nil }
        let path = String(decoding: UnsafeRawBufferPointer(start: uri, count: Int(length)), as: UTF8.self)
        return (Self.method(lwsIndex: index, colonMethod: { self.header(WSI_TOKEN_HTTP_COLON_METHOD) }), path)
    }

    /// Whether libwebsockets read the request line's HTTP version. It is missing when a decoded
    /// `%0D` or `%0A` in the target ended the line early: lws 4.1.6 then keeps the path up to that
    /// byte and drops the rest, so the path is not the one the client sent.
    var hasHTTPVersion: Bool { lws_hdr_total_length(self.wsi, WSI_TOKEN_HTTP) > 0 }

    private static func method(lwsIndex: Int32, colonMethod: () -> String?) -> HTTPMethod? {
        // The order of lws's `methods[]` table (lib/roles/http/server/server.c, 4.1.6).
        switch lwsIndex {
        case 0: return .GET
        case 1: return .POST
        case 2: return .OPTIONS
        case 3: return .PUT
        case 4: return .PATCH
        case 5: return .DELETE
        case 7: return .HEAD
        case 8: return colonMethod().flatMap { HTTPMethod(rawValue: $0) }  // HTTP/2 ":path"
        default: return nil
        }
    }

    /// The value of a header lws knows by token, or nil if absent.
    func header(_ token: lws_token_indexes) -> String? {
        let length = lws_hdr_total_length(self.wsi, token)
        guard length > 0 else { return nil }
        return String(unsafeUninitializedCapacity: Int(length) + 1) { buffer in
            let copied = buffer.withMemoryRebound(to: CChar.self) { chars in
                lws_hdr_copy(self.wsi, chars.baseAddress, Int32(chars.count), token)
            }
            return Self.valueLength(buffer, Int(copied))
        }
    }

    /// A field value's length without its trailing spaces and tabs (RFC 9110 §5.5: they are not
    /// part of the value; lws drops only the leading ones on HTTP/1.1, nghttp2 refuses both).
    private static func valueLength(_ buffer: UnsafeMutableBufferPointer<UInt8>, _ copied: Int) -> Int {
        var length = max(0, copied)
        while length > 0, buffer[length - 1] == 0x20 || buffer[length - 1] == 0x09 { length -= 1 }
        return length
    }

    /// Every header lws parsed, plus the custom ones named in `extraNames`.
    func headers(extraNames: [String]) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for raw in 0..<Int(WSI_TOKEN_COUNT.rawValue) {
            let token = lws_token_indexes(rawValue: UInt32(raw))
            guard lws_hdr_total_length(self.wsi, token) > 0, let name = lws_token_to_string(token) else { continue }
            let text = String(cString: name)
            // Header tokens are spelled "name:"; method, version and pseudo-header tokens are not.
            guard text.hasSuffix(":"), !text.hasPrefix(":"), let value = self.header(token) else { continue }
            headers.add(name: String(text.dropLast()), value: value)
        }
        for name in extraNames {
            if let value = self.customHeader(name) { headers.add(name: name, value: value) }
        }
        return headers
    }

    private func customHeader(_ name: String) -> String? {
        let key = name.lowercased() + ":"
        let length = key.withCString { lws_hdr_custom_length(self.wsi, $0, Int32(key.utf8.count)) }
        guard length > 0 else { return nil }
        return String(unsafeUninitializedCapacity: Int(length) + 1) { buffer in
            let copied = key.withCString { keyPointer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    lws_hdr_custom_copy(
                        self.wsi, chars.baseAddress, Int32(chars.count), keyPointer, Int32(key.utf8.count))
                }
            }
            return Self.valueLength(buffer, Int(copied))
        }
    }

    /// The query parameters, each percent-decoded by lws.
    func query() -> [QueryItem] {
        let total = Int(lws_hdr_total_length(self.wsi, WSI_TOKEN_HTTP_URI_ARGS))
        guard total > 0 else { return [] }
        var items: [QueryItem] = []
        var buffer = [CChar](repeating: 0, count: total + 1)
        var index: Int32 = 0
        while true {
            let length = lws_hdr_copy_fragment(self.wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
            guard length >= 0 else { return items }
            let fragment = String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let equals = fragment.firstIndex(of: "=") {
                items.append(
                    QueryItem(
                        name: String(fragment[..<equals]), value: String(fragment[fragment.index(after: equals)...])))
            } else if !fragment.isEmpty {
                items.append(QueryItem(name: fragment, value: ""))
            }
            index += 1
        }
    }

    // MARK: HTTP writes

    /// Writes the status line and headers (one lws_write). Returns false on failure.
    func writeResponseHead(status: Int, headers: HTTPHeaders, contentLength: Int, buffer: WriteBuffer) -> Bool {
        let start = buffer.payload
        var cursor: UnsafeMutablePointer<UInt8>? = start
        let end = start + buffer.capacity
        let contentType = headers["content-type"]
        let added = withOptionalCString(contentType) { type in
            lws_add_http_common_headers(self.wsi, UInt32(status), type, lws_filepos_t(contentLength), &cursor, end)
        }
        guard added == 0 else { return false }
        for field in headers where field.name != "content-type" && field.name != "content-length" {
            let name = field.name + ":"
            let ok = name.withCString { namePointer in
                field.value.withCString { valuePointer in
                    lws_add_http_header_by_name(
                        self.wsi, UnsafeRawPointer(namePointer).assumingMemoryBound(to: UInt8.self),
                        UnsafeRawPointer(valuePointer).assumingMemoryBound(to: UInt8.self),
                        Int32(field.value.utf8.count), &cursor, end)
                }
            }
            guard ok == 0 else { return false }
        }
        return lws_finalize_write_http_header(self.wsi, start, &cursor, end) == 0
    }

    /// Writes one piece of an HTTP body (one lws_write). Returns false on failure.
    func writeBody(_ bytes: ArraySlice<UInt8>, isFinal: Bool, buffer: WriteBuffer) -> Bool {
        let payload = buffer.load(bytes)
        let kind = isFinal ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP
        return lws_write(self.wsi, payload, bytes.count, kind) >= 0
    }

    /// Ends an HTTP transaction. Returns true if the connection stays open for another request.
    func completeTransaction() -> Bool { lws_http_transaction_completed(self.wsi) == 0 }

    // MARK: WebSocket

    /// Writes one frame or fragment (one lws_write). Returns false on failure.
    func writeWebSocket(_ chunk: OutboundQueue.Chunk, buffer: WriteBuffer) -> Bool {
        let payload = buffer.load(chunk.bytes)
        let initial = chunk.isText ? LWS_WRITE_TEXT : LWS_WRITE_BINARY
        let flags = islet_lws_write_ws_flags(Int32(initial.rawValue), chunk.isFirst ? 1 : 0, chunk.isLast ? 1 : 0)
        return lws_write(self.wsi, payload, chunk.bytes.count, lws_write_protocol(rawValue: UInt32(flags))) >= 0
    }

    /// Writes bytes that are already WebSocket frames (`WebSocketFraming`), in one lws_write.
    ///
    /// libwebsockets 4.1.6's WebSocket role passes an `LWS_WRITE_HTTP` write straight to
    /// `lws_issue_raw` (`rops_write_role_protocol_ws`), which sends the bytes as they are and keeps
    /// what the socket does not take, to send before any later write. No LWS_PRE headroom is
    /// needed, so the bytes are written from where they are. Returns false on failure.
    private func writeFrames(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
        let pointer = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        return lws_write(self.wsi, pointer, bytes.count, LWS_WRITE_HTTP) >= 0
    }

    /// Sends bytes that are already WebSocket frames on the connection's socket itself, past
    /// libwebsockets: what `writeFrames` does through `lws_issue_raw`, without lws's per-write
    /// work (its role's write, its connection and WebSocket structures: two more cold lines per
    /// connection in a fan-out). While lws holds bytes unsent (a part of an earlier write, or
    /// of a pong it wrote itself), the frames go behind them through `writeFrames`; what the
    /// socket does not take goes there too, for lws to send before any later write, with the
    /// writable callback armed. Returns false on failure.
    func sendFrames(_ bytes: UnsafeRawBufferPointer, on socket: Int32) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return true }
        guard !self.hasBufferedOutput else { return self.writeFrames(bytes) }
        let sent = send(socket, base, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        if sent == bytes.count { return true }
        guard sent >= 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else { return false }
        return self.writeFrames(UnsafeRawBufferPointer(rebasing: bytes[max(sent, 0)...]))
    }

    /// The connection's socket.
    var socket: Int32 { lws_get_socket_fd(self.wsi) }

    /// True while libwebsockets holds bytes of an earlier write it could not send yet.
    var hasBufferedOutput: Bool { lws_partial_buffered(self.wsi) != 0 }

    /// Asks the CPU for the line of lws's connection structure that `hasBufferedOutput` reads
    /// (`buflist_out`, 0x2d0 bytes in, in Debian's libwebsockets 4.1.6, as its
    /// `lws_partial_buffered` shows): a fan-out checks it for thousands of cold connections in a
    /// row. A hint: with another layout it prefetches a line of the same structure for nothing.
    func prefetchBufferedOutputLine() {
        islet_prefetch(UnsafeRawPointer(self.wsi) + Self.bufferedOutputOffset)
    }

    private static let bufferedOutputOffset = 0x2d0

    /// Writes a close frame (one lws_write) and gives the peer 5 s to answer it.
    ///
    /// Used instead of `lws_close_reason` + returning -1 from a writable callback: Debian's lws
    /// 4.1.6 is built with `_DEBUG`, whose libuv "repeat close" test kills a connection closed
    /// from a writable callback before the close frame is sent.
    func writeClose(_ code: WebSocketCloseCode, _ reason: String, buffer: WriteBuffer) -> Bool {
        let payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)] + Array(reason.utf8.prefix(123))
        let pointer = buffer.load(payload[...])
        guard
            lws_write(self.wsi, pointer, payload.count, lws_write_protocol(rawValue: UInt32(islet_lws_write_close)))
                >= 0
        else { return false }
        lws_set_timeout(self.wsi, PENDING_TIMEOUT_CLOSE_ACK, 5)
        return true
    }

    /// Sets the close frame lws will send when the callback returns -1 (from a receive callback).
    func setCloseReason(_ code: WebSocketCloseCode, _ reason: String) {
        var bytes = Array(reason.utf8.prefix(123))
        bytes.withUnsafeMutableBufferPointer { reasonBytes in
            lws_close_reason(
                self.wsi, lws_close_status(rawValue: UInt32(code.rawValue)), reasonBytes.baseAddress, reasonBytes.count)
        }
    }

    /// Facts about the WebSocket frame being received. `isCompressed` is RSV1 of the current
    /// frame: permessage-deflate sets it on the first frame of a compressed message only.
    var receivedFrame: (isBinary: Bool, isFinal: Bool, remaining: Int, isCompressed: Bool) {
        (
            lws_frame_is_binary(self.wsi) != 0, lws_is_final_fragment(self.wsi) != 0,
            Int(lws_remaining_packet_payload(self.wsi)), lws_get_reserved_bits(self.wsi) & 0x40 != 0
        )
    }

    // MARK: Scheduling

    /// Asks for one writable callback. Cheap to call again before it arrives.
    func requestWritable() { _ = lws_callback_on_writable(self.wsi) }

    /// Closes the connection (without a close frame) if it is still open after `seconds`.
    /// A later timeout replaces this one (writing the close frame sets the close-ack one).
    func expire(afterSeconds seconds: Int32) { lws_set_timeout(self.wsi, PENDING_TIMEOUT_CLOSE_SEND, seconds) }

    /// Makes libwebsockets go on inflating a compressed message it has not finished.
    ///
    /// lws 4.1.6 inflates permessage-deflate data one buffer (1 KiB) at a time and leaves the
    /// rest to its libuv idle handler, which stops itself after one more buffer
    /// (`lws_uv_idle` in lib/event-libs/libuv/libuv.c): the remainder then waits for the next
    /// network event on any socket. Signalling lws's event pipe (`lws_cancel_service`) is such an
    /// event: its handler restarts the idle handler, which inflates the next buffer.
    func continueInflating() { lws_cancel_service(lws_get_context(self.wsi)) }

    /// Closes the connection on the next loop turn, from outside its callbacks.
    func closeSoon() { lws_set_timeout(self.wsi, PENDING_TIMEOUT_USER_OK, islet_lws_to_kill_async) }
}

/// The close code at the start of a close frame's payload, if there is one.
func closeCode(fromClosePayload payload: UnsafeRawBufferPointer) -> WebSocketCloseCode? {
    guard payload.count >= 2 else { return nil }
    return WebSocketCloseCode(UInt16(payload[0]) << 8 | UInt16(payload[1]))
}

private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString(body)
}
