/// How a `SocketTransport` listens and what it accepts. Defaults are Islet's.
public struct TransportConfiguration: Sendable {
    /// A TLS listener serving HTTP/2 (ALPN `h2`) beside the HTTP/1.1 one.
    public struct TLS: Sendable, Equatable {
        public var certificatePath: String
        public var keyPath: String
        /// Its TCP port; 0 picks a free one (read it back from `SocketTransport.securePort`).
        public var port: Int
        public init(certificatePath: String, keyPath: String, port: Int) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
            self.port = port
        }
    }

    /// The address to listen on. `127.0.0.1` (the default) also disables IPv6.
    public var host: String
    /// The TCP port; 0 picks a free one (read it back from `SocketTransport.boundPort`).
    public var port: Int
    /// WebSocket subprotocols the transport accepts, e.g. `["islet.v1"]`. A client that offers
    /// only others is refused; a client that offers none is accepted with `subprotocol == nil`.
    public var subprotocols: [String]
    /// Largest request body accepted, in bytes (default 256 KiB).
    public var maxRequestBodyBytes: Int
    /// Largest WebSocket message accepted, in bytes, after reassembly (default 64 KiB).
    public var maxMessageBytes: Int
    /// Outbound bytes a WebSocket may have queued (default 1 MiB).
    public var outboundCapBytes: Int
    /// Largest piece written per writable callback, in bytes: HTTP body chunks and WebSocket
    /// fragments (default 64 KiB).
    public var writeChunkBytes: Int
    /// Request header names, beyond the ones libwebsockets knows, to pass on (e.g. `apns-topic`).
    public var extraHeaderNames: [String]
    /// HTTP/2 over TLS on a second port, or nil.
    public var tls: TLS?
    /// Negotiate permessage-deflate (RFC 7692) with WebSocket clients that offer it (default off).
    /// Compression happens per connection at write time, so the same message queued to many
    /// connections is deflated once per connection: it trades server CPU for bandwidth.
    public var webSocketCompression: Bool
    /// A WebSocket silent this long (seconds) is pinged; any connection silent for
    /// `idleTimeoutSeconds` is closed (0 for both: never). A PONG is a sign of life.
    public var pingIntervalSeconds: Int
    public var idleTimeoutSeconds: Int
    /// Connections served at once: HTTP/1.1, WebSocket and HTTP/2 together (default 10,000).
    /// One accepted beyond it is not served: its request or WebSocket handshake reaches the
    /// delegate marked (`HTTPRequest.connectionLimit`, `WebSocketUpgrade.connectionLimit`) so
    /// it can be told why, and an HTTP/1.1 one is closed after that reply.
    public var maxConnections: Int

    public init(
        host: String = "127.0.0.1", port: Int = 8080, subprotocols: [String] = [],
        maxRequestBodyBytes: Int = 256 * 1024, maxMessageBytes: Int = 64 * 1024,
        outboundCapBytes: Int = 1024 * 1024, writeChunkBytes: Int = 64 * 1024, extraHeaderNames: [String] = [],
        tls: TLS? = nil, webSocketCompression: Bool = false, pingIntervalSeconds: Int = 0, idleTimeoutSeconds: Int = 0,
        maxConnections: Int = 10_000
    ) {
        self.maxConnections = maxConnections
        self.pingIntervalSeconds = pingIntervalSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
        self.tls = tls
        self.host = host
        self.port = port
        self.subprotocols = subprotocols
        self.maxRequestBodyBytes = maxRequestBodyBytes
        self.maxMessageBytes = maxMessageBytes
        self.outboundCapBytes = outboundCapBytes
        self.writeChunkBytes = writeChunkBytes
        self.extraHeaderNames = extraHeaderNames
        self.webSocketCompression = webSocketCompression
    }
}
