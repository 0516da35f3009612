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

        public init(
            httpBodyBytes: Int = 256 * 1024, webSocketMessageBytes: Int = 64 * 1024, outboundBytes: Int = 1024 * 1024,
            subscriptionsPerConnection: Int = 64, apnsPayloadBytes: Int = 4096
        ) {
            self.httpBodyBytes = httpBodyBytes
            self.webSocketMessageBytes = webSocketMessageBytes
            self.outboundBytes = outboundBytes
            self.subscriptionsPerConnection = subscriptionsPerConnection
            self.apnsPayloadBytes = apnsPayloadBytes
        }
    }

    /// Address to listen on. Default `127.0.0.1`. Any other needs `adminToken`.
    public var host: String
    /// TCP port. Default 8080; 0 picks a free port.
    public var port: Int
    /// Directory of static files served at `/` (the dashboard), or nil to serve none.
    public var publicDirectory: String?
    /// Token that authorises mutations; required to listen on a non-loopback address.
    public var adminToken: String?
    public var limits: Limits
    /// How long a shutdown waits for WebSockets to close and replies to drain. Default 5 s.
    public var shutdownGracePeriod: Duration
    /// Negotiate permessage-deflate with WebSocket clients that offer it. Default off: it
    /// deflates every message once per connection, which defeats encode-once fan-out.
    public var webSocketCompression: Bool
    /// Mount the `/v1/echo` WebSocket, which exists only for conformance testing (Autobahn).
    /// Default off; refused with a non-loopback host.
    public var conformanceEcho: Bool

    public init(
        host: String = "127.0.0.1", port: Int = 8080, publicDirectory: String? = nil, adminToken: String? = nil,
        limits: Limits = Limits(), shutdownGracePeriod: Duration = .seconds(5), webSocketCompression: Bool = false,
        conformanceEcho: Bool = false
    ) {
        self.host = host
        self.port = port
        self.publicDirectory = publicDirectory
        self.adminToken = adminToken
        self.limits = limits
        self.shutdownGracePeriod = shutdownGracePeriod
        self.webSocketCompression = webSocketCompression
        self.conformanceEcho = conformanceEcho
    }

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
        let limits: [(String, Int)] = [
            ("limits.httpBodyBytes", self.limits.httpBodyBytes),
            ("limits.webSocketMessageBytes", self.limits.webSocketMessageBytes),
            ("limits.outboundBytes", self.limits.outboundBytes),
            ("limits.subscriptionsPerConnection", self.limits.subscriptionsPerConnection),
            ("limits.apnsPayloadBytes", self.limits.apnsPayloadBytes),
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
