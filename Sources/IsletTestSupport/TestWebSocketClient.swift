public import IsletCore
import IsletTransport

/// A WebSocket client over a real socket, for tests: it can also send malformed, unmasked,
/// fragmented or oversize frames on purpose. Every read has a timeout.
public final class TestWebSocketClient {
    /// One frame as read from the wire.
    public struct Frame: Sendable, Equatable {
        public var fin: Bool
        public var opcode: UInt8
        public var payload: [UInt8]
        /// The RSV1–RSV3 bits (RSV1, 4, marks a message compressed with permessage-deflate).
        public var rsv: UInt8

        public init(fin: Bool, opcode: UInt8, payload: [UInt8], rsv: UInt8 = 0) {
            self.fin = fin
            self.opcode = opcode
            self.payload = payload
            self.rsv = rsv
        }

        public static let continuation: UInt8 = 0x0, text: UInt8 = 0x1, binary: UInt8 = 0x2
        public static let close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA

        /// The close code of a close frame, if it has one.
        public var closeCode: UInt16? {
            guard self.opcode == Frame.close, self.payload.count >= 2 else { return nil }
            return UInt16(self.payload[0]) << 8 | UInt16(self.payload[1])
        }
    }

    public let connection: TestHTTPConnection
    /// The 101 response.
    public private(set) var handshake: TestHTTPResponse
    private var buffer: [UInt8] = []
    public var timeout: Duration

    private init(connection: TestHTTPConnection, handshake: TestHTTPResponse, timeout: Duration) {
        self.connection = connection
        self.handshake = handshake
        self.timeout = timeout
        self.buffer = connection.takeBuffered()
    }

    /// The subprotocol the server selected.
    public var subprotocol: String? { self.handshake.headers["sec-websocket-protocol"] }

    /// Opens a WebSocket: sends the upgrade request and waits for 101.
    /// - Throws: `TestClientError` if the server answers anything else or closes.
    public static func connect(
        port: Int, path: String = "/v1/stream", subprotocols: [String] = ["islet.v1"],
        headers: [(String, String)] = [], timeout: Duration = .seconds(5), receiveBufferBytes: Int? = nil
    ) throws -> TestWebSocketClient {
        let pending = try self.startConnecting(
            port: port, path: path, subprotocols: subprotocols, headers: headers, timeout: timeout,
            receiveBufferBytes: receiveBufferBytes)
        return try self.finishConnecting(pending, timeout: timeout)
    }

    /// First half of `connect`: connects and sends the upgrade request (for many clients at once).
    public static func startConnecting(
        port: Int, path: String = "/v1/stream", subprotocols: [String] = ["islet.v1"],
        headers: [(String, String)] = [], timeout: Duration = .seconds(5), receiveBufferBytes: Int? = nil
    ) throws -> TestHTTPConnection {
        let connection = try TestHTTPConnection(port: port, timeout: timeout, receiveBufferBytes: receiveBufferBytes)
        var upgrade: [(String, String)] = [
            ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Version", "13"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ]
        if !subprotocols.isEmpty { upgrade.append(("Sec-WebSocket-Protocol", subprotocols.joined(separator: ", "))) }
        try connection.send("GET", path, headers: upgrade + headers)
        return connection
    }

    /// Second half of `connect`: waits for the 101.
    public static func finishConnecting(
        _ connection: TestHTTPConnection, timeout: Duration = .seconds(5)
    ) throws
        -> TestWebSocketClient
    {
        let response = try connection.readResponse()
        guard response.status == 101 else {
            throw TestClientError("upgrade answered \(response.status): \(response.text)")
        }
        guard response.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" else {
            throw TestClientError("bad Sec-WebSocket-Accept")
        }
        return TestWebSocketClient(connection: connection, handshake: response, timeout: timeout)
    }

    // MARK: Sending

    /// Sends one text message in one masked frame.
    public func send(text: String) throws { try self.send(opcode: Frame.text, payload: Array(text.utf8)) }

    /// Sends one frame. Defaults make a correct final masked frame; change them to misbehave.
    public func send(opcode: UInt8, payload: [UInt8], fin: Bool = true, masked: Bool = true, rsv: UInt8 = 0) throws {
        try self.connection.socket.write(
            Self.encodeFrame(opcode: opcode, payload: payload, fin: fin, masked: masked, rsv: rsv),
            timeout: self.timeout)
    }

    /// Sends a frame header announcing `length` bytes and only the first bytes of its payload,
    /// `start` (to test limits without sending the payload).
    public func sendHeaderOnly(opcode: UInt8, announcedLength: Int, start: [UInt8] = []) throws {
        var frame = Self.header(opcode: opcode, length: announcedLength, fin: true, masked: true, rsv: 0)
        frame += [1, 2, 3, 4] + start
        try self.connection.socket.write(frame, timeout: self.timeout)
    }

    /// Sends a close frame with `code`.
    public func sendClose(code: UInt16 = 1000, reason: String = "") throws {
        try self.send(opcode: Frame.close, payload: [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    /// The bytes of one frame.
    public static func encodeFrame(opcode: UInt8, payload: [UInt8], fin: Bool, masked: Bool, rsv: UInt8) -> [UInt8] {
        var frame = self.header(opcode: opcode, length: payload.count, fin: fin, masked: masked, rsv: rsv)
        guard masked else { return frame + payload }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    private static func header(opcode: UInt8, length: Int, fin: Bool, masked: Bool, rsv: UInt8) -> [UInt8] {
        var frame: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        if length < 126 {
            frame.append(maskBit | UInt8(length))
        } else if length < 65536 {
            frame += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            frame.append(maskBit | 127)
            frame += (0..<8).reversed().map { UInt8((UInt64(length) >> (UInt64($0) * 8)) & 0xFF) }
        }
        return frame
    }

    // MARK: Receiving

    /// Reads the next frame, each socket read waiting up to `timeout`, and the whole no later
    /// than `deadline` if one is given.
    public func readFrame(deadline: ContinuousClock.Instant? = nil) throws -> Frame {
        while true {
            if let (frame, used) = Self.decodeFrame(self.buffer) {
                self.buffer.removeFirst(used)
                return frame
            }
            var wait = self.timeout
            if let deadline {
                wait = min(wait, ContinuousClock.now.duration(to: deadline))
                guard wait > .zero else { throw TestClientError("read timed out at its deadline") }
            }
            let more = try self.connection.socket.read(timeout: wait)
            guard !more.isEmpty else { throw TestClientError("connection closed without a close frame") }
            self.buffer += more
        }
    }

    /// Reads the next whole text message, answering pings; throws if a close frame comes first.
    /// With `deadline`, pings answered meanwhile do not extend the wait past it.
    public func readText(deadline: ContinuousClock.Instant? = nil) throws -> String {
        var message: [UInt8] = []
        while true {
            let frame = try self.readFrame(deadline: deadline)
            switch frame.opcode {
            case Frame.ping: try self.send(opcode: Frame.pong, payload: frame.payload)
            case Frame.close: throw TestClientError("closed with \(frame.closeCode.map(String.init) ?? "no code")")
            case Frame.text, Frame.continuation:
                message += frame.payload
                if frame.fin { return String(decoding: message, as: UTF8.self) }
            default: throw TestClientError("unexpected opcode \(frame.opcode)")
            }
        }
    }

    /// Reads the next text message as JSON.
    public func readJSON(deadline: ContinuousClock.Instant? = nil) throws -> JSONValue {
        try JSONParser.stored.parse(try self.readText(deadline: deadline))
    }

    /// Reads until a close frame arrives and returns its code (nil if it carries none). With
    /// `reply` (the default) it answers with a close frame, as RFC 6455 asks of a client.
    public func readClose(reply: Bool = true) throws -> UInt16? {
        while true {
            let frame = try self.readFrame()
            guard frame.opcode == Frame.close else { continue }
            if reply { try? self.sendClose(code: frame.closeCode ?? 1000) }
            return frame.closeCode
        }
    }

    /// Every frame until the peer hangs up (or a read times out), the first answered with a
    /// close frame of `code`: for "one close frame, and nothing after it".
    public func framesUntilHangUp(answeringFirstWith code: UInt16) -> [Frame] {
        var frames: [Frame] = []
        while let frame = try? self.readFrame() {
            frames.append(frame)
            if frames.count == 1 { try? self.sendClose(code: code) }
        }
        return frames
    }

    /// Closes the socket without a close frame.
    public func drop() { self.connection.socket.close() }

    private static func decodeFrame(_ bytes: [UInt8]) -> (Frame, Int)? {
        guard bytes.count >= 2 else { return nil }
        var length = Int(bytes[1] & 0x7F)
        var offset = 2
        if length == 126 {
            guard bytes.count >= 4 else { return nil }
            length = Int(bytes[2]) << 8 | Int(bytes[3])
            offset = 4
        } else if length == 127 {
            guard bytes.count >= 10 else { return nil }
            length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
            offset = 10
        }
        let masked = bytes[1] & 0x80 != 0
        let maskOffset = offset
        if masked { offset += 4 }
        guard bytes.count >= offset + length else { return nil }
        var payload = Array(bytes[offset..<offset + length])
        if masked { for index in payload.indices { payload[index] ^= bytes[maskOffset + index % 4] } }
        let frame = Frame(
            fin: bytes[0] & 0x80 != 0, opcode: bytes[0] & 0x0F, payload: payload, rsv: (bytes[0] >> 4) & 7)
        return (frame, offset + length)
    }
}
