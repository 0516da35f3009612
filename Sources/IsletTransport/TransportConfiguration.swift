/// How a `SocketTransport` listens and what it accepts. Defaults are Islet's.
public struct TransportConfiguration: Sendable {
    /// A TLS listener serving HTTP/2 (ALPN `h2`) beside the HTTP/1.1 one, with its limits.
    /// Request bodies are limited by `maxRequestBodyBytes`, and the replies a connection holds
    /// unsent by `outboundCapBytes`, as on HTTP/1.1 and WebSockets.
    public struct TLS: Sendable, Equatable {
        public var certificatePath: String
        public var keyPath: String
        /// Its TCP port; 0 picks a free one (read it back from `SocketTransport.securePort`).
        public var port: Int
        /// SETTINGS_MAX_HEADER_LIST_SIZE: a request's decoded header fields, in bytes as RFC 9113
        /// §6.5.2 counts them (name + value + 32 each). Over it (or over `maxHeaderFields`) the
        /// request is answered `431`. Default 16 KiB.
        public var maxHeaderListBytes: Int
        /// Header fields per request, pseudo-header fields included. Default 100.
        public var maxHeaderFields: Int
        /// SETTINGS_MAX_CONCURRENT_STREAMS. Default 100.
        public var maxConcurrentStreams: Int
        /// A connection whose TLS handshake has not finished this long after the accept is
        /// closed (`.zero`: never). Default 10 s.
        public var handshakeTimeout: Duration
        /// A connection with no frame received and no byte written for this long, and no reply
        /// owed by the application, gets GOAWAY and is closed (`.zero`: never). Default 60 s.
        public var idleTimeout: Duration

        public init(
            certificatePath: String, keyPath: String, port: Int, maxHeaderListBytes: Int = 16 * 1024,
            maxHeaderFields: Int = 100, maxConcurrentStreams: Int = 100, handshakeTimeout: Duration = .seconds(10),
            idleTimeout: Duration = .seconds(60)
        ) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
            self.port = port
            self.maxHeaderListBytes = maxHeaderListBytes
            self.maxHeaderFields = maxHeaderFields
            self.maxConcurrentStreams = maxConcurrentStreams
            self.handshakeTimeout = handshakeTimeout
            self.idleTimeout = idleTimeout
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
    /// Outbound bytes a WebSocket may have queued, and the replies an HTTP/2 connection may hold
    /// unsent before it stops taking requests and reading (default 1 MiB).
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
    /// Write coalescing (off at `.zero`, the default): a broadcast message waits up to this long
    /// in its connection's queue, so that the messages broadcast to a connection within the
    /// delay leave in one `send` (like Centrifugo's `write_delay`). It trades latency for
    /// server CPU per message. Replies (`send`) are never delayed; one flushes what waits ahead
    /// of it. Not applied with `webSocketCompression`.
    public var webSocketWriteDelay: Duration
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
        tls: TLS? = nil, webSocketCompression: Bool = false, webSocketWriteDelay: Duration = .zero, pingIntervalSeconds: Int = 0, idleTimeoutSeconds: Int = 0,
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
        self.webSocketWriteDelay = webSocketWriteDelay
    }
}
