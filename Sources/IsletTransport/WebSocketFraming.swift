/// RFC 6455 §5.2 framing of a whole server message (FIN set, unmasked), for writes that pass
/// Islet's own frames to the socket: a message framed once can be written to every connection
/// of a fan-out without copying, and several framed messages can leave in one `send`.
///
/// Only for server connections without permessage-deflate: a client's frames must be masked,
/// and a compressed message is framed by libwebsockets as it deflates.
enum WebSocketFraming {
    /// The longest header: 2 bytes, and 8 of extended length.
    static let maxHeaderBytes = 10

    /// The header's length for a payload of `count` bytes.
    static func headerBytes(payload count: Int) -> Int {
        count < 126 ? 2 : count <= 0xFFFF ? 4 : 10
    }

    /// Writes the header of a whole message of `count` payload bytes at `destination`.
    /// - Returns: The header's length.
    @discardableResult
    static func writeHeader(payload count: Int, isText: Bool, to destination: UnsafeMutablePointer<UInt8>) -> Int {
        destination[0] = 0x80 | (isText ? 0x1 : 0x2)
        switch count {
        case ..<126:
            destination[1] = UInt8(count)
            return 2
        case ...0xFFFF:
            destination[1] = 126
            destination[2] = UInt8(count >> 8)
            destination[3] = UInt8(count & 0xFF)
            return 4
        default:
            destination[1] = 127
            for index in 0..<8 { destination[2 + index] = UInt8(truncatingIfNeeded: UInt64(count) >> (56 - 8 * index)) }
            return 10
        }
    }

    /// The message as one frame: header, then payload.
    static func framed(_ message: WebSocketMessage) -> [UInt8] {
        let payload = message.bytes
        let header = self.headerBytes(payload: payload.count)
        return [UInt8](unsafeUninitializedCapacity: header + payload.count) { buffer, initialized in
            let base = buffer.baseAddress!
            self.writeHeader(payload: payload.count, isText: message.isText, to: base)
            payload.withUnsafeBufferPointer { source in
                if let start = source.baseAddress { (base + header).update(from: start, count: source.count) }
            }
            initialized = header + payload.count
        }
    }
}
