public import IsletCore
public import IsletStore

/// Everything that configures an Islet server. Only the `islet` executable reads flags and
/// environment variables; it builds this value and hands it over.
///
/// Defaults are set in `init`; `validate()` reports every problem at once.
public struct IsletConfiguration: Sendable, Equatable {
    /// Hard limits (DESIGN.md "Reliability and security rules"), all configurable.
    public struct Limits: Sendable, Equatable {
        /// Largest HTTP request body, in bytes. Default 256 KiB.
        public var httpBodyBytes: Int
        /// Largest WebSocket message, in bytes, after reassembly. Default 64 KiB.
        public var webSocketMessageBytes: Int
        /// Bytes a WebSocket may have queued for sending. Default 1 MiB.
        public var outboundBytes: Int
        /// Subscriptions one WebSocket may hold. Default 64.
        public var subscriptionsPerConnection: Int
        /// Largest APNs-style payload, in bytes (Apple's limit). Default 4 KiB.
        public var apnsPayloadBytes: Int
        /// Largest message the stream sends (a snapshot; it may exceed `outboundBytes` into an
        /// empty queue). A subscription whose snapshot is larger is refused with
        /// `payload_too_large`: subscribe to a narrower path. Default 64 MiB.
        public var streamMessageBytes: Int
        /// Connections served at once, HTTP/1.1, HTTP/2 and WebSocket together
        /// (`--max-connections`); one beyond it is answered 503 and closed. Default 10,000.
        public var connections: Int

        public init(
            httpBodyBytes: Int = 256 * 1024, webSocketMessageBytes: Int = 64 * 1024, outboundBytes: Int = 1024 * 1024,
            subscriptionsPerConnection: Int = 64, apnsPayloadBytes: Int = 4096, streamMessageBytes: Int = 64 << 20,
            connections: Int = 10_000
        ) {
            self.connections = connections
            self.httpBodyBytes = httpBodyBytes
            self.webSocketMessageBytes = webSocketMessageBytes
            self.outboundBytes = outboundBytes
            self.subscriptionsPerConnection = subscriptionsPerConnection
            self.apnsPayloadBytes = apnsPayloadBytes
            self.streamMessageBytes = streamMessageBytes
        }
    }

    /// The stream's revision history, slow-consumer and idle policy.
    public struct Stream: Sendable, Equatable {
        /// Revisions kept for resuming subscriptions (`subscribe` with `since`). Default 1024.
        public var historyRevisions: Int
        /// Bytes of encoded patches kept for resuming, at most. Default 8 MiB.
        public var historyBytes: Int
        /// How long a connection may stay over its outbound cap (not draining) before it is
        /// closed with 1013. Default 30 s.
        public var slowConsumerTimeout: Duration
        /// A WebSocket silent for this many seconds is pinged (`--ws-ping`). Default 30.
        public var pingSeconds: Int
        /// Any connection silent for this many seconds (no PONG to the ping) is closed
        /// (`--idle-timeout`; 0: never): an HTTP/2 connection once nothing was received or
        /// written and no reply was owed for that long (GOAWAY first). Default 60.
        public var idleTimeoutSeconds: Int
        /// Write coalescing (`--ws-write-delay`): patches wait up to this many milliseconds so
        /// that those of one connection within the delay leave in one `send`. 0 (the default):
        /// every patch is written at once. At most 1000.
        public var writeDelayMilliseconds: Int

        public init(
            historyRevisions: Int = 1024, historyBytes: Int = 8 << 20, slowConsumerTimeout: Duration = .seconds(30),
            pingSeconds: Int = 30, idleTimeoutSeconds: Int = 60, writeDelayMilliseconds: Int = 0
        ) {
            self.writeDelayMilliseconds = writeDelayMilliseconds
            self.historyRevisions = historyRevisions
            self.historyBytes = historyBytes
            self.slowConsumerTimeout = slowConsumerTimeout
            self.pingSeconds = pingSeconds
            self.idleTimeoutSeconds = idleTimeoutSeconds
        }
    }

    /// The per-token command rate limit (a token bucket per token; one shared bucket for
    /// requests without a token).
    public struct RateLimit: Sendable, Equatable {
        /// Commands per second each token may submit on average; 0 turns the limit off.
        /// Default 50,000.
        public var commandsPerSecond: Double
        /// Commands a token may submit at once before the rate applies. Default 50,000.
        public var burst: Double

        public init(commandsPerSecond: Double = 50_000, burst: Double = 50_000) {
            self.commandsPerSecond = commandsPerSecond
            self.burst = burst
        }
    }

    /// The durable command log (`IsletStore`): where it lives, what a commit survives, and how
    /// often the engine state is snapshotted so that a restart replays only the log's tail.
    public struct Store: Sendable, Equatable {
        /// The SQLite file, or `:memory:` for a throwaway log. Default `:memory:` here, so tests and
        /// embedders write no file unless asked; `islet serve` defaults to `./islet.sqlite`.
        public var path: String
        /// `.normal` survives a killed process; `.full` also survives power loss. Default `.normal`.
        public var durability: Durability
        /// A snapshot is taken once this many revisions have been committed since the last one.
        /// Default 10,000.
        public var snapshotEveryRevisions: Int
        /// …or once this many seconds have passed since the last one and a revision was committed
        /// meanwhile. Default 300.
        public var snapshotEverySeconds: Double
        /// Where appends run: a writer thread of their own (the default) or the loop thread.
        public var writer: StoreWriter
        /// A scenario file (JSON Lines, see `ScenarioLine`) to replay into the store before serving
        /// (`islet serve --replay`); the store must hold no revision yet.
        public var replayPath: String?

        public init(
            path: String = ":memory:", durability: Durability = .normal, snapshotEveryRevisions: Int = 10_000,
            snapshotEverySeconds: Double = 300, writer: StoreWriter = .thread, replayPath: String? = nil
        ) {
            self.path = path
            self.durability = durability
            self.snapshotEveryRevisions = snapshotEveryRevisions
            self.snapshotEverySeconds = snapshotEverySeconds
            self.writer = writer
            self.replayPath = replayPath
        }

        /// `durability` by its name, `normal` or `full`: the executable reads and sets it by name
        /// because it does not import IsletStore.
        public var durabilityName: String { self.durability.rawValue }

        /// Sets `durability` from its name (`normal` or `full`).
        /// - Returns: false, changing nothing, for any other name.
        public mutating func setDurability(named name: String) -> Bool {
            guard let durability = Durability(rawValue: name) else { return false }
            self.durability = durability
            return true
        }
    }

    /// Which thread appends each loop turn's group to the log.
    public enum StoreWriter: String, Sendable, Equatable, CaseIterable {
        /// The loop thread itself: the append (and its fsync at `full`) holds up the loop.
        case loop
        /// A writer thread: the loop keeps accepting commands while the group is written, and
        /// releases the replies when the writer reports back (one loop wake-up per group).
        case thread
    }

    /// HTTP/2 over TLS: a second listener, for APNs-style senders and any HTTP/2 client.
    public struct TLS: Sendable, Equatable {
        /// PEM certificate chain file.
        public var certificatePath: String
        /// PEM private key file.
        public var keyPath: String
        /// TCP port of the TLS listener; 0 picks a free port. Default 8443.
        public var port: Int
        /// A connection whose TLS handshake has not finished this long after the accept is
        /// closed (`--tls-handshake-timeout`). Default 10 s. (Its idle timeout is
        /// `stream.idleTimeoutSeconds`, the one of every connection.)
        public var handshakeTimeout: Duration

        public init(
            certificatePath: String, keyPath: String, port: Int = 8443, handshakeTimeout: Duration = .seconds(10)
        ) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
            self.port = port
            self.handshakeTimeout = handshakeTimeout
        }
    }

    /// Address to listen on. Default `127.0.0.1`. Any other needs `adminToken`.
    public var host: String
    /// TCP port. Default 8080; 0 picks a free port.
    public var port: Int
    /// Directory of static files served at `/` (the dashboard), or nil to serve none.
    public var publicDirectory: String?
    /// Token that authorises mutations (and reads); required to listen on a non-loopback
    /// address. With a token configured, every read and mutation must present one.
    public var adminToken: String?
    /// Token that authorises reads and subscriptions only. Needs `adminToken`.
    public var viewerToken: String?
    /// WebSocket `Origin` values accepted (e.g. `http://localhost:8080`); empty accepts any.
    /// A handshake without `Origin` (not from a browser) is always accepted.
    public var allowedOrigins: [String]
    /// Host names a request's `Host` may name besides the bound address and the loopback names
    /// (`--allowed-host`): the names a proxy or a browser reaches this server by.
    public var allowedHosts: [String]
    public var limits: Limits
    public var stream: Stream
    /// The durable command log and its snapshots.
    public var store: Store
    public var rateLimit: RateLimit
    /// HTTP/2 over TLS, or nil for plain HTTP/1.1 only.
    public var tls: TLS?
    /// How long a shutdown waits for WebSockets to close and replies to drain. Default 5 s.
    public var shutdownGracePeriod: Duration
    /// Where a fresh simulation's clock starts: nil for the wall clock, or an instant for a
    /// paused virtual clock there, so a harness or golden test gets the same dates on every run
    /// (simulated time never goes backwards, so a later `clock.set` cannot rewind to it).
    public var virtualClockStart: Instant?
    /// Whether the demo scenario is loaded at start and kept moving. Default `.off`; `islet
    /// serve` defaults to `.ifEmpty`, so a newcomer sees a living dashboard at once.
    public var demo: DemoPolicy

    /// When the built-in demo scenario (`DemoScenario`) runs.
    public enum DemoPolicy: String, Sendable, Equatable, CaseIterable {
        /// Load it into a fresh simulation (revision 0) only, then drive it.
        case ifEmpty = "if-empty"
        /// Load it at every start, over whatever is there, then drive it.
        case always
        /// Never load it.
        case off
    }

    /// Negotiate permessage-deflate with WebSocket clients that offer it. Default off: it
    /// deflates every message once per connection, which defeats encode-once fan-out.
    public var webSocketCompression: Bool
    /// Mount the `/v1/echo` WebSocket, which exists only for conformance testing (Autobahn).
    /// Default off; refused with a non-loopback host.
    public var conformanceEcho: Bool
    /// Refuse pushes with the 400 reasons Islet gave before AP-8 (`MissingTimestamp`, `BadEvent`,
    /// `MissingStartField`, `BadPayload`…) instead of answering 200 and recording an ignored
    /// delivery as APNs and the device would (`--apns-strict`). Default off: for debugging a
    /// provider only.
    public var apnsStrict: Bool
    /// How many simulations may exist at once, `default` included (`--max-simulations`).
    /// Default 1,000; `POST /v1/simulations` beyond it is refused with `limit_exceeded`.
    public var maxSimulations: Int
    /// Several nodes sharing each simulation's log on Redis Streams (`--cluster`); nil: this
    /// process alone, on its SQLite store.
    public var cluster: Cluster?

    /// Where a cluster's shared log lives and who this node is in it.
    public struct Cluster: Sendable, Equatable {
        public var host: String
        public var port: Int
        /// The Redis database number (`redis://host:port/DB`).
        public var database: Int
        /// This node's name in the log (`--node-id`): unique per running node.
        public var nodeID: String
        /// How long a clock lease lasts unrenewed: the longest a world's scheduled transitions
        /// wait when the node holding its clock dies.
        public var leaseMilliseconds: Int
        /// A snapshot of a world is written to Redis after this many entries of its log.
        public var snapshotEveryEntries: Int

        public init(
            host: String = "127.0.0.1", port: Int = 6379, database: Int = 0, nodeID: String,
            leaseMilliseconds: Int = 3000, snapshotEveryEntries: Int = 1000
        ) {
            self.host = host
            self.port = port
            self.database = database
            self.nodeID = nodeID
            self.leaseMilliseconds = leaseMilliseconds
            self.snapshotEveryEntries = snapshotEveryEntries
        }

        /// Reads `redis://HOST[:PORT][/DB]`.
        /// - Throws: `ConfigurationError` when the text is not such a URL.
        public init(url: String, nodeID: String) throws(ConfigurationError) {
            let problem = ConfigurationError(problems: [.init("cluster", "must be redis://HOST[:PORT][/DB], not \(url)")])
            guard url.hasPrefix("redis://") else { throw problem }
            var rest = Substring(url.dropFirst("redis://".count))
            var database = 0
            if let slash = rest.firstIndex(of: "/") {
                guard let number = Int(rest[rest.index(after: slash)...]), (0...15).contains(number) else { throw problem }
                database = number
                rest = rest[..<slash]
            }
            var port = 6379
            if let colon = rest.lastIndex(of: ":") {
                guard let number = Int(rest[rest.index(after: colon)...]), (1...65535).contains(number) else { throw problem }
                port = number
                rest = rest[..<colon]
            }
            guard !rest.isEmpty, !rest.contains("@") else { throw problem }
            self.init(host: String(rest), port: port, database: database, nodeID: nodeID)
        }
    }

    public init(
        host: String = "127.0.0.1", port: Int = 8080, publicDirectory: String? = nil, adminToken: String? = nil,
        viewerToken: String? = nil, allowedOrigins: [String] = [], allowedHosts: [String] = [],
        limits: Limits = Limits(), stream: Stream = Stream(),
        store: Store = Store(), rateLimit: RateLimit = RateLimit(), tls: TLS? = nil,
        shutdownGracePeriod: Duration = .seconds(5), virtualClockStart: Instant? = nil, demo: DemoPolicy = .off,
        webSocketCompression: Bool = false, conformanceEcho: Bool = false, apnsStrict: Bool = false,
        maxSimulations: Int = 1000
    ) {
        self.host = host
        self.port = port
        self.publicDirectory = publicDirectory
        self.adminToken = adminToken
        self.viewerToken = viewerToken
        self.allowedOrigins = allowedOrigins
        self.allowedHosts = allowedHosts
        self.limits = limits
        self.stream = stream
        self.store = store
        self.rateLimit = rateLimit
        self.tls = tls
        self.shutdownGracePeriod = shutdownGracePeriod
        self.virtualClockStart = virtualClockStart
        self.demo = demo
        self.webSocketCompression = webSocketCompression
        self.conformanceEcho = conformanceEcho
        self.apnsStrict = apnsStrict
        self.maxSimulations = maxSimulations
    }

    /// Sets `virtualClockStart` from RFC 3339 text such as `2026-11-22T08:00:00Z`, so the executable
    /// can parse `--virtual-clock` without importing IsletCore.
    /// - Throws: `APIError` saying what is wrong with `text`.
    public mutating func setVirtualClockStart(rfc3339 text: String) throws {
        self.virtualClockStart = try Instant(rfc3339: text)
    }

    /// `virtualClockStart` as RFC 3339 text, or nil for the wall clock.
    public var virtualClockStartRFC3339: String? { self.virtualClockStart?.rfc3339 }

    /// True for `127.0.0.1`, any `127.x.y.z`, `::1` and `localhost`.
    public var isLoopback: Bool {
        self.host == "localhost" || self.host == "::1" || self.host.hasPrefix("127.")
    }

    /// Checks the configuration. Does not touch the file system.
    ///
    /// - Throws: `ConfigurationError` listing every problem found.
    public func validate() throws(ConfigurationError) {
        var problems: [ConfigurationError.Problem] = []
        if self.host.isEmpty { problems.append(.init("host", "must not be empty")) }
        if !(0...65535).contains(self.port) { problems.append(.init("port", "must be between 0 and 65535")) }
        if !self.isLoopback && (self.adminToken ?? "").isEmpty {
            problems.append(
                .init("admin-token", "is required to listen on \(self.host), which is not a loopback address"))
        }
        if self.conformanceEcho && !self.isLoopback {
            problems.append(
                .init("conformance-echo", "is for conformance testing only and needs a loopback host, not \(self.host)")
            )
        }
        if let token = self.adminToken, !token.isEmpty, token.count < 16 {
            problems.append(.init("admin-token", "must be at least 16 characters"))
        }
        if let token = self.viewerToken, !token.isEmpty {
            if token.count < 16 { problems.append(.init("viewer-token", "must be at least 16 characters")) }
            if (self.adminToken ?? "").isEmpty { problems.append(.init("viewer-token", "needs an admin token too")) }
            if token == self.adminToken { problems.append(.init("viewer-token", "must differ from the admin token")) }
        }
        for origin in self.allowedOrigins where !(origin.hasPrefix("http://") || origin.hasPrefix("https://")) {
            problems.append(.init("allowed-origin", "\(origin) is not an origin such as https://example.com"))
        }
        if self.stream.historyRevisions < 0 || self.stream.historyBytes < 0 {
            problems.append(.init("stream.history", "must not be negative"))
        }
        if !(1...1_000_000).contains(self.maxSimulations) {
            problems.append(.init("max-simulations", "must be from 1 to 1000000"))
        }
        if !(1...1_000_000).contains(self.limits.connections) {
            problems.append(.init("max-connections", "must be from 1 to 1000000"))
        }
        if self.stream.idleTimeoutSeconds != 0
            && !(1..<self.stream.idleTimeoutSeconds ~= self.stream.pingSeconds && self.stream.idleTimeoutSeconds <= 65535)
        {
            problems.append(.init("idle-timeout", "must be 0 (never) or longer than the ping interval, at most 65535 s"))
        }
        if !(0...1000).contains(self.stream.writeDelayMilliseconds) {
            problems.append(.init("ws-write-delay", "must be from 0 (off) to 1000 milliseconds"))
        }
        if self.stream.slowConsumerTimeout <= .zero {
            problems.append(.init("slow-consumer-timeout", "must be positive"))
        }
        if let cluster = self.cluster {
            if cluster.nodeID.isEmpty || cluster.nodeID.count > 64
                || !cluster.nodeID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") })
            {
                problems.append(.init("node-id", "must be 1 to 64 letters, digits, '-', '_' or '.'"))
            }
            if cluster.leaseMilliseconds < 100 { problems.append(.init("cluster-lease", "must be at least 100 ms")) }
            if cluster.snapshotEveryEntries < 1 { problems.append(.init("cluster-snapshot-every", "must be at least 1")) }
        }
        if self.store.path.isEmpty {
            problems.append(.init("db", "must not be empty (use :memory: for a throwaway log)"))
        }
        if self.store.snapshotEveryRevisions < 1 { problems.append(.init("snapshot-every", "must be at least 1")) }
        if !(self.store.snapshotEverySeconds > 0 && self.store.snapshotEverySeconds <= 31_536_000) {
            problems.append(.init("snapshot-interval", "must be a positive number of seconds, at most a year"))
        }
        if !(self.rateLimit.commandsPerSecond >= 0) || !(self.rateLimit.burst >= 1) {
            problems.append(.init("rate-limit", "needs a rate >= 0 (0: off) and a burst >= 1"))
        }
        if let tls = self.tls {
            if tls.certificatePath.isEmpty || tls.keyPath.isEmpty {
                problems.append(.init("tls-cert", "and tls-key are both required for TLS"))
            }
            if !(0...65535).contains(tls.port) { problems.append(.init("tls-port", "must be between 0 and 65535")) }
            if !(.zero < tls.handshakeTimeout && tls.handshakeTimeout <= .seconds(3600)) {
                problems.append(.init("tls-handshake-timeout", "must be more than 0 and at most 3600 s"))
            }
        }
        let limits: [(String, Int)] = [
            ("limits.httpBodyBytes", self.limits.httpBodyBytes),
            ("limits.webSocketMessageBytes", self.limits.webSocketMessageBytes),
            ("limits.outboundBytes", self.limits.outboundBytes),
            ("limits.subscriptionsPerConnection", self.limits.subscriptionsPerConnection),
            ("limits.apnsPayloadBytes", self.limits.apnsPayloadBytes),
            ("limits.streamMessageBytes", self.limits.streamMessageBytes),
        ]
        for (name, value) in limits where value <= 0 { problems.append(.init(name, "must be positive")) }
        if self.shutdownGracePeriod < .zero { problems.append(.init("shutdownGracePeriod", "must not be negative")) }
        if !problems.isEmpty { throw ConfigurationError(problems: problems) }
    }
}

/// A configuration that cannot be used, with every reason.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Problem: Sendable, Equatable, CustomStringConvertible {
        /// The setting, named as its flag (`admin-token`) or its field (`limits.outboundBytes`).
        public var setting: String
        public var message: String
        public init(_ setting: String, _ message: String) {
            self.setting = setting
            self.message = message
        }
        public var description: String { "\(self.setting) \(self.message)" }
    }

    public var problems: [Problem]
    public init(problems: [Problem]) { self.problems = problems }
    public var description: String { self.problems.map(\.description).joined(separator: "; ") }
}
