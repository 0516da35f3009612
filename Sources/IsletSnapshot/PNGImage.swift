internal import CZlib

/// An 8-bit RGBA image, read from and written to PNG (RFC 2083) with zlib: enough for the
/// screenshots Chromium writes (8-bit greyscale, RGB or RGBA, with or without alpha, not
/// interlaced) and the diff images `islet snapshot --compare` writes.
public struct PNGImage: Equatable, Sendable {
    public let width: Int
    public let height: Int
    /// Row-major RGBA bytes, `width × height × 4`.
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 4, "RGBA bytes for every pixel")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The rectangle `x, y, width, height` of this image, clipped to it.
    public func cropped(x: Int, y: Int, width: Int, height: Int) -> PNGImage {
        let left = max(0, min(x, self.width)), top = max(0, min(y, self.height))
        let w = max(0, min(width, self.width - left)), h = max(0, min(height, self.height - top))
        var out: [UInt8] = []
        out.reserveCapacity(w * h * 4)
        for row in top..<(top + h) {
            let start = (row * self.width + left) * 4
            out += self.pixels[start..<(start + w * 4)]
        }
        return PNGImage(width: w, height: h, pixels: out)
    }
}

/// Why a file is not a PNG this codec reads.
public struct PNGError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension PNGImage {
    private static let signature: [UInt8] = [137, 80, 78, 71, 13, 10, 26, 10]

    public init(png bytes: [UInt8]) throws(PNGError) {
        guard bytes.count > 8, Array(bytes[0..<8]) == Self.signature else { throw PNGError("not a PNG file") }
        var offset = 8
        var header: [UInt8] = []
        var data: [UInt8] = []
        while offset + 8 <= bytes.count {
            let length = Int(Self.uint32(bytes, offset))
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            guard offset + 12 + length <= bytes.count else { throw PNGError("truncated \(type) chunk") }
            let body = bytes[(offset + 8)..<(offset + 8 + length)]
            if type == "IHDR" { header = Array(body) }
            if type == "IDAT" { data += body }
            if type == "IEND" { break }
            offset += 12 + length
        }
        guard header.count == 13 else { throw PNGError("no IHDR chunk") }
        let width = Int(Self.uint32(header, 0)), height = Int(Self.uint32(header, 4))
        let depth = header[8], colour = header[9], interlace = header[12]
        let channels: Int
        switch colour {
        case 0: channels = 1
        case 2: channels = 3
        case 4: channels = 2
        case 6: channels = 4
        default: throw PNGError("colour type \(colour) (palette) is not supported")
        }
        guard depth == 8, interlace == 0 else { throw PNGError("only 8-bit, non-interlaced PNGs are supported") }
        let raw = try Self.inflate(data, expected: (width * channels + 1) * height)
        let rows = try Self.unfilter(raw, width: width, height: height, channels: channels)
        var rgba = [UInt8](repeating: 255, count: width * height * 4)
        for pixel in 0..<(width * height) {
            let source = pixel * channels
            switch channels {
            case 1, 2:
                rgba[pixel * 4] = rows[source]; rgba[pixel * 4 + 1] = rows[source]; rgba[pixel * 4 + 2] = rows[source]
                if channels == 2 { rgba[pixel * 4 + 3] = rows[source + 1] }
            default:
                for c in 0..<channels { rgba[pixel * 4 + c] = rows[source + c] }
            }
        }
        self.init(width: width, height: height, pixels: rgba)
    }

    /// The image as an RGBA PNG (filter 0 on every row, zlib's default compression).
    public var png: [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity((self.width * 4 + 1) * self.height)
        for row in 0..<self.height {
            raw.append(0)
            raw += self.pixels[(row * self.width * 4)..<((row + 1) * self.width * 4)]
        }
        var header: [UInt8] = []
        Self.append32(&header, UInt32(self.width))
        Self.append32(&header, UInt32(self.height))
        header += [8, 6, 0, 0, 0]
        var out = Self.signature
        Self.appendChunk(&out, "IHDR", header)
        Self.appendChunk(&out, "IDAT", Self.deflate(raw))
        Self.appendChunk(&out, "IEND", [])
        return out
    }

    private static func uint32(_ bytes: some Collection<UInt8>, _ at: Int) -> UInt32 {
        let start = bytes.index(bytes.startIndex, offsetBy: at)
        return bytes[start...].prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func append32(_ out: inout [UInt8], _ value: UInt32) {
        out += [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static func appendChunk(_ out: inout [UInt8], _ type: String, _ body: [UInt8]) {
        append32(&out, UInt32(body.count))
        let typed = Array(type.utf8) + body
        out += typed
        let crc = typed.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        append32(&out, UInt32(crc))
    }

    private static func inflate(_ data: [UInt8], expected: Int) throws(PNGError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: expected)
        var length = uLongf(expected)
        let status = out.withUnsafeMutableBufferPointer { target in
            data.withUnsafeBufferPointer { source in
                uncompress(target.baseAddress, &length, source.baseAddress, uLong(source.count))
            }
        }
        guard status == Z_OK, Int(length) == expected else {
            throw PNGError("the image data does not inflate (\(status))")
        }
        return out
    }

    private static func deflate(_ data: [UInt8]) -> [UInt8] {
        var length = compressBound(uLong(data.count))
        var out = [UInt8](repeating: 0, count: Int(length))
        let status = out.withUnsafeMutableBufferPointer { target in
            data.withUnsafeBufferPointer { source in
                compress(target.baseAddress, &length, source.baseAddress, uLong(source.count))
            }
        }
        precondition(status == Z_OK, "compress with a buffer of compressBound bytes cannot fail")
        return Array(out.prefix(Int(length)))
    }

    /// Undoes the five PNG row filters (RFC 2083 §6), one byte per sample.
    private static func unfilter(_ raw: [UInt8], width: Int, height: Int, channels: Int) throws(PNGError) -> [UInt8] {
        let stride = width * channels
        var out = [UInt8](repeating: 0, count: stride * height)
        for row in 0..<height {
            let filter = raw[row * (stride + 1)]
            let source = row * (stride + 1) + 1, target = row * stride
            for i in 0..<stride {
                let x = Int(raw[source + i])
                let a = i >= channels ? Int(out[target + i - channels]) : 0
                let b = row > 0 ? Int(out[target - stride + i]) : 0
                let c = row > 0 && i >= channels ? Int(out[target - stride + i - channels]) : 0
                let predicted: Int
                switch filter {
                case 0: predicted = 0
                case 1: predicted = a
                case 2: predicted = b
                case 3: predicted = (a + b) / 2
                case 4:
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    predicted = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                default: throw PNGError("unknown row filter \(filter)")
                }
                out[target + i] = UInt8((x + predicted) & 0xFF)
            }
        }
        return out
    }
}
