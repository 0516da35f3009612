import IsletTestSupport
import IsletTransport
import Testing

/// ES256 keys and signatures, checked against `/usr/bin/openssl` as a second implementation.
@Suite("ES256 keys (APNs provider keys)")
struct ES256Tests {
    static let message = Array(#"eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ.eyJpc3MiOiJERUYxMjNHSElKIn0"#.utf8)

    @Test("a key openssl generated signs, and its public half verifies that and nothing else")
    func signAndVerify() throws {
        try withTemporaryDirectory { directory in
            let tool = OpenSSLTool(in: directory)
            let key = try ES256PrivateKey(pem: try tool.newPrivateKey("AuthKey_ABC123DEFG.p8"))
            let signature = try key.sign(message: Self.message)
            #expect(signature.count == 64)
            #expect(key.publicKey.verify(signature: signature, message: Self.message))
            #expect(!key.publicKey.verify(signature: signature, message: Self.message + [0x2E]))
            var flipped = signature
            flipped[40] ^= 1
            #expect(!key.publicKey.verify(signature: flipped, message: Self.message))
            #expect(!key.publicKey.verify(signature: Array(signature.prefix(63)), message: Self.message))
            #expect(!key.publicKey.verify(signature: [UInt8](repeating: 0, count: 64), message: Self.message))
            let other = try ES256PrivateKey(pem: try tool.newPrivateKey("other.p8"))
            #expect(!other.publicKey.verify(signature: signature, message: Self.message))
        }
    }

    @Test("a signature made by openssl dgst -sha256 -sign verifies once its DER is converted to r‖s")
    func opensslSignature() throws {
        try withTemporaryDirectory { directory in
            let tool = OpenSSLTool(in: directory)
            _ = try tool.newPrivateKey("key.p8")
            let publicKey = try ES256PublicKey(pem: try tool.publicKey(ofPrivateKey: "key.p8"))
            try tool.write(Self.message, to: "message")
            let der = try tool.run(["dgst", "-sha256", "-sign", "key.p8", "message"])
            let raw = try #require(DERSignature.raw(der))
            #expect(publicKey.verify(signature: raw, message: Self.message))
            #expect(!publicKey.verify(signature: raw, message: Array(Self.message.dropLast())))
        }
    }

    @Test("a signature made here verifies with openssl dgst -sha256 -verify")
    func verifiedByOpenSSL() throws {
        try withTemporaryDirectory { directory in
            let tool = OpenSSLTool(in: directory)
            let key = try ES256PrivateKey(pem: try tool.newPrivateKey("key.p8"))
            try tool.write(Array(key.publicKey.pemText.utf8), to: "public.pem")
            try tool.write(Self.message, to: "message")
            try tool.write(DERSignature.der(try key.sign(message: Self.message)), to: "signature")
            let output = try tool.run([
                "dgst", "-sha256", "-verify", "public.pem", "-signature", "signature", "message",
            ])
            #expect(String(decoding: output, as: UTF8.self).contains("Verified OK"))
        }
    }

    @Test("the public key derived from a .p8 is the SPKI PEM openssl derives, and reads back unchanged")
    func derivedPublicKey() throws {
        try withTemporaryDirectory { directory in
            let tool = OpenSSLTool(in: directory)
            let p8 = try tool.newPrivateKey("key.p8")
            #expect(p8.hasPrefix("-----BEGIN PRIVATE KEY-----"))
            let expected = try tool.publicKey(ofPrivateKey: "key.p8")
            let derived = try ES256PublicKey(privateKeyPEM: p8)
            #expect(derived.pemText == expected)
            #expect(try ES256PublicKey(pem: expected).pemText == expected)
            #expect(derived.pemText.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        }
    }

    @Test("RSA and P-384 keys are refused as not P-256")
    func otherKeysRefused() throws {
        try withTemporaryDirectory { directory in
            let tool = OpenSSLTool(in: directory)
            let rsa = try tool.newPrivateKey(
                "rsa.pem", options: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"])
            let p384 = try tool.newPrivateKey(
                "p384.pem", options: ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"])
            for (file, pem) in [("rsa.pem", rsa), ("p384.pem", p384)] {
                #expect(throws: ES256Error(.notP256, "")) { try ES256PrivateKey(pem: pem) }
                let publicPEM = try tool.publicKey(ofPrivateKey: file)
                #expect(throws: ES256Error(.notP256, "")) { try ES256PublicKey(pem: publicPEM) }
            }
        }
    }

    @Test("garbage, a private key given as a public one and an encrypted key are unreadable; nothing prompts")
    func unreadable() throws {
        try withTemporaryDirectory { directory in
            let tool = OpenSSLTool(in: directory)
            let p8 = try tool.newPrivateKey("key.p8")
            try tool.run([
                "pkcs8", "-topk8", "-in", "key.p8", "-v2", "aes-256-cbc", "-passout", "pass:secret", "-out",
                "locked.p8",
            ])
            let locked = try tool.read("locked.p8")
            #expect(locked.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----"))
            let unreadable = ES256Error(.unreadableKey, "")
            #expect(throws: unreadable) { try ES256PrivateKey(pem: locked) }
            #expect(throws: unreadable) { try ES256PublicKey(pem: p8) }
            #expect(throws: unreadable) { try ES256PublicKey(pem: "") }
            #expect(throws: unreadable) {
                try ES256PublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
            }
            #expect(throws: unreadable) { try ES256PrivateKey(pem: "not a key") }
        }
    }
}

/// ECDSA signatures between JWS's raw `r‖s` and DER (`SEQUENCE { INTEGER r, INTEGER s }`), as a
/// test's independent conversion. P-256 lengths always fit DER's short form.
enum DERSignature {
    static func raw(_ der: [UInt8]) -> [UInt8]? {
        guard der.count > 8, der[0] == 0x30, Int(der[1]) == der.count - 2 else { return nil }
        var index = 2
        var raw: [UInt8] = []
        for _ in 0..<2 {
            guard der[index] == 0x02 else { return nil }
            let length = Int(der[index + 1])
            var integer = Array(der[(index + 2)..<(index + 2 + length)])
            index += 2 + length
            while integer.count > 32, integer.first == 0 { integer.removeFirst() }
            guard integer.count <= 32 else { return nil }
            raw += [UInt8](repeating: 0, count: 32 - integer.count) + integer
        }
        return raw
    }

    static func der(_ raw: [UInt8]) -> [UInt8] {
        var body: [UInt8] = []
        for half in [raw[0..<32], raw[32..<64]] {
            var integer = Array(half.drop { $0 == 0 })
            if integer.isEmpty || integer[0] & 0x80 != 0 { integer.insert(0, at: 0) }
            body += [0x02, UInt8(integer.count)] + integer
        }
        return [0x30, UInt8(body.count)] + body
    }
}
