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

    init(configuration: IsletConfiguration) {
        self.adminToken = configuration.adminToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.viewerToken = configuration.viewerToken.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.allowedOrigins = Set(configuration.allowedOrigins.map(Self.normalized))
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

    /// Whether a WebSocket handshake's `Origin` is allowed (always, when none is configured or
    /// the client sent none).
    func allows(origin: String?) -> Bool {
        guard !self.allowedOrigins.isEmpty, let origin else { return true }
        return self.allowedOrigins.contains(Self.normalized(origin))
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
