import IsletTestSupport
import IsletTransport
import Testing

/// RFC 6455 edges on a real socket, against the echo delegate: fragments, the message limit,
/// UTF-8, protocol errors and the close handshake. Autobahn (scripts/autobahn) covers the same
/// ground at scale; these pin the behaviours Islet relies on.
@Suite("WebSocket conformance of the socket transport")
struct WebSocketConformanceTests {
    typealias Frame = TestWebSocketClient.Frame

    static let limited = TransportConfiguration(port: 0, maxMessageBytes: 64 * 1024)

    @Test(
        "a message over the limit made of 1 KiB fragments closes with 1009; the reassembly buffer never exceeds the limit"
    )
    func oversizeFromSmallFragments() async throws {
        try await withEchoTransport(Self.limited) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            for _ in 0..<3 {
                let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
                let piece = Array(repeating: UInt8(ascii: "x"), count: 1024)
                try client.send(opcode: Frame.text, payload: piece, fin: false)
                for _ in 0..<64 { try client.send(opcode: Frame.continuation, payload: piece, fin: false) }
                #expect(try client.readClose() == 1009)
            }
            let statistics = try await loop.submit { box.transport.statistics }
            #expect(statistics.largestReassemblyBytes == 64 * 1024)
            #expect(statistics.reassemblyBytes == 0)
            let closed = try await loop.submit { box.delegate.closed.map { $0.1 } }
            #expect(closed == Array(repeating: WebSocketCloseCode.messageTooBig, count: 3))
        }
    }

    @Test("a message over the limit gets one close frame, 1009, and nothing after it (lws's; this side wrote a second)")
    func oversizeClosesOnce() async throws {
        try await withEchoTransport(Self.limited) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try client.send(opcode: Frame.binary, payload: Array(repeating: 1, count: 70 * 1024))
            let frames = client.framesUntilHangUp(answeringFirstWith: 1009)
            #expect(frames.map(\.opcode) == [Frame.close])
            #expect(frames.first?.closeCode == 1009)
        }
    }

    @Test("a continuation frame announcing 2^63 - 1 bytes after a first fragment closes with 1009, the server alive")
    func hugeContinuationAnnounced() async throws {
        try await withEchoTransport(Self.limited) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try client.send(opcode: Frame.text, payload: Array(#"{"op":"#.utf8), fin: false)
            try client.sendHeaderOnly(
                opcode: Frame.continuation, announcedLength: Int.max, start: Array(repeating: 0x61, count: 16))
            #expect(try client.readClose() == 1009)
            let again = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try again.send(text: "still here")
            #expect(try again.readText() == "still here")
        }
    }

    @Test("a fragmented message of exactly the limit is reassembled and echoed")
    func fragmentsUpToTheLimit() async throws {
        try await withEchoTransport(Self.limited) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            let piece = Array(repeating: UInt8(ascii: "y"), count: 16 * 1024)
            try client.send(opcode: Frame.binary, payload: piece, fin: false)
            try client.send(opcode: Frame.continuation, payload: piece, fin: false)
            try client.send(opcode: Frame.continuation, payload: piece, fin: false)
            try client.send(opcode: Frame.continuation, payload: piece, fin: true)
            var echoed: [UInt8] = []
            var frame: Frame
            repeat {
                frame = try client.readFrame()
                echoed += frame.payload
            } while !frame.fin
            #expect(echoed.count == 64 * 1024)
            let statistics = try await loop.submit { box.transport.statistics }
            #expect(statistics.reassemblyBytes == 0)
            #expect(statistics.largestReassemblyBytes <= 64 * 1024)
        }
    }

    @Test("pings between the fragments of a message are answered, and the message still arrives whole")
    func interleavedPings() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try client.send(opcode: Frame.text, payload: Array("frag".utf8), fin: false)
            try client.send(opcode: Frame.ping, payload: Array("p1".utf8))
            #expect(try client.readFrame() == Frame(fin: true, opcode: Frame.pong, payload: Array("p1".utf8)))
            try client.send(opcode: Frame.continuation, payload: Array("ment".utf8), fin: false)
            try client.send(opcode: Frame.ping, payload: [])
            #expect(try client.readFrame() == Frame(fin: true, opcode: Frame.pong, payload: []))
            try client.send(opcode: Frame.continuation, payload: Array("ed".utf8), fin: true)
            #expect(try client.readText() == "fragmented")
        }
    }

    @Test("invalid UTF-8 closes with 1007, also when it spans a fragment boundary; valid UTF-8 split there is kept")
    func utf8AcrossFragments() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let valid = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try valid.send(opcode: Frame.text, payload: [0x61, 0xE2, 0x82], fin: false)  // "a" + "€" cut after 2 bytes
            try valid.send(opcode: Frame.continuation, payload: [0xAC], fin: true)
            #expect(try valid.readText() == "a€")

            let split = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try split.send(opcode: Frame.text, payload: [0x61, 0xE2, 0x82], fin: false)
            try split.send(opcode: Frame.continuation, payload: [0x28], fin: true)  // not a continuation byte
            #expect(try split.readClose() == 1007)

            let unfinished = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try unfinished.send(opcode: Frame.text, payload: [0x61, 0xE2, 0x82], fin: true)  // ends mid-character
            #expect(try unfinished.readClose() == 1007)

            let overlong = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try overlong.send(opcode: Frame.text, payload: [0xC0, 0xAF])
            #expect(try overlong.readClose() == 1007)
        }
    }

    @Test(
        "protocol errors close with 1002",
        arguments: [
            ("reserved bit without an extension", [(Frame.text, [UInt8](), true, UInt8(4))]),
            ("reserved data opcode 3", [(UInt8(3), [], true, 0)]),
            ("reserved control opcode 0xB", [(UInt8(0xB), [], true, 0)]),
            ("fragmented ping", [(Frame.ping, Array("p".utf8), false, 0)]),
            ("continuation without a start", [(Frame.continuation, Array("x".utf8), true, 0)]),
            ("new message inside a fragmented one", [(Frame.text, [0x61], false, 0), (Frame.text, [0x62], true, 0)]),
        ] as [(String, [(UInt8, [UInt8], Bool, UInt8)])])
    func protocolErrors(name: String, frames: [(UInt8, [UInt8], Bool, UInt8)]) async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            for (opcode, payload, fin, rsv) in frames {
                try client.send(opcode: opcode, payload: payload, fin: fin, rsv: rsv)
            }
            #expect(try client.readClose() == 1002, "\(name)")
        }
    }

    @Test("an unmasked client frame fails the connection (RFC 6455 §5.1)")
    func unmaskedFrame() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            client.timeout = .milliseconds(500)
            try client.send(opcode: Frame.text, payload: Array("hi".utf8), masked: false)
            let echoed = try? client.readFrame()
            withKnownIssue("lws 4.1.6 accepts unmasked client frames, and no public lws call exposes the mask bit") {
                #expect(echoed == nil || echoed?.opcode == Frame.close)
            }
        }
    }

    @Test(
        "valid close codes are echoed and reported", arguments: [1000, 1001, 1003, 1007, 1011, 3000, 4999] as [UInt16])
    func closeCodeEcho(code: UInt16) async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try client.sendClose(code: code, reason: "bye")
            #expect(try client.readClose(reply: false) == code)
            #expect(try client.connection.socket.read().isEmpty)
            let closed = try await loop.submit { box.delegate.closed.map { $0.1 } }
            #expect(closed == [WebSocketCloseCode(code)])
        }
    }

    @Test("invalid close codes are answered with 1002", arguments: [0, 999, 1004, 1005, 1006, 1016, 2999] as [UInt16])
    func invalidCloseCodes(code: UInt16) async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try client.sendClose(code: code)
            #expect(try client.readClose(reply: false) == 1002)
        }
    }

    @Test("a close frame without a code is answered without one; a close reason that is not UTF-8 fails the connection")
    func closePayloads() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let empty = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try empty.send(opcode: Frame.close, payload: [])
            let answer = try empty.readFrame()
            #expect(answer.opcode == Frame.close)
            #expect(answer.payload.isEmpty)

            let badReason = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try badReason.send(opcode: Frame.close, payload: [0x03, 0xE8, 0xC0, 0xAF])
            let ended: UInt16?
            do { ended = try badReason.readClose(reply: false) } catch { ended = nil }
            #expect(ended != 1000)
        }
    }
}
