import IsletCore
import IsletTransport

/// Who a request or stream acts as.
struct Principal: Equatable {
    enum Role: Equatable {
        /// May read and mutate.
        case admin
        /// May read and subscribe only.
        case viewer
    }

    var role: Role
    /// The one simulation a per-simulation token reaches; nil for the server's own tokens (and
    /// for anyone when no token is configured), which reach every simulation.
    var simulation: String?

    /// The server's admin token, or anyone when no token is configured.
    static let admin = Principal(role: .admin, simulation: nil)
    /// The server's viewer token.
    static let viewer = Principal(role: .viewer, simulation: nil)

    var mayMutate: Bool { self.role == .admin }

    /// Whether this principal may act in simulation `id`.
    func reaches(_ id: String) -> Bool { self.simulation == nil || self.simulation == id }

    /// The error for acting in a simulation this principal does not reach.
    func refusal(for id: String) -> APIError {
        APIError(.forbidden, "this token reaches only simulation \"\(self.simulation ?? "")\", not \"\(id)\"")
    }
}

/// What a route needs.
public enum RouteAccess: Sendable, Equatable {
    /// Anyone (health, the dashboard's files, the APNs-style ingress, which checks its own way).
    case open
    /// A viewer or admin token when tokens are configured.
    case read
    /// The admin token when tokens are configured.
    case mutate
}

/// Checks tokens and origins (API.md "Auth"). Immutable; safe to share.
struct Access {
    let adminToken: [UInt8]?
    let viewerToken: [UInt8]?
    let allowedOrigins: Set<String>
    /// The host names a request's `Host` may name; nil: any (a wildcard bind without
    /// `--allowed-host`, which needs an admin token anyway).
    let allowedHostNames: Set<String>?

    init(configuration: IsletConfiguration) {
        self.adminToken = configuration.adminToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.viewerToken = configuration.viewerToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.allowedOrigins = Set(configuration.allowedOrigins.map(Self.normalized))
        let configured = Set(configuration.allowedHosts.map { Self.hostName($0) })
        let bound = Self.hostName(configuration.host)
        if ["0.0.0.0", "::", ""].contains(bound) {
            self.allowedHostNames = configured.isEmpty ? nil : configured.union(Self.loopbackNames)
        } else {
            self.allowedHostNames = configured.union(Self.loopbackNames).union([bound])
        }
    }

    private static let loopbackNames: Set<String> = ["localhost", "127.0.0.1", "::1"]

    /// What a web page the developer has open could send to a local Islet, refused: a request
    /// under a foreign `Host` (DNS rebinding), and, from a foreign `Origin`, a WebSocket or a
    /// mutation (cross-site WebSocket hijacking, CSRF). Clients that send no `Origin` (curl,
    /// harnesses, APNs clients) are not browsers and pass.
    /// - Parameter mutating: a WebSocket upgrade, or a method other than GET and HEAD.
    func browserRefusal(headers: HTTPHeaders, mutating: Bool) -> APIError? {
        let host = headers["host"]
        if let allowed = self.allowedHostNames, let host, !allowed.contains(Self.hostName(host)) {
            return APIError(
                .forbidden, "the Host \(host.prefix(100)) is not this server's name; allow it with --allowed-host")
        }
        guard mutating, let origin = headers["origin"] else { return nil }
        let normalized = Self.normalized(origin)
        let sameOrigin = host.map { normalized == "http://" + $0.lowercased() || normalized == "https://" + $0.lowercased() }
        guard sameOrigin == true || self.allowedOrigins.contains(normalized) else {
            return APIError(
                .forbidden,
                "a request from the page at \(origin.prefix(100)) is refused: only this server's own pages may change it "
                    + "or open its stream (allow other origins with --allowed-origin)")
        }
        return nil
    }

    /// The host name of a `Host` value or a configured host: lower case, without the port and
    /// the IPv6 brackets.
    static func hostName(_ text: String) -> String {
        var name = Substring(text.lowercased())
        if name.hasPrefix("[") {
            name = name.dropFirst().prefix { $0 != "]" }
        } else if name.filter({ $0 == ":" }).count == 1, let colon = name.lastIndex(of: ":") {
            name = name[..<colon]
        }
        return String(name)
    }

    /// True when any token is configured.
    var isEnabled: Bool { self.adminToken != nil || self.viewerToken != nil }

    /// The token a request carries: `Authorization: Bearer <token>`, or (for WebSockets, whose
    /// browser API cannot set headers) `?token=<token>`.
    static func presentedToken(headers: HTTPHeaders, query: [QueryItem]?) -> String? {
        if let header = headers["authorization"] {
            let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]) }
            return ""
        }
        return query?["token"]
    }

    /// Who presents `token`: the server's tokens, or one of `scoped`, the per-simulation tokens.
    /// - Throws: `unauthorized` when tokens are configured and `token` is missing or unknown.
    func principal(for token: String?, scoped: [String: Principal] = [:]) throws(APIError) -> Principal {
        guard self.isEnabled else { return .admin }
        guard let token, !token.isEmpty else {
            throw APIError(.unauthorized, "a token is required: send Authorization: Bearer <token>")
        }
        let bytes = Array(token.utf8)
        if let admin = self.adminToken, constantTimeEqual(bytes, admin) { return .admin }
        if let viewer = self.viewerToken, constantTimeEqual(bytes, viewer) { return .viewer }
        if let principal = scoped[token] { return principal }
        throw APIError(.unauthorized, "the token is not valid")
    }

    /// Checks `access` for a request's headers.
    /// - Throws: `unauthorized` (no or bad token) or `forbidden` (a viewer token for a mutation).
    func check(_ access: RouteAccess, headers: HTTPHeaders, scoped: [String: Principal]) throws(APIError) -> Principal {
        if access == .open { return .admin }
        let principal = try self.principal(for: Self.presentedToken(headers: headers, query: nil), scoped: scoped)
        if access == .mutate && !principal.mayMutate {
            throw APIError(.forbidden, "the viewer token may only read; mutations need the admin token")
        }
        return principal
    }

    private static func normalized(_ origin: String) -> String {
        var text = origin.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}

/// Compares two byte strings in time that depends only on their lengths, not on where they
/// differ.
func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
    let length = max(a.count, b.count)
    for index in 0..<length {
        let x = index < a.count ? a[index] : 0
        let y = index < b.count ? b[index] : 0
        difference |= x ^ y
    }
    return difference == 0 && a.count == b.count
}

/// Token buckets, one per token (one shared by requests without a token). Loop-confined.
struct RateLimiter {
    let rate: Double
    let burst: Double
    private var buckets: [String: (tokens: Double, at: Int64)] = [:]

    init(_ configuration: IsletConfiguration.RateLimit) {
        self.rate = configuration.commandsPerSecond
        self.burst = configuration.burst
    }

    /// Takes `cost` commands from `key`'s bucket at `now` (milliseconds). Returns nil when
    /// allowed, or the seconds until that many commands would be allowed.
    mutating func take(_ cost: Int, key: String, nowMilliseconds now: Int64) -> Double? {
        guard self.rate > 0 else { return nil }
        var bucket = self.buckets[key] ?? (self.burst, now)
        let elapsed = Double(max(0, now - bucket.at)) / 1000
        bucket.tokens = min(self.burst, bucket.tokens + elapsed * self.rate)
        bucket.at = now
        let needed = Double(cost)
        defer { self.buckets[key] = bucket }
        if bucket.tokens >= needed || (bucket.tokens >= self.burst && needed > self.burst) {
            bucket.tokens -= min(needed, bucket.tokens)
            return nil
        }
        return (needed - bucket.tokens) / self.rate
    }
}
