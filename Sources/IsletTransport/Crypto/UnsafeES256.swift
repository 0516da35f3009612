// Thread and lifetime rules: each key owns one EVP_PKEY (`UnsafeEVPKey`), freed when its last
// owner goes. OpenSSL 3 never changes a key after it is built and signing or verifying only
// reads it, so a key may be used from any thread. Every other OpenSSL object (BIO, EVP_MD_CTX,
// ECDSA_SIG, BIGNUM) lives within one call and is freed before the call returns. A failure
// empties OpenSSL's per-thread error queue, so that the TLS code's error reports on the loop
// thread never pick up a stale error from here. No pointer leaves this file.

internal import COpenSSL

/// An ES256 public key (ECDSA on P-256 with SHA-256, RFC 7518 §3.4): what APNs keeps of a
/// provider's signing key, and all Islet needs to check a provider token.
///
/// Only P-256 keys are accepted: an APNs key is one, and ES256 means exactly that curve.
public struct ES256PublicKey: Sendable {
    let key: UnsafeEVPKey
    /// The key as a `-----BEGIN PUBLIC KEY-----` PEM (SubjectPublicKeyInfo), in OpenSSL's
    /// canonical form whatever form it was read from.
    public let pemText: String

    /// Reads a `-----BEGIN PUBLIC KEY-----` PEM.
    /// - Throws: `ES256Error.unreadableKey` for anything else (a private key included),
    ///   `.notP256` for a key of another kind or curve.
    public init(pem: String) throws(ES256Error) {
        let key = try readKey(pem, "PUBLIC KEY") { bio in PEM_read_bio_PUBKEY(bio, nil, isletNoPassphrase, nil) }
        try self.init(key)
    }

    /// The public half of a private key PEM, such as Apple's `AuthKey_<key id>.p8` (PKCS#8).
    /// - Throws: as ``ES256PrivateKey/init(pem:)``.
    public init(privateKeyPEM: String) throws(ES256Error) {
        self = try ES256PrivateKey(pem: privateKeyPEM).publicKey
    }

    private init(_ key: UnsafeEVPKey) throws(ES256Error) {
        self.key = key
        self.pemText = try publicPEM(of: key.raw)
    }

    /// Whether `signature` (raw `r‖s`, 32 bytes each, as JWS carries it) signs `message`.
    /// - Returns: false for a signature of another length or one that does not verify.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        defer { ERR_clear_error() }
        guard signature.count == 64, let der = derSignature(raw: signature), let context = EVP_MD_CTX_new() else {
            return false
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, self.key.raw) == 1 else { return false }
        return der.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer { message in
                EVP_DigestVerify(context, signature.baseAddress, signature.count, message.baseAddress, message.count)
                    == 1
            }
        }
    }
}

/// An ES256 private key, so that the CLI and the tests can sign provider tokens as a real
/// provider does. The server never holds one.
public struct ES256PrivateKey: Sendable {
    let key: UnsafeEVPKey
    /// Its public half.
    public let publicKey: ES256PublicKey

    /// Reads a private key PEM: PKCS#8 (`-----BEGIN PRIVATE KEY-----`, Apple's `.p8`) or SEC 1
    /// (`-----BEGIN EC PRIVATE KEY-----`). An encrypted key is refused; no passphrase is asked.
    /// - Throws: `ES256Error.unreadableKey` or `.notP256`.
    public init(pem: String) throws(ES256Error) {
        self.key = try readKey(pem, "PRIVATE KEY") { bio in PEM_read_bio_PrivateKey(bio, nil, isletNoPassphrase, nil) }
        self.publicKey = try ES256PublicKey(pem: try publicPEM(of: self.key.raw))
    }

    /// Signs `message` with SHA-256.
    /// - Returns: the signature as raw `r‖s` (64 bytes), as JWS carries it.
    /// - Throws: `ES256Error.signingFailed` when OpenSSL fails (out of memory).
    public func sign(message: [UInt8]) throws(ES256Error) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw signingFailure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, self.key.raw) == 1 else {
            throw signingFailure("EVP_DigestSignInit")
        }
        var length = 0
        var der: [UInt8] = []
        let signed = message.withUnsafeBufferPointer { message in
            guard EVP_DigestSign(context, nil, &length, message.baseAddress, message.count) == 1 else { return false }
            der = [UInt8](repeating: 0, count: length)
            return EVP_DigestSign(context, &der, &length, message.baseAddress, message.count) == 1
        }
        guard signed, let raw = rawSignature(der: Array(der.prefix(length))) else {
            throw signingFailure("EVP_DigestSign")
        }
        return raw
    }
}

/// One OpenSSL key, freed with its last owner. Immutable once built (see the file's rules).
final class UnsafeEVPKey: @unchecked Sendable {
    let raw: OpaquePointer

    init(owning raw: OpaquePointer) { self.raw = raw }

    deinit { EVP_PKEY_free(self.raw) }
}

/// Reads one key from PEM text with `read` and checks that it is a P-256 key.
private func readKey(_ pem: String, _ kind: String, _ read: (OpaquePointer) -> OpaquePointer?) throws(ES256Error)
    -> UnsafeEVPKey
{
    let bytes = Array(pem.utf8)
    let raw: OpaquePointer? = bytes.withUnsafeBytes { buffer in
        guard !buffer.isEmpty, let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
        defer { BIO_free(bio) }
        return read(bio)
    }
    guard let raw else {
        throw ES256Error(.unreadableKey, "not a readable -----BEGIN \(kind)----- PEM (\(takeOpenSSLError()))")
    }
    let key = UnsafeEVPKey(owning: raw)
    guard EVP_PKEY_is_a(raw, "EC") == 1, groupName(of: raw) == "prime256v1" else {
        ERR_clear_error()
        throw ES256Error(.notP256, "ES256 needs an elliptic-curve key on P-256 (prime256v1)")
    }
    return key
}

/// The curve of an EC key, in OpenSSL's words (`prime256v1`), or nil.
private func groupName(of key: OpaquePointer) -> String? {
    var name = [CChar](repeating: 0, count: 64)
    var length = 0
    guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return nil }
    return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The public half of `key` as a SubjectPublicKeyInfo PEM.
private func publicPEM(of key: OpaquePointer) throws(ES256Error) -> String {
    guard let bio = BIO_new(BIO_s_mem()) else {
        throw ES256Error(.unreadableKey, "OpenSSL could not allocate a buffer")
    }
    defer { BIO_free(bio) }
    guard PEM_write_bio_PUBKEY(bio, key) == 1 else {
        throw ES256Error(.unreadableKey, "OpenSSL could not write the public key (\(takeOpenSSLError()))")
    }
    var text = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(bio)))
    let read = text.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32($0.count)) }
    return String(decoding: text.prefix(Int(max(read, 0))), as: UTF8.self)
}

/// JWS's raw `r‖s` as the DER `ECDSA-Sig-Value` OpenSSL verifies.
private func derSignature(raw: [UInt8]) -> [UInt8]? {
    guard let signature = ECDSA_SIG_new() else { return nil }
    defer { ECDSA_SIG_free(signature) }
    let (r, s) = raw.withUnsafeBufferPointer { bytes in
        (BN_bin2bn(bytes.baseAddress, 32, nil), BN_bin2bn(bytes.baseAddress! + 32, 32, nil))
    }
    guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
        BN_free(r)
        BN_free(s)
        return nil
    }
    let length = i2d_ECDSA_SIG(signature, nil)
    guard length > 0 else { return nil }
    var der = [UInt8](repeating: 0, count: Int(length))
    let written = der.withUnsafeMutableBufferPointer { buffer in
        var cursor = buffer.baseAddress
        return i2d_ECDSA_SIG(signature, &cursor)
    }
    return written == length ? der : nil
}

/// A DER `ECDSA-Sig-Value` as JWS's raw `r‖s`.
private func rawSignature(der: [UInt8]) -> [UInt8]? {
    let signature: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
        var cursor = buffer.baseAddress
        return d2i_ECDSA_SIG(nil, &cursor, buffer.count)
    }
    guard let signature else { return nil }
    defer { ECDSA_SIG_free(signature) }
    var r: OpaquePointer?
    var s: OpaquePointer?
    ECDSA_SIG_get0(signature, &r, &s)
    var raw = [UInt8](repeating: 0, count: 64)
    let fits = raw.withUnsafeMutableBufferPointer { buffer in
        BN_bn2binpad(r, buffer.baseAddress, 32) == 32 && BN_bn2binpad(s, buffer.baseAddress! + 32, 32) == 32
    }
    return fits ? raw : nil
}

private func signingFailure(_ call: String) -> ES256Error {
    ES256Error(.signingFailed, "\(call) failed (\(takeOpenSSLError()))")
}

/// OpenSSL's description of its oldest queued error; empties the queue.
private func takeOpenSSLError() -> String {
    let code = ERR_get_error()
    ERR_clear_error()
    guard code != 0 else { return "no detail from OpenSSL" }
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// Refuses every passphrase, so that an encrypted key fails to read instead of OpenSSL asking
/// the terminal for one.
private func isletNoPassphrase(
    _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int32, _ writing: Int32, _ context: UnsafeMutableRawPointer?
) -> Int32 {
    -1
}
