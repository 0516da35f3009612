/// base64url without padding (RFC 4648 §5), as JSON Web Tokens carry their parts (RFC 7515 §2).
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The value of each byte of the alphabet; 0xFF for any other byte.
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { values[Int(byte)] = UInt8(index) }
        return values
    }()

    static func encode(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var group = 0
            for byte in chunk { group = group << 8 | Int(byte) }
            group <<= 8 * (3 - chunk.count)
            for position in 0...chunk.count { text.append(Self.alphabet[(group >> (18 - 6 * position)) & 0x3F]) }
            index += 3
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes `text` encodes; nil for a byte outside the alphabet (padding included), a length
    /// no encoding has (4n + 1), or unused low bits that are not zero (so every value has exactly
    /// one encoding).
    static func decode(_ text: Substring) -> [UInt8]? {
        let input = Array(text.utf8)
        guard input.count % 4 != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(input.count * 3 / 4)
        var group = 0
        var bits = 0
        for byte in input {
            let value = Self.values[Int(byte)]
            guard value != 0xFF else { return nil }
            group = (group << 6 | Int(value)) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((group >> bits) & 0xFF))
            }
        }
        guard group & ((1 << bits) - 1) == 0 else { return nil }
        return bytes
    }
}
