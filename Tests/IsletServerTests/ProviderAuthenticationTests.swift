import IsletCore
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletServer

/// APNs' provider token checks, without sockets: the time is an argument.
@Suite("Provider authentication (JWT, as APNs)")
struct ProviderAuthenticationTests {
    static let now: Int64 = 1_795_766_400
    static let key = ProviderKey(
        keyID: ProviderKeyFixtures.keyID, teamID: ProviderKeyFixtures.teamID, publicKey: ProviderKeyFixtures.publicKey,
        addedAt: Instant(secondsSinceEpoch: now))

    static func keys(_ keyID: String) -> ProviderKey? { keyID == key.keyID ? key : nil }

    /// A token signed as a provider signs it.
    static func token(
        issuedAt: Int64 = now, keyID: String = ProviderKeyFixtures.keyID, teamID: String = ProviderKeyFixtures.teamID,
        privateKey: String = ProviderKeyFixtures.privateKey
    ) throws -> String {
        try ProviderToken.signed(keyID: keyID, teamID: teamID, issuedAt: issuedAt, privateKeyPEM: privateKey)
    }

    /// A token with any header and claims, signed with the registered key.
    static func token(header: JSONValue, claims: JSONValue) throws -> String {
        let input = Base64URL.encode(header.encoded) + "." + Base64URL.encode(claims.encoded)
        let signature = try ES256PrivateKey(pem: ProviderKeyFixtures.privateKey).sign(message: Array(input.utf8))
        return input + "." + Base64URL.encode(signature)
    }

    static func check(_ bearer: String?, at now: Int64 = now) -> Result<ProviderKey, APNsFailure> {
        var keyring = ProviderKeyring()
        return keyring.authenticate(bearer, now: now, keys: Self.keys)
    }

    @Test("base64url without padding round-trips, and only canonical text decodes")
    func base64URL() {
        for count in 0..<10 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 251) }
            let text = Base64URL.encode(bytes)
            #expect(!text.contains("=") && !text.contains("+") && !text.contains("/"))
            #expect(Base64URL.decode(Substring(text)) == bytes)
        }
        #expect(Base64URL.encode(Array("{\"alg\":\"ES256\"}".utf8)) == "eyJhbGciOiJFUzI1NiJ9")
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        for bad in ["eyJ=", "ab+c", "ab/c", "abcde", "-_9", "a b"] { #expect(Base64URL.decode(Substring(bad)) == nil) }
    }

    @Test("a signed token reads back as Apple's header and claims")
    func tokenForm() throws {
        let text = try Self.token()
        let parts = text.split(separator: ".")
        let text0 = Base64URL.decode(parts[0]).map { String(decoding: $0, as: UTF8.self) }
        let text1 = Base64URL.decode(parts[1]).map { String(decoding: $0, as: UTF8.self) }
        #expect(text0 == #"{"alg":"ES256","kid":"ABC123DEFG"}"#)
        #expect(text1 == #"{"iat":1795766400,"iss":"DEF123GHIJ"}"#)
        let token = try #require(ProviderToken(text))
        #expect(token.algorithm == "ES256" && token.keyID == "ABC123DEFG" && token.teamID == "DEF123GHIJ")
        #expect(token.issuedAt == Self.now && token.signature.count == 64)
        #expect(ProviderToken(parts[0] + "." + parts[1]) == nil)
        #expect(ProviderToken(text + ".x") == nil)
    }

    @Test("a valid token is accepted, also up to a minute early and up to an hour old")
    func accepted() throws {
        #expect(try Self.check(try Self.token()).get() == Self.key)
        #expect(try Self.check(try Self.token(issuedAt: Self.now + 60)).get() == Self.key)
        #expect(try Self.check(try Self.token(issuedAt: Self.now - 3600)).get() == Self.key)
        let typed = try Self.token(
            header: ["alg": "ES256", "kid": "ABC123DEFG", "typ": "JWT"],
            claims: ["iss": "DEF123GHIJ", "iat": 1_795_766_400])
        #expect(try Self.check(typed).get() == Self.key)
    }

    @Test(
        "each refusal has APNs' status and reason",
        arguments: [
            ("no authorization", 403, "MissingProviderToken"),
            ("empty bearer", 403, "MissingProviderToken"),
            ("not a JWT", 403, "InvalidProviderToken"),
            ("alg HS256", 403, "InvalidProviderToken"),
            ("no kid", 403, "InvalidProviderToken"),
            ("iat not an integer", 403, "InvalidProviderToken"),
            ("unknown kid", 403, "InvalidProviderToken"),
            ("another team", 403, "InvalidProviderToken"),
            ("signed by another key", 403, "InvalidProviderToken"),
            ("claims changed after signing", 403, "InvalidProviderToken"),
            ("iat over a minute ahead", 403, "InvalidProviderToken"),
            ("iat over an hour old", 403, "ExpiredProviderToken"),
        ])
    func refusals(reason: String, status: Int, apple: String) throws {
        let bearer: String?
        switch reason {
        case "no authorization": bearer = nil
        case "empty bearer": bearer = ""
        case "not a JWT": bearer = "admin-token-0123456789"
        case "alg HS256":
            bearer = try Self.token(
                header: ["alg": "HS256", "kid": "ABC123DEFG"], claims: ["iss": "DEF123GHIJ", "iat": 1_795_766_400])
        case "no kid": bearer = try Self.token(header: ["alg": "ES256"], claims: ["iss": "DEF123GHIJ", "iat": 1])
        case "iat not an integer":
            bearer = try Self.token(
                header: ["alg": "ES256", "kid": "ABC123DEFG"], claims: ["iss": "DEF123GHIJ", "iat": 1_795_766_400.5])
        case "unknown kid": bearer = try Self.token(keyID: ProviderKeyFixtures.otherKeyID)
        case "another team": bearer = try Self.token(teamID: "ZZZ999ZZZZ")
        case "signed by another key": bearer = try Self.token(privateKey: ProviderKeyFixtures.otherPrivateKey)
        case "claims changed after signing":
            let parts = try Self.token().split(separator: ".")
            let claims = Base64URL.encode(Array(#"{"iat":1795766400,"iss":"ZZZ999ZZZZ"}"#.utf8))
            bearer = "\(parts[0]).\(claims).\(parts[2])"
        case "iat over a minute ahead": bearer = try Self.token(issuedAt: Self.now + 61)
        default: bearer = try Self.token(issuedAt: Self.now - 3601)
        }
        #expect(Self.check(bearer) == .failure(APNsFailure(status: status, reason: apple)))
    }

    @Test("a new token for a key within 20 minutes of the one in use is 429; the same token again is fine")
    func tokenUpdates() throws {
        var keyring = ProviderKeyring()
        let first = try Self.token()
        let second = try Self.token(issuedAt: Self.now + 600)
        func check(_ token: String, at now: Int64) -> Result<ProviderKey, APNsFailure> {
            keyring.authenticate(token, now: now, keys: Self.keys)
        }
        #expect(try check(first, at: Self.now).get() == Self.key)
        #expect(try check(try Self.token(), at: Self.now + 1).get() == Self.key, "signed again with the same iat")
        #expect(try check(first, at: Self.now + 600).get() == Self.key)
        #expect(check(second, at: Self.now + 600) == .failure(.tooManyProviderTokenUpdates))
        #expect(check(second, at: Self.now + 1199) == .failure(.tooManyProviderTokenUpdates))
        #expect(try check(second, at: Self.now + 1200).get() == Self.key)
        #expect(
            check(first, at: Self.now + 1300) == .failure(.tooManyProviderTokenUpdates), "the old one is a change too")
        #expect(check(second, at: Self.now + 600 + 3601) == .failure(.expiredProviderToken))
    }

    @Test("a token first accepted when already old never locks its successor out: once it expires it may be replaced at once; before, 20 minutes in use still count")
    func oldTokenInUse() throws {
        var keyring = ProviderKeyring()
        func check(_ token: String, at now: Int64) -> Result<ProviderKey, APNsFailure> {
            keyring.authenticate(token, now: now, keys: Self.keys)
        }
        // After a restart of Islet, a provider's token 59 minutes and 55 seconds old.
        let old = try Self.token(issuedAt: Self.now - 3595)
        #expect(try check(old, at: Self.now).get() == Self.key)
        #expect(
            check(try Self.token(issuedAt: Self.now), at: Self.now + 1) == .failure(.tooManyProviderTokenUpdates),
            "not yet expired: a new token is an update within 20 minutes")
        #expect(check(old, at: Self.now + 7) == .failure(.expiredProviderToken))
        #expect(try check(try Self.token(issuedAt: Self.now + 7), at: Self.now + 7).get() == Self.key, "not 429: the old one expired")
    }

    @Test("a key replaced by another PEM or team starts afresh; a deleted key's token is refused")
    func keyChanges() throws {
        var keyring = ProviderKeyring()
        var registered = Self.key
        func check(_ token: String, at now: Int64, registered: ProviderKey?) -> Result<ProviderKey, APNsFailure> {
            keyring.authenticate(token, now: now, keys: { _ in registered })
        }
        let first = try Self.token()
        #expect(try check(first, at: Self.now, registered: registered).get() == registered)
        var otherTeam = registered
        otherTeam.teamID = "ZZZ999ZZZZ"
        #expect(check(first, at: Self.now, registered: otherTeam) == .failure(.invalidProviderToken))
        registered.publicKey = ProviderKeyFixtures.otherPublicKey
        let renewed = try Self.token(issuedAt: Self.now + 10, privateKey: ProviderKeyFixtures.otherPrivateKey)
        #expect(check(first, at: Self.now + 10, registered: registered) == .failure(.invalidProviderToken))
        #expect(try check(renewed, at: Self.now + 10, registered: registered).get() == registered, "no 429: a new key")
        #expect(check(renewed, at: Self.now + 20, registered: nil) == .failure(.invalidProviderToken))
    }
}
