// Thread and lifetime rules: an `LWSContext` is created, used and destroyed on its event
// loop's thread. libwebsockets keeps pointers to the protocol table, the protocol names, the
// vhost's interface string and the context slot for the context's whole life, so they are
// allocated here once and freed only in `deinit`, which runs after the second
// `lws_context_destroy` (an exit hook of the loop) has finished with them. The context's user
// pointer is this object, unretained: the owner (`SocketTransport` or `WebSocketClientPool`)
// keeps it alive until then.

internal import CLibUV
internal import CLibWebSockets
import Logging

/// Owns a libwebsockets context on a foreign libuv loop, and the C memory it points into.
final class LWSContext {
    /// Where lws callbacks go: typed methods, one per callback reason Islet handles.
    weak var handler: (any LWSEvents)?
    let loop: EventLoop
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolCount: Int
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    /// The vhost's idle policy (lws keeps the pointer for the vhost's life).
    private let idlePolicy = UnsafeMutablePointer<lws_retry_bo_t>.allocate(capacity: 1)
    private let slot: UnsafeMutablePointer<OpaquePointer?>
    /// permessage-deflate for the vhost, when compression is on.
    let extensionTable: LWSExtensionTable?
    private var isDestroying = false

    /// Creates the context. Must be called on the loop thread.
    ///
    /// - Parameters:
    ///   - protocolNames: Protocols in table order; the first also serves plain HTTP and
    ///     WebSockets that offer no subprotocol.
    ///   - rxBufferBytes: The piece size lws delivers received WebSocket data in.
    ///   - txPacketBytes: The most lws hands the socket in one `send` (0: `rxBufferBytes`); more
    ///     is kept by lws and sent from later writable callbacks.
    ///   - compression: Offer and accept permessage-deflate on the vhost.
    init(
        loop: EventLoop, protocolNames: [String], rxBufferBytes: Int, txPacketBytes: Int = 0, compression: Bool = false,
        logger: Logger
    ) throws(TransportError) {
        loop.preconditionInEventLoop()
        self.loop = loop
        self.extensionTable = compression ? LWSExtensionTable() : nil
        self.protocolCount = protocolNames.count
        self.protocols = .allocate(capacity: protocolNames.count + 1)
        self.slot = .allocate(capacity: 1)
        self.slot.initialize(to: nil)
        for (index, name) in protocolNames.enumerated() {
            let cName = self.keep(name)
            (self.protocols + index).initialize(
                to: lws_protocols(
                    name: cName, callback: isletLWSCallback, per_session_data_size: 0,
                    rx_buffer_size: rxBufferBytes, id: 0, user: nil, tx_packet_size: txPacketBytes))
        }
        // The 4.1.6 terminator: a zeroed entry (LWS_PROTOCOL_LIST_TERM does not exist there).
        (self.protocols + protocolNames.count).initialize(to: lws_protocols())
        LWSLog.install(logger: logger)
        try self.createContext()
    }

    private func createContext() throws(TransportError) {
        var info = lws_context_creation_info()
        // On a foreign loop lws installs no SIGINT/SIGTERM watchers of its own (4.1.6
        // lib/event-libs/libuv/libuv.c installs them only when it owns the loop), and with
        // UV_NO_SIGSEGV_SIGFPE_SPIN a crash is not turned into a spinning thread.
        info.options =
            islet_lws_option_libuv | islet_lws_option_explicit_vhosts | islet_lws_option_validate_utf8
            | islet_lws_option_uv_no_sigsegv_sigfpe_spin
        info.port = islet_lws_context_port_no_listen
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.pcontext = self.slot
        // A request's headers, all of them, up to 16 KiB, as over HTTP/2 (lws's default is 4 KiB,
        // and a request over it gets no reply at all).
        info.max_http_header_data = UInt16(Self.maxRequestHeaderBytes)
        // lws reads foreign_loops only during lws_create_context.
        let foreignLoops = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
        defer { foreignLoops.deallocate() }
        foreignLoops.initialize(to: UnsafeMutableRawPointer(self.loop.uv.raw))
        info.foreign_loops = foreignLoops
        let created = lws_create_context(&info)
        self.slot.pointee = try lwsCheck(
            created, "lws_create_context", kind: .contextFailed,
            "libwebsockets could not create its context on the libuv loop (is libwebsockets-evlib-uv installed?)")
    }

    /// The most header bytes an HTTP/1.1 request may carry (lws closes a connection over it).
    static let maxRequestHeaderBytes = 16 * 1024

    /// The context pointer, until destruction completes.
    var context: OpaquePointer? { self.slot.pointee }

    /// Creates the one vhost, listening on `host:port` (or not listening when `port` is nil).
    /// Every listening option (later TLS and ALPN) is set here. Returns the bound port.
    ///
    /// With `idle`, lws pings a WebSocket that has shown no sign of life for `ping` seconds and
    /// closes any connection still silent after `hangup` seconds (a PONG, or traffic both ways,
    /// is a sign of life).
    func createVhost(host: String?, port: Int?, idle: (ping: Int, hangup: Int)? = nil) throws(TransportError) -> Int {
        guard let context = self.context else { throw TransportError.contextFailed }
        var info = lws_context_creation_info()
        if let idle {
            self.idlePolicy.initialize(to: lws_retry_bo_t())
            self.idlePolicy.pointee.secs_since_valid_ping = UInt16(clamping: idle.ping)
            self.idlePolicy.pointee.secs_since_valid_hangup = UInt16(clamping: idle.hangup)
            info.retry_and_idle_policy = UnsafePointer(self.idlePolicy)
        }
        info.protocols = UnsafePointer(self.protocols)
        info.vhost_name = UnsafePointer(self.keep("islet"))
        info.port = Int32(port ?? Int(islet_lws_context_port_no_listen))
        if let host {
            info.iface = UnsafePointer(self.keep(host))
            if !host.contains(":") { info.options |= islet_lws_option_disable_ipv6 }
        }
        info.options |= islet_lws_option_validate_utf8
        info.extensions = self.extensionTable.map { UnsafePointer($0.pointer) }
        let vhost = try lwsCheck(
            lws_create_vhost(context, &info), "lws_create_vhost", kind: .bindFailed,
            "cannot listen on \(host ?? "*"):\(port ?? 0) (address in use, or not an address of this machine)")
        return Int(lws_get_vhost_listen_port(vhost))
    }

    /// Starts destruction from the loop (first `lws_context_destroy`) and registers the second
    /// call, which completes it after `uv_run` has drained lws's handles. Must be called on the
    /// loop thread, inside a loop callback. Calling it twice has no further effect.
    func destroy() {
        self.loop.preconditionInEventLoop()
        guard !self.isDestroying, let context = self.context else { return }
        self.isDestroying = true
        lws_context_destroy(context)
        self.loop.atExit { [self] in
            if let context = self.context { lws_context_destroy(context) }
            self.handler = nil
        }
    }

    private func keep(_ string: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(string)!
        self.cStrings.append(copy)
        return copy
    }

    deinit {
        precondition(self.slot.pointee == nil || !self.isDestroying, "LWSContext freed before lws finished with it")
        self.protocols.deinitialize(count: self.protocolCount + 1)
        self.protocols.deallocate()
        self.slot.deallocate()
        self.idlePolicy.deallocate()
        for string in self.cStrings { free(string) }
    }

    /// Starts a client WebSocket connection. Must be called on the loop thread.
    func connect(host: String, port: Int, path: String, subprotocol: String?, id: ConnectionID) -> Bool {
        guard let context = self.context else { return false }
        var info = lws_client_connect_info()
        let strings = [host, path, "\(host):\(port)", subprotocol ?? "", self.firstProtocolName]
        return withCStrings(strings) { c in
            info.context = context
            info.address = c[0]
            info.port = Int32(port)
            info.path = c[1]
            info.host = c[2]
            info.origin = c[2]
            info.protocol = subprotocol == nil ? nil : c[3]
            info.local_protocol_name = c[4]
            info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: UInt(id.rawValue))
            return lws_client_connect_via_info(&info) != nil
        }
    }

    private var firstProtocolName: String { String(cString: self.protocols.pointee.name) }
}

/// Calls `body` with C copies of `strings` that live for the duration of the call.
private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>]) -> R) -> R {
    let copies = strings.map { strdup($0)! }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) })
}
