/// An APNs provider authentication key, as APNs keeps it: a team's key id and the public half
/// of the signing key. A provider signs its tokens (ES256 JWTs) with the private half, Apple's
/// `AuthKey_<key id>.p8`, which never reaches Islet.
///
/// A simulation that holds any provider key checks every push into it as APNs does: the
/// `authorization: bearer <JWT>` must be signed by one of them (docs/API.md, "APNs-style ingress").
public struct ProviderKey: Sendable, Hashable {
    /// Apple's key id: 10 ASCII letters and digits (the token header's `kid`).
    public var keyID: String
    /// The developer team the key belongs to: 10 ASCII letters and digits (the token's `iss`).
    public var teamID: String
    /// The public key as a `-----BEGIN PUBLIC KEY-----` PEM (SubjectPublicKeyInfo, P-256).
    public var publicKey: String
    /// The simulation's instant when the key was registered (or last replaced).
    public var addedAt: Instant

    public init(keyID: String, teamID: String, publicKey: String, addedAt: Instant) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKey = publicKey
        self.addedAt = addedAt
    }

    /// `{"keyId","teamId","addedAt"}`: what the API shows of a key (the result of `apns.keyPut`).
    public var summary: JSONValue {
        ["keyId": .string(self.keyID), "teamId": .string(self.teamID), "addedAt": .string(self.addedAt.rfc3339)]
    }
}
