// Thread and lifetime rules: a `UVTCPHandle` is created, used and closed on its loop's thread.
// Its C memory is freed only in `deinit`; the handle retains itself through `handle->data` from
// `init` until libuv's close callback (the same rule as UnsafeUVHandles.swift). Each write copies
// its bytes into a request box that lives until the write callback; write callbacks of a closing
// handle (cancelled writes) run before its close callback, so `handle->data` is still valid
// there. Reads use one buffer per handle, valid only during the read callback.

internal import CLibUV

/// A libuv TCP handle: a listening socket or an accepted connection.
final class UVTCPHandle {
    let raw: UnsafeMutablePointer<uv_tcp_t>
    private let readBuffer: UnsafeMutableRawPointer
    private static let readBufferSize = 64 * 1024
    private(set) var isClosing = false
    /// True between `startReading()` and `stopReading()`.
    private(set) var isReading = false
    var onConnection: (() -> Void)?
    /// Bytes read, or nil at the end of the stream (or an error).
    var onRead: ((UnsafeRawBufferPointer?) -> Void)?
    /// A queued write reached the socket (true) or failed (false, e.g. the peer reset the
    /// connection): `queuedBytes` went down.
    var onWritten: ((Bool) -> Void)?

    init(loop: UVLoop) {
        self.raw = .allocate(capacity: 1)
        self.readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        uvMust(uv_tcp_init(loop.raw, self.raw), "uv_tcp_init")
        self.raw.pointee.data = Unmanaged.passRetained(self as AnyObject).toOpaque()
    }

    private var stream: UnsafeMutablePointer<uv_stream_t> {
        UnsafeMutableRawPointer(self.raw).assumingMemoryBound(to: uv_stream_t.self)
    }

    /// Binds and listens on `host:port` (port 0: any free port). Returns the bound port.
    func listen(host: String, port: Int, backlog: Int32 = 511) throws(TransportError) -> Int {
        var storage = sockaddr_storage()
        let rc = withUnsafeMutablePointer(to: &storage) { pointer -> Int32 in
            if host.contains(":") {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    uv_ip6_addr(host, Int32(port), $0)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { uv_ip4_addr(host, Int32(port), $0) }
        }
        try uvCheck(rc, "uv_ip_addr", kind: .bindFailed)
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_bind(self.raw, $0, 0) }
        }
        try uvCheck(bound, "uv_tcp_bind", kind: .bindFailed)
        try uvCheck(
            uv_listen(self.stream, backlog) { server, status in
                guard status == 0, let data = server?.pointee.data else { return }
                Unmanaged<UVTCPHandle>.fromOpaque(data).takeUnretainedValue().onConnection?()
            }, "uv_listen", kind: .bindFailed)
        var name = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &name) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_getsockname(self.raw, $0, &length) }
        }
        return withUnsafePointer(to: &name) { pointer -> Int in
            pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
        }
    }

    /// Accepts a pending connection into `client`. Returns false if none could be accepted.
    func accept(into client: UVTCPHandle) -> Bool {
        uv_accept(self.stream, client.stream) == 0
    }

    /// Starts delivering reads to `onRead` (again, after `stopReading()`).
    func startReading() {
        guard !self.isReading, !self.isClosing else { return }
        self.isReading = true
        _ = uv_tcp_nodelay(self.raw, 1)
        uvMust(
            uv_read_start(
                self.stream,
                { handle, _, buffer in
                    guard let data = handle?.pointee.data, let buffer else { return }
                    let box = Unmanaged<UVTCPHandle>.fromOpaque(data).takeUnretainedValue()
                    buffer.pointee = uv_buf_init(
                        box.readBuffer.assumingMemoryBound(to: CChar.self), UInt32(UVTCPHandle.readBufferSize))
                },
                { stream, count, buffer in
                    guard let data = stream?.pointee.data else { return }
                    let box = Unmanaged<UVTCPHandle>.fromOpaque(data).takeUnretainedValue()
                    if count < 0 {
                        box.onRead?(nil)
                        return
                    }
                    guard count > 0, let base = buffer?.pointee.base else { return }
                    box.onRead?(UnsafeRawBufferPointer(start: base, count: count))
                }), "uv_read_start")
    }

    /// Stops reading: what the peer sends waits in the kernel, and then the peer's TCP window
    /// closes. No-op when not reading.
    func stopReading() {
        guard self.isReading, !self.isClosing else { return }
        self.isReading = false
        uvMust(uv_read_stop(self.stream), "uv_read_stop")
    }

    /// Queues `bytes` for writing. Returns false if the handle is closing.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        guard !self.isClosing, !bytes.isEmpty else { return !self.isClosing }
        let request = UVWriteRequest(bytes)
        let rc = uv_write(request.raw, self.stream, request.buffer, 1) { raw, status in
            guard let raw, let data = raw.pointee.data else { return }
            // Read the handle before the release frees `raw`.
            let owner = raw.pointee.handle?.pointee.data
            Unmanaged<UVWriteRequest>.fromOpaque(data).release()
            guard let owner else { return }
            Unmanaged<UVTCPHandle>.fromOpaque(owner).takeUnretainedValue().onWritten?(status == 0)
        }
        if rc != 0 { Unmanaged.passUnretained(request).release() }
        return rc == 0
    }

    /// Bytes queued in libuv and not yet written to the socket.
    var queuedBytes: Int { Int(uv_stream_get_write_queue_size(self.stream)) }

    /// The socket's descriptor, or -1 when it has none.
    var descriptor: Int {
        var fd = uv_os_fd_t()
        return uv_fileno(UnsafeMutableRawPointer(self.stream).assumingMemoryBound(to: uv_handle_t.self), &fd) == 0
            ? Int(fd) : -1
    }

    func close() {
        guard !self.isClosing else { return }
        self.isClosing = true
        self.isReading = false
        self.onRead = nil
        self.onConnection = nil
        self.onWritten = nil
        uv_close(UnsafeMutableRawPointer(self.raw).assumingMemoryBound(to: uv_handle_t.self)) { handle in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<AnyObject>.fromOpaque(data).release()
        }
    }

    deinit {
        self.raw.deallocate()
        self.readBuffer.deallocate()
    }
}

/// One `uv_write_t` with its own copy of the bytes; retains itself until the write callback.
private final class UVWriteRequest {
    let raw: UnsafeMutablePointer<uv_write_t>
    let buffer: UnsafeMutablePointer<uv_buf_t>
    private let bytes: UnsafeMutableRawPointer

    init(_ source: [UInt8]) {
        self.raw = .allocate(capacity: 1)
        self.buffer = .allocate(capacity: 1)
        self.bytes = .allocate(byteCount: max(1, source.count), alignment: 1)
        source.withUnsafeBytes { self.bytes.copyMemory(from: $0.baseAddress!, byteCount: source.count) }
        self.buffer.pointee = uv_buf_init(self.bytes.assumingMemoryBound(to: CChar.self), UInt32(source.count))
        self.raw.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    deinit {
        self.raw.deallocate()
        self.buffer.deallocate()
        self.bytes.deallocate()
    }
}
