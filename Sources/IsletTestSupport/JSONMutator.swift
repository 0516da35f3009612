/// Mutations of a valid JSON text: wrong types, deep nesting, huge numbers, invalid UTF-8,
/// truncation, stray bytes.
public struct JSONMutator {
    public var random: SplitMix64

    public init(random: SplitMix64) { self.random = random }

    public mutating func mutate(_ text: [UInt8]) -> [UInt8] {
        var bytes = text
        switch Int.random(in: 0..<10, using: &self.random) {
        case 0: bytes = Array(bytes.prefix(Int.random(in: 0..<max(1, bytes.count), using: &self.random)))
        case 1: bytes.insert(UInt8.random(in: 0...255, using: &self.random), at: self.position(bytes))
        case 2: bytes.insert(contentsOf: [0xC3, 0x28, 0xFF], at: self.position(bytes))  // invalid UTF-8
        case 3:
            let depth = Int.random(in: 50...3000, using: &self.random)
            bytes =
                Array("{\"commands\":".utf8) + Array(repeating: UInt8(ascii: "["), count: depth)
                + Array(repeating: UInt8(ascii: "]"), count: depth) + [UInt8(ascii: "}")]
        case 4:
            bytes = self.replaceValue(
                bytes,
                with: [
                    "1e400", "-1e999", "123456789012345678901234567890", "1.5e308", "-0", "0.0000000000000000001",
                ])
        case 5:
            bytes = self.replaceValue(bytes, with: ["[]", "{}", "null", "true", "\"\"", "[[[]]]", "{\"a\":{}}"])
        case 6:
            bytes = self.replaceValue(
                bytes,
                with: [
                    "\"\\ud800\"", "\"\\u0000\"", "\"\u{202E}\"", "\"" + String(repeating: "x", count: 5000) + "\"",
                ])
        case 7: if !bytes.isEmpty { bytes.remove(at: self.position(bytes) % bytes.count) }
        case 8: bytes = Array(bytes.reversed())
        default:
            let key = Array("\"dup\":1,\"dup\":2,".utf8)
            if let brace = bytes.firstIndex(of: UInt8(ascii: "{")) { bytes.insert(contentsOf: key, at: brace + 1) }
        }
        return bytes
    }

    private mutating func position(_ bytes: [UInt8]) -> Int { Int.random(in: 0...bytes.count, using: &self.random) }

    /// Replaces the value after a random `:` with one of `values`.
    private mutating func replaceValue(_ bytes: [UInt8], with values: [String]) -> [UInt8] {
        let colons = bytes.indices.filter { bytes[$0] == UInt8(ascii: ":") }
        guard let colon = colons.randomElement(using: &self.random) else { return bytes }
        var end = colon + 1
        var depth = 0
        var inString = false
        while end < bytes.count {
            let byte = bytes[end]
            if inString {
                if byte == UInt8(ascii: "\\") { end += 1 } else if byte == UInt8(ascii: "\"") { inString = false }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
                if depth == 0 { break }
                depth -= 1
            } else if byte == UInt8(ascii: ","), depth == 0 {
                break
            }
            end += 1
        }
        return Array(bytes[...colon]) + Array(values.randomElement(using: &self.random)!.utf8)
            + Array(bytes[min(end, bytes.count)...])
    }
}
