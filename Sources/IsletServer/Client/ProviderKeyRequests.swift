public import IsletCore
public import IsletTransport

/// What `islet apns key` sends and prints: the body of `PUT /v1/apns/keys/{keyId}`, built from
/// a `.p8` on the provider's machine (only its public half is sent), and a table of
/// `GET /v1/apns/keys`.
public enum ProviderKeyRequests {
    /// Whether `id` is an Apple key id or team id (10 ASCII letters and digits), so that it may
    /// go into a URL path.
    public static func isValidID(_ id: String) -> Bool { isAppleID(id) }

    /// `/v1/apns/keys[/{keyId}]`, under `/v1/simulations/{simulation}` when one is named.
    public static func path(keyID: String? = nil, simulation: String?) -> String {
        let keys = keyID.map { "apns/keys/\($0)" } ?? "apns/keys"
        return simulation.map { "/v1/simulations/\($0)/\(keys)" } ?? "/v1/\(keys)"
    }

    /// `{"teamId", "publicKey"}` with the public key derived from `privateKeyPEM` here.
    /// - Throws: `ES256Error` when the private key is unreadable or not P-256.
    public static func putBody(teamID: String, privateKeyPEM: String) throws(ES256Error) -> [UInt8] {
        let publicKey = try ES256PublicKey(privateKeyPEM: privateKeyPEM)
        let body: JSONValue = ["teamId": .string(teamID), "publicKey": .string(publicKey.pemText)]
        return body.encoded
    }

    /// `GET /v1/apns/keys` as an aligned table: key id, team id, added.
    /// - Throws: `APIError` when the reply is not the documented list.
    public static func table(_ reply: [UInt8]) throws(APIError) -> String {
        guard let keys = try JSONParser.stored.parse(reply)["keys"]?.arrayValue else {
            throw APIError(.invalidJSON, "the reply has no \"keys\" list")
        }
        let rows = keys.map { key in
            ["keyId", "teamId", "addedAt"].map { key[$0]?.stringValue ?? "?" }
        }
        return SimulationRequests.aligned([["KEY ID", "TEAM ID", "ADDED"]] + rows)
    }
}
