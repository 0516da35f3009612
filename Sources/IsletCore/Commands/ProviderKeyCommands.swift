/// `apns.keyPut`: registers a provider authentication key, or replaces the one with its key id.
public struct APNsKeyPut: Sendable, Hashable {
    public var keyID: String
    public var teamID: String
    /// A `-----BEGIN PUBLIC KEY-----` PEM. The engine checks its shape only; the server has
    /// OpenSSL read it before it submits the command.
    public var publicKey: String
}

extension APNsKeyPut {
    /// A PEM of a P-256 public key is 178 bytes; this leaves room for other line lengths.
    public static let maxPublicKeyBytes = 1024

    init(_ reader: FieldReader) throws(APIError) {
        try reader.rejectUnknown(["type", "keyId", "teamId", "publicKey"])
        self.keyID = try reader.required("keyId", reader.appleID)
        self.teamID = try reader.required("teamId", reader.appleID)
        self.publicKey = try reader.required("publicKey") { key throws(APIError) in
            try reader.string(key, maxLength: Self.maxPublicKeyBytes)
        }
        guard isPublicKeyPEM(self.publicKey) else {
            throw reader.fail(
                "publicKey", "expected a PEM: -----BEGIN PUBLIC KEY-----, lines of base64, -----END PUBLIC KEY-----")
        }
    }
}

extension FieldReader {
    /// An Apple key id or team id: exactly 10 ASCII letters and digits.
    func appleID(_ key: String) throws(APIError) -> String? {
        guard let text = try self.string(key, maxLength: 64) else { return nil }
        guard isAppleID(text) else {
            throw self.fail(key, "an Apple key or team id is 10 ASCII letters and digits, got \"\(text)\"")
        }
        return text
    }

    /// The `keyId` of `apns.keyDelete`.
    func keyDeleteID() throws(APIError) -> String {
        try self.rejectUnknown(["type", "keyId"])
        return try self.required("keyId", self.appleID)
    }
}

/// Whether `text` is an Apple key id or team id: exactly 10 ASCII letters and digits.
public func isAppleID(_ text: String) -> Bool {
    text.utf8.count == 10
        && text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
}

/// Whether `text` has the shape of a public key PEM (RFC 7468): the `PUBLIC KEY` armour around
/// lines of base64 of at most 76 characters, `\n` or `\r\n` line ends, one final line end at most.
func isPublicKeyPEM(_ text: String) -> Bool {
    // Bytes, not Characters: "\r\n" is one Character and would not split at "\n".
    var lines = text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false).map { line in
        Array(line.last == 0x0D ? line.dropLast() : line)
    }
    if lines.last?.isEmpty == true { lines.removeLast() }
    guard lines.count >= 3, lines.first == Array("-----BEGIN PUBLIC KEY-----".utf8),
        lines.last == Array("-----END PUBLIC KEY-----".utf8)
    else { return false }
    return lines.dropFirst().dropLast().allSatisfy { line in
        (1...76).contains(line.count)
            && line.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2B || byte == 0x2F || byte == 0x3D
            }
    }
}
