import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

/// The `/v1/echo` endpoint (conformance testing only) and `--ws-compression`, on real sockets.
@Suite("The conformance echo and WebSocket compression")
struct ConformanceEchoTests {
    typealias Frame = TestWebSocketClient.Frame

    static func configuration(echo: Bool = true, compression: Bool = false) -> IsletConfiguration {
        var configuration = IsletConfiguration.testing()
        configuration.conformanceEcho = echo
        configuration.webSocketCompression = compression
        return configuration
    }

    @Test("the echo is not mounted by default")
    func refusedByDefault() async throws {
        try await withRunningServer { server in
            #expect(throws: TestClientError.self) {
                _ = try TestWebSocketClient.connect(port: server.port, path: "/v1/echo", subprotocols: [])
            }
            #expect(throws: TestClientError.self) {
                _ = try TestWebSocketClient.connect(port: server.port, path: "/v1/echo", subprotocols: ["islet.v1"])
            }
        }
    }

    @Test("when mounted it echoes text and binary messages, with or without a subprotocol")
    func echoes() async throws {
        try await withRunningServer(Self.configuration()) { server in
            let plain = try TestWebSocketClient.connect(port: server.port, path: "/v1/echo", subprotocols: [])
            #expect(plain.subprotocol == nil)
            try plain.send(text: "héllo")
            #expect(try plain.readText() == "héllo")
            try plain.send(opcode: Frame.binary, payload: [0, 1, 2, 255])
            #expect(try plain.readFrame() == Frame(fin: true, opcode: Frame.binary, payload: [0, 1, 2, 255]))
            try plain.send(opcode: Frame.text, payload: [])
            #expect(try plain.readText() == "")

            let offered = try TestWebSocketClient.connect(port: server.port, path: "/v1/echo")
            try offered.send(text: #"{"op":"ping","id":1}"#)
            #expect(try offered.readText() == #"{"op":"ping","id":1}"#)  // echoed, not interpreted
            let open = try await server.withServer { $0.openStreams }
            #expect(open == 0)
        }
    }

    @Test("/v1/stream behaves the same with the echo mounted")
    func streamUnchanged() async throws {
        try await withRunningServer(Self.configuration()) { server in
            let stream = try TestWebSocketClient.connect(port: server.port)
            #expect(stream.subprotocol == "islet.v1")
            #expect(try stream.readJSON()["type"] == "hello")
            try stream.send(text: #"{"op":"ping","id":"s"}"#)
            #expect(try stream.readText() == #"{"id":"s","type":"pong"}"#)
            #expect(throws: TestClientError.self) {
                _ = try TestWebSocketClient.connect(port: server.port, subprotocols: [])
            }
            #expect(try TestHTTP.request(port: server.port, "/v1/stream").status == 400)
            let open = try await server.withServer { $0.openStreams }
            #expect(open == 1)
        }
    }

    @Test("the echo keeps the 64 KiB limit for fragmented messages: 1009, and the reassembly buffer stays bounded")
    func echoLimit() async throws {
        try await withRunningServer(Self.configuration()) { server in
            let piece = Array(repeating: UInt8(ascii: "z"), count: 4096)
            for _ in 0..<5 {
                let client = try TestWebSocketClient.connect(port: server.port, path: "/v1/echo", subprotocols: [])
                // 17 pieces are 68 KiB: just over the limit, and nothing more, so the server has
                // read everything when it closes (unread bytes would make its close a reset,
                // which can discard the 1009 before this client reads it).
                try client.send(opcode: Frame.text, payload: piece, fin: false)
                for _ in 0..<16 { try client.send(opcode: Frame.continuation, payload: piece, fin: false) }
                #expect(try client.readClose() == 1009)
            }
            let statistics = try await server.withServer { $0.transport.statistics }
            #expect(statistics.largestReassemblyBytes <= 64 * 1024)
            #expect(statistics.reassemblyBytes == 0)
        }
    }

    @Test("shutdown closes echo connections with 1001 and the loop closes cleanly")
    func shutdownClosesEcho() async throws {
        try await withLiveTestLock {
            let server = try await RunningServer.start(configuration: Self.configuration(), logger: makeTestLogger())
            let echo = try TestWebSocketClient.connect(port: server.port, path: "/v1/echo", subprotocols: [])
            let stream = try TestWebSocketClient.connect(port: server.port)
            _ = try stream.readJSON()
            server.shutdown()
            #expect(try echo.readClose() == 1001)
            #expect(try stream.readClose() == 1001)
            #expect(await server.terminated().isClean)
        }
    }

    @Test("permessage-deflate is negotiated only with --ws-compression", arguments: [false, true])
    func negotiation(compression: Bool) async throws {
        try await withRunningServer(Self.configuration(compression: compression)) { server in
            let client = try TestWebSocketClient.connect(
                port: server.port, path: "/v1/echo", subprotocols: [],
                headers: [("Sec-WebSocket-Extensions", "permessage-deflate; client_max_window_bits")])
            let accepted = client.handshake.headers["sec-websocket-extensions"]
            #expect((accepted?.hasPrefix("permessage-deflate") == true) == compression)
            let stream = try TestWebSocketClient.connect(
                port: server.port, headers: [("Sec-WebSocket-Extensions", "permessage-deflate")])
            #expect((stream.handshake.headers["sec-websocket-extensions"] != nil) == compression)
            let hello = try stream.readFrame()
            #expect(hello.rsv == (compression ? 4 : 0))
        }
    }

    /// A client of the echo endpoint that offers permessage-deflate.
    static func compressingClient(port: Int) throws -> TestWebSocketClient {
        try TestWebSocketClient.connect(
            port: port, path: "/v1/echo", subprotocols: [], headers: [("Sec-WebSocket-Extensions", "permessage-deflate")])
    }

    /// "Hello" compressed with permessage-deflate (RFC 7692 §7.2.3.1).
    static let compressedHello: [UInt8] = [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]

    @Test("with compression, a compressed message is inflated, echoed compressed, and uncompressed ones still work")
    func compressedRoundTrip() async throws {
        try await withRunningServer(Self.configuration(compression: true)) { server in
            let client = try Self.compressingClient(port: server.port)
            try client.send(opcode: Frame.text, payload: Self.compressedHello, rsv: 4)
            #expect(
                try client.readFrame() == Frame(fin: true, opcode: Frame.text, payload: Self.compressedHello, rsv: 4))
            try client.send(opcode: Frame.text, payload: Array("plain".utf8))
            let echoed = try client.readFrame()
            #expect(echoed.rsv == 4)  // the server compresses what it sends
            #expect(echoed.opcode == Frame.text)
        }
    }

    @Test("with compression, a message compressed with BFINAL set (RFC 7692 §7.2.3.4) is inflated, and the next ones too")
    func finalBlock() async throws {
        // "Hello", raw deflate finished (its last block has BFINAL set): 7 bytes; and RFC 7692's
        // own example, which adds the 00 of an empty stored block after the final one.
        let finished: [UInt8] = [0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]
        for payload in [finished, finished + [0x00]] {
            try await withRunningServer(Self.configuration(compression: true)) { server in
                let client = try Self.compressingClient(port: server.port)
                try client.send(opcode: Frame.text, payload: payload, rsv: 4)
                #expect(
                    try client.readFrame() == Frame(fin: true, opcode: Frame.text, payload: Self.compressedHello, rsv: 4))
                try client.send(opcode: Frame.text, payload: Self.compressedHello, rsv: 4)
                let second = try client.readFrame()
                #expect(second.opcode == Frame.text && second.rsv == 4)
                try client.send(opcode: Frame.text, payload: [0xC3, 0x28])  // invalid UTF-8, uncompressed
                #expect(try client.readClose() == 1007)
            }
        }
    }

    @Test("with compression, a small message that inflates beyond 64 KiB gets one close frame, 1009")
    func compressionBomb() async throws {
        // 100,000 × "a", deflated (raw, level 9, sync flush without its 00 00 FF FF): 115 bytes.
        let prefix: [UInt8] = [
            0xEC, 0xC1, 0x31, 0x01, 0x00, 0x00, 0x00, 0xC2, 0xA0, 0xAC, 0xEB, 0x5F, 0xC2, 0x1A, 0x1E, 0x40, 0x01,
        ]
        let bomb = prefix + Array(repeating: 0, count: 96) + [0xAF, 0x06]
        try await withRunningServer(Self.configuration(compression: true)) { server in
            let client = try Self.compressingClient(port: server.port)
            try client.send(opcode: Frame.text, payload: bomb, rsv: 4)
            let frames = client.framesUntilHangUp(answeringFirstWith: 1009)
            #expect(frames.map(\.opcode) == [Frame.close])  // one close frame: lws's and this side's were two
            #expect(frames.first?.closeCode == 1009)
            let statistics = try await server.withServer { $0.transport.statistics }
            #expect(statistics.largestReassemblyBytes <= 64 * 1024)
            #expect(statistics.reassemblyBytes == 0)
        }
    }

    @Test("with compression, a compressed text message that is not UTF-8 gets one close frame, 1007")
    func compressedInvalidUTF8() async throws {
        // {"a":"\u{C3}("} deflated (raw, level 9, sync flush without its 00 00 FF FF).
        let payload: [UInt8] = [0xAA, 0x56, 0x4A, 0x54, 0xB2, 0x52, 0x3A, 0xAC, 0xA1, 0x54, 0x0B, 0x00]
        try await withRunningServer(Self.configuration(compression: true)) { server in
            let client = try Self.compressingClient(port: server.port)
            try client.send(opcode: Frame.text, payload: payload, rsv: 4)
            let frames = client.framesUntilHangUp(answeringFirstWith: 1007)
            #expect(frames.map(\.opcode) == [Frame.close])
            #expect(frames.first?.closeCode == 1007)
        }
    }

    @Test("--conformance-echo is refused with a non-loopback host, even with an admin token")
    func refusedOffLoopback() {
        var configuration = IsletConfiguration(host: "0.0.0.0", adminToken: "0123456789abcdef", conformanceEcho: true)
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        do { try configuration.validate() } catch { #expect(error.problems.map(\.setting) == ["conformance-echo"]) }
        configuration.conformanceEcho = false
        #expect(throws: Never.self) { try configuration.validate() }
        #expect(throws: Never.self) { try IsletConfiguration(conformanceEcho: true).validate() }
    }
}
