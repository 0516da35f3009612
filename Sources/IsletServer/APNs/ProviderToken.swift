import IsletCore
public import IsletTransport

/// A provider authentication token as APNs reads it: a JSON Web Token (RFC 7519) signed with
/// ES256, whose header is `{"alg":"ES256","kid":<key id>}` and whose claims are
/// `{"iss":<team id>,"iat":<Unix seconds>}`, each part base64url without padding
/// (https://developer.apple.com/documentation/usernotifications/establishing-a-token-based-connection-to-apns).
///
/// Reading a token checks its form only; `ProviderKeyring` checks the key, team, signature and age.
public struct ProviderToken: Sendable, Equatable {
    /// The header's `alg`; APNs accepts only `ES256`.
    public var algorithm: String
    /// The header's `kid`: which registered key signed it.
    public var keyID: String
    /// The claims' `iss`: the team the key must belong to.
    public var teamID: String
    /// The claims' `iat`, in Unix seconds.
    public var issuedAt: Int64
    /// `<header>.<claims>` as sent: the bytes the signature signs.
    let signingInput: [UInt8]
    /// The signature as raw `r‖s`.
    let signature: [UInt8]

    /// A token is a header and two claims; anything far longer is not one.
    static let maxBytes = 2048

    /// Reads a token's three parts; nil when `text` is not a JWT with the members above (APNs
    /// answers such a token `InvalidProviderToken`). Other members (`typ`) are allowed.
    init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= Self.maxBytes, parts.count == 3,
            let header = Self.object(parts[0]), let claims = Self.object(parts[1]),
            let signature = Base64URL.decode(Substring(parts[2])),
            let algorithm = header["alg"]?.stringValue, let keyID = header["kid"]?.stringValue,
            let teamID = claims["iss"]?.stringValue, let issuedAt = claims["iat"]?.numberValue,
            issuedAt == issuedAt.rounded(), abs(issuedAt) < 1e15
        else { return nil }
        self.algorithm = algorithm
        self.keyID = keyID
        self.teamID = teamID
        self.issuedAt = Int64(issuedAt)
        self.signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        self.signature = signature
    }

    /// A part that is a base64url JSON object.
    private static func object(_ part: some StringProtocol) -> JSONObject? {
        guard let bytes = Base64URL.decode(Substring(part)) else { return nil }
        return (try? JSONParser(maxDepth: 8).parse(bytes))?.objectValue
    }

    /// A new token signed with `privateKeyPEM`, as a provider makes one (the CLI's `islet push
    /// --p8`, and tests).
    /// - Parameters:
    ///   - keyID: The key's id (`kid`).
    ///   - teamID: The key's team (`iss`).
    ///   - issuedAt: `iat`, Unix seconds: now, for a token APNs accepts.
    ///   - privateKeyPEM: The key, e.g. the text of `AuthKey_<key id>.p8`.
    /// - Throws: `ES256Error` when the key is unreadable or not P-256.
    public static func signed(keyID: String, teamID: String, issuedAt: Int64, privateKeyPEM: String)
        throws(ES256Error) -> String
    {
        let key = try ES256PrivateKey(pem: privateKeyPEM)
        let header: JSONValue = ["alg": "ES256", "kid": .string(keyID)]
        let claims: JSONValue = ["iss": .string(teamID), "iat": .number(Double(issuedAt))]
        let signingInput = Base64URL.encode(header.encoded) + "." + Base64URL.encode(claims.encoded)
        return signingInput + "." + Base64URL.encode(try key.sign(message: Array(signingInput.utf8)))
    }
}
