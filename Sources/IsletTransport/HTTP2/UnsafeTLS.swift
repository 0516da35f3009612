// Thread and lifetime rules: a `TLSContext` (SSL_CTX) is created once per listener and freed
// in `deinit`; a `TLSSession` (SSL with two memory BIOs, owned by the SSL) belongs to one
// connection, on the loop thread, and is freed in `deinit`. No pointer into OpenSSL escapes
// these classes. The ALPN callback is a capture-free C function.

internal import COpenSSL

/// A server TLS context: certificate chain, private key, TLS 1.2+, ALPN `h2` only.
final class TLSContext {
    let raw: OpaquePointer

    init(certificatePath: String, keyPath: String) throws(TransportError) {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw TransportError(.contextFailed, call: "SSL_CTX_new", message: "OpenSSL could not create a TLS context")
        }
        self.raw = context
        _ = islet_ssl_ctx_set_min_tls12(context)
        _ = islet_ssl_ctx_set_release_buffers(context)
        guard SSL_CTX_use_certificate_chain_file(context, certificatePath) == 1 else {
            throw TransportError(
                .contextFailed, call: "SSL_CTX_use_certificate_chain_file",
                message: "cannot load the TLS certificate \(certificatePath): \(Self.lastError())")
        }
        guard SSL_CTX_use_PrivateKey_file(context, keyPath, SSL_FILETYPE_PEM) == 1,
            SSL_CTX_check_private_key(context) == 1
        else {
            throw TransportError(
                .contextFailed, call: "SSL_CTX_use_PrivateKey_file",
                message:
                    "cannot load the TLS key \(keyPath) (or it does not match the certificate): \(Self.lastError())")
        }
        SSL_CTX_set_alpn_select_cb(context, isletSelectH2, nil)
    }

    deinit { SSL_CTX_free(self.raw) }

    static func lastError() -> String {
        let code = ERR_get_error()
        guard code != 0 else { return "unknown error" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Chooses `h2` from the client's ALPN list; a client that does not offer it is refused.
private func isletSelectH2(
    _ ssl: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    _ outLength: UnsafeMutablePointer<UInt8>?, _ input: UnsafePointer<UInt8>?, _ inputLength: UInt32,
    _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let input, let out, let outLength else { return SSL_TLSEXT_ERR_ALERT_FATAL }
    var offset = 0
    while offset < Int(inputLength) {
        let length = Int(input[offset])
        let start = offset + 1
        if length == 2, start + 2 <= Int(inputLength), input[start] == UInt8(ascii: "h"),
            input[start + 1] == UInt8(ascii: "2")
        {
            out.pointee = input + start
            outLength.pointee = 2
            return SSL_TLSEXT_ERR_OK
        }
        offset = start + length
    }
    return SSL_TLSEXT_ERR_ALERT_FATAL
}

/// One connection's TLS state, fed and drained through memory: ciphertext in from the socket,
/// plaintext out to HTTP/2, and back.
final class TLSSession {
    enum Progress { case handshaking, established, failed(String) }

    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer
    private(set) var isEstablished = false

    init(context: TLSContext) throws(TransportError) {
        guard let ssl = SSL_new(context.raw), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            throw TransportError(.contextFailed, call: "SSL_new", message: "OpenSSL could not start a session")
        }
        self.ssl = ssl
        self.input = input
        self.output = output
        SSL_set_bio(ssl, input, output)  // the SSL owns both BIOs from now on
        SSL_set_accept_state(ssl)
    }

    deinit { SSL_free(self.ssl) }

    /// Feeds ciphertext from the socket.
    func receive(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        _ = BIO_write(self.input, base, Int32(bytes.count))
    }

    /// Continues the handshake with what was received.
    func handshake() -> Progress {
        if self.isEstablished { return .established }
        let rc = SSL_do_handshake(self.ssl)
        if rc == 1 {
            self.isEstablished = true
            return .established
        }
        switch SSL_get_error(self.ssl, rc) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .handshaking
        default: return .failed(TLSContext.lastError())
        }
    }

    /// The protocol ALPN selected (`h2`), if any.
    var negotiatedProtocol: String? {
        var name: UnsafePointer<UInt8>? = nil
        var length: UInt32 = 0
        SSL_get0_alpn_selected(self.ssl, &name, &length)
        guard let name, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: name, count: Int(length)), as: UTF8.self)
    }

    /// Plaintext decrypted so far; nil when the peer closed TLS or it failed.
    func readPlaintext() -> [UInt8]? {
        var plaintext: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { SSL_read(self.ssl, $0.baseAddress, Int32($0.count)) }
            if n > 0 {
                plaintext += chunk[..<Int(n)]
                continue
            }
            switch SSL_get_error(self.ssl, n) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return plaintext
            default: return plaintext.isEmpty ? nil : plaintext
            }
        }
    }

    /// Encrypts plaintext for the peer.
    func write(_ plaintext: [UInt8]) -> Bool {
        guard !plaintext.isEmpty else { return true }
        let n = plaintext.withUnsafeBytes { SSL_write(self.ssl, $0.baseAddress, Int32($0.count)) }
        return Int(n) == plaintext.count
    }

    /// Ciphertext waiting to go to the socket.
    func takeCiphertext() -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(self.output))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let n = bytes.withUnsafeMutableBytes { BIO_read(self.output, $0.baseAddress, Int32(pending)) }
        return n > 0 ? Array(bytes[..<Int(n)]) : []
    }
}
