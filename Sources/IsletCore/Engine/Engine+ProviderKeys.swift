internal import HashTreeCollections

/// APNs provider keys: `apns.keyPut`, `apns.keyDelete`, and what the server reads to check a
/// push's token. They are not in the state document (nothing on a phone shows them); the server
/// lists them (`GET /v1/apns/keys`), and snapshots and forks keep them.
extension Engine {
    /// Every registered provider key, by key id.
    /// - Complexity: O(n log n).
    public var providerKeys: [ProviderKey] { self.apnsKeys.keys.sorted().map { self.apnsKeys[$0]! } }

    /// The provider key with id `keyID`, if registered.
    /// - Complexity: O(log n).
    public func providerKey(_ keyID: String) -> ProviderKey? { self.apnsKeys[keyID] }

    /// Whether pushes into this simulation must carry a provider token signed by one of its keys.
    public var hasProviderKeys: Bool { !self.apnsKeys.isEmpty }

    mutating func putProviderKey(_ put: APNsKeyPut) throws(APIError) -> JSONValue {
        let existing = self.apnsKeys[put.keyID]
        if existing == nil, self.apnsKeys.count >= EngineLimits.providerKeys {
            throw EngineLimits.refuse(
                "provider keys", EngineLimits.providerKeys, name: "provider_keys", field: "/keyId")
        }
        var key = ProviderKey(keyID: put.keyID, teamID: put.teamID, publicKey: put.publicKey, addedAt: self.now)
        // Putting the same key again changes nothing, not even when it was added.
        if let existing, existing.teamID == key.teamID, existing.publicKey == key.publicKey { key = existing }
        self.apnsKeys[put.keyID] = key
        return key.summary
    }

    mutating func deleteProviderKey(_ keyID: String) throws(APIError) -> JSONValue {
        guard self.apnsKeys.removeValue(forKey: keyID) != nil else {
            throw APIError(.notFound, "no provider key \"\(keyID)\"", field: "/keyId")
        }
        return [:]
    }

    /// The snapshot's `providerKeys` member, sorted by key id; nil when there are none, so that
    /// snapshots of simulations without keys keep their bytes.
    func providerKeysSnapshot() -> JSONValue? {
        guard !self.apnsKeys.isEmpty else { return nil }
        return .array(
            self.providerKeys.map { key in
                [
                    "keyId": .string(key.keyID), "teamId": .string(key.teamID), "publicKey": .string(key.publicKey),
                    "addedAt": .string(key.addedAt.rfc3339),
                ]
            })
    }

    /// Reads the snapshot's `providerKeys` member, when there is one.
    mutating func restoreProviderKeys(_ root: SnapshotReader) throws(APIError) {
        guard root.object["providerKeys"] != nil else { return }
        let keys = try root.array("providerKeys") { reader throws(APIError) in
            ProviderKey(
                keyID: try reader.string("keyId"), teamID: try reader.string("teamId"),
                publicKey: try reader.string("publicKey"), addedAt: try reader.instant("addedAt"))
        }
        for key in keys { self.apnsKeys[key.keyID] = key }
    }
}
