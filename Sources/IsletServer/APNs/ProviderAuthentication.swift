import IsletCore
import IsletTransport

/// APNs' refusals of a provider token, with Apple's statuses and reasons
/// (https://developer.apple.com/documentation/usernotifications/handling-notification-responses-from-apns).
extension APNsFailure {
    /// No `authorization: bearer <token>`.
    static let missingProviderToken = APNsFailure(status: 403, reason: "MissingProviderToken")
    /// A token that is malformed, names an unknown key or another team, is not signed by its
    /// key, or was issued in the future.
    static let invalidProviderToken = APNsFailure(status: 403, reason: "InvalidProviderToken")
    /// A token issued more than an hour ago.
    static let expiredProviderToken = APNsFailure(status: 403, reason: "ExpiredProviderToken")
    /// A new token for a key less than 20 minutes after the previous one.
    static let tooManyProviderTokenUpdates = APNsFailure(status: 429, reason: "TooManyProviderTokenUpdates")
}

/// One simulation's side of APNs token authentication: its keys as OpenSSL reads them (parsed
/// once per key id and PEM) and, per key, the token in use (for `TooManyProviderTokenUpdates`).
///
/// Apple's rules
/// (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns):
/// APNs rejects a token whose `iat` is more than one hour old, and reports an error when the
/// tokens are recreated more than once every 20 minutes. Islet counts the 20 minutes per key,
/// from when a token with a new `iat` was first accepted, and a token in use that expired may
/// always be replaced; sending the same token again is what
/// Apple asks providers to do, and is always fine. Time is an argument, so the checks are
/// tested without a clock. Loop-confined.
struct ProviderKeyring {
    /// APNs' maximum age of a token: one hour.
    static let maximumAgeSeconds: Int64 = 3600
    /// How far in the future an `iat` may lie (clock skew between provider and Islet).
    static let allowedFutureSeconds: Int64 = 60
    /// APNs' minimum time between two new tokens of one key: 20 minutes.
    static let minimumUpdateSeconds: Int64 = 20 * 60

    /// A key as OpenSSL read it, with the PEM it was read from (nil: OpenSSL refused it).
    private var publicKeys: [String: (pem: String, key: ES256PublicKey?)] = [:]
    /// Per key id: the `iat` of the token in use, and when it was first accepted.
    private var tokensInUse: [String: (issuedAt: Int64, since: Int64)] = [:]
    /// Per key id: the last token whose signature verified, so that a provider reusing its token
    /// (as Apple asks) costs one ECDSA verification, not one per push.
    private var verified: [String: String] = [:]

    /// Checks `bearer`, the token of `authorization: bearer <token>`, as APNs does.
    /// - Parameters:
    ///   - bearer: The token; nil or empty when the request carries none.
    ///   - now: The server's wall clock, in Unix seconds.
    ///   - keys: The simulation's registered keys, by key id.
    /// - Returns: The key that signed it, or APNs' refusal.
    mutating func authenticate(_ bearer: String?, now: Int64, keys: (String) -> ProviderKey?)
        -> Result<ProviderKey, APNsFailure>
    {
        guard let bearer, !bearer.isEmpty else { return .failure(.missingProviderToken) }
        guard let token = ProviderToken(bearer), token.algorithm == "ES256" else {
            return .failure(.invalidProviderToken)
        }
        guard let key = keys(token.keyID) else {
            self.forget(token.keyID)
            return .failure(.invalidProviderToken)
        }
        guard token.teamID == key.teamID, self.isSigned(bearer, token, by: key),
            token.issuedAt <= now + Self.allowedFutureSeconds
        else { return .failure(.invalidProviderToken) }
        guard now - token.issuedAt <= Self.maximumAgeSeconds else { return .failure(.expiredProviderToken) }
        return self.use(token, of: key.keyID, now: now).map { key }
    }

    /// Accepts the token in use again, or a new one when the previous one was first accepted
    /// at least 20 minutes ago or has expired: a token first seen here already old (sent after
    /// a restart of Islet) must not hold its successor back once it expires.
    private mutating func use(_ token: ProviderToken, of keyID: String, now: Int64) -> Result<Void, APNsFailure> {
        if let inUse = self.tokensInUse[keyID] {
            if inUse.issuedAt == token.issuedAt { return .success(()) }
            let isRefresh =
                now - inUse.since >= Self.minimumUpdateSeconds || now - inUse.issuedAt > Self.maximumAgeSeconds
            guard isRefresh else { return .failure(.tooManyProviderTokenUpdates) }
        }
        self.tokensInUse[keyID] = (token.issuedAt, now)
        return .success(())
    }

    /// Whether `token` (whose text is `bearer`) is signed by `key`: verified once per token text
    /// and key PEM.
    private mutating func isSigned(_ bearer: String, _ token: ProviderToken, by key: ProviderKey) -> Bool {
        if self.verified[key.keyID] == bearer, self.publicKeys[key.keyID]?.pem == key.publicKey { return true }
        guard let publicKey = self.publicKey(for: key),
            publicKey.verify(signature: token.signature, message: token.signingInput)
        else { return false }
        self.verified[key.keyID] = bearer
        return true
    }

    /// The key as OpenSSL reads it; read again (and what was kept of its tokens dropped) when
    /// its PEM changed since.
    private mutating func publicKey(for key: ProviderKey) -> ES256PublicKey? {
        if let cached = self.publicKeys[key.keyID], cached.pem == key.publicKey { return cached.key }
        self.forget(key.keyID)
        let parsed = try? ES256PublicKey(pem: key.publicKey)
        self.publicKeys[key.keyID] = (key.publicKey, parsed)
        return parsed
    }

    /// Drops what is kept for a key that is no longer registered (or no longer the same key).
    private mutating func forget(_ keyID: String) {
        self.publicKeys[keyID] = nil
        self.tokensInUse[keyID] = nil
        self.verified[keyID] = nil
    }
}

extension IsletServer {
    /// Checks a push's provider authentication for the simulation it goes to, as APNs does:
    /// when that simulation holds provider keys, `authorization: bearer <JWT>` signed by one of
    /// them (the admin tokens are then not accepted); when it holds none, the admin token (or the
    /// simulation's own) when tokens are configured, and anyone when none are.
    ///
    /// Every APNs-style route calls this once it knows the target simulation.
    /// - Returns: Who the push acts as, or APNs' refusal (403, or 429 `TooManyProviderTokenUpdates`).
    func authenticateProvider(_ headers: HTTPHeaders, for simulation: Simulation) -> Result<Principal, APNsFailure> {
        let engine = simulation.live.engine
        guard engine.hasProviderKeys else {
            return self.checkProviderToken(headers).flatMap { principal in
                principal.reaches(simulation.id) ? .success(principal) : .failure(.invalidProviderToken)
            }
        }
        let bearer = Access.presentedToken(headers: headers, query: nil)
        let now = self.clock.now.millisecondsSinceEpoch / 1000
        return simulation.providerKeyring.authenticate(bearer, now: now, keys: engine.providerKey)
            .map { _ in Principal(role: .admin, simulation: simulation.id) }
    }

    /// The simulation a push's bearer token is scoped to, when it is a simulation's own token:
    /// such a push goes to that simulation.
    func providerTokenScope(_ headers: HTTPHeaders) -> String? {
        guard self.access.isEnabled, let token = Access.presentedToken(headers: headers, query: nil) else { return nil }
        return self.simulationTokens[token]?.simulation
    }
}
