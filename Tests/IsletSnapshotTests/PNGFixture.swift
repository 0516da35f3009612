import Foundation
import IsletSnapshot

/// Builds PNG files by hand for the decoder's tests: the RGBA encoder only writes filter 0 rows.
enum PNGFixture {
    /// An 8-bit RGB PNG whose IDAT holds `filtered` (each row: its filter byte, then the samples),
    /// stored in a zlib stream of uncompressed deflate blocks.
    static func rgb(width: Int, height: Int, filtered: [UInt8]) -> [UInt8] {
        var header: [UInt8] = []
        append32(&header, UInt32(width))
        append32(&header, UInt32(height))
        header += [8, 2, 0, 0, 0]
        var out: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]
        chunk(&out, "IHDR", header)
        chunk(&out, "IDAT", stored(filtered))
        chunk(&out, "IEND", [])
        return out
    }

    /// A zlib stream (RFC 1950) holding one stored deflate block (RFC 1951 §3.2.4).
    private static func stored(_ data: [UInt8]) -> [UInt8] {
        let length = UInt16(data.count)
        var out: [UInt8] = [0x78, 0x01, 0x01, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF),
                            UInt8(~length >> 8)]
        out += data
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65521; b = (b + a) % 65521 }
        append32(&out, b << 16 | a)
        return out
    }

    private static func chunk(_ out: inout [UInt8], _ type: String, _ body: [UInt8]) {
        append32(&out, UInt32(body.count))
        let typed = Array(type.utf8) + body
        out += typed
        append32(&out, crc32(typed))
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func append32(_ out: inout [UInt8], _ value: UInt32) {
        out += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
