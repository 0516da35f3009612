import IsletCore
import IsletServer
import IsletTestSupport
import Testing

@Suite("The /v1/stream WebSocket on a real socket")
struct LiveStreamTests {
    @Test("the handshake selects islet.v1 and the first message is hello")
    func hello() async throws {
        try await withRunningServer { server in
            let client = try TestWebSocketClient.connect(port: server.port)
            #expect(client.subprotocol == "islet.v1")
            let hello = try client.readJSON()
            #expect(hello["type"] == "hello")
            #expect(hello["epoch"]?.stringValue != nil)
            #expect(hello["rev"]?.numberValue == 0)
            #expect(hello["server"]?.stringValue?.hasPrefix("islet/") == true)
            #expect(hello["limits"]?["maxMessageBytes"]?.numberValue == 65536)
        }
    }

    @Test("ping is answered with pong carrying the same id")
    func pingPong() async throws {
        try await withRunningServer { server in
            let client = try TestWebSocketClient.connect(port: server.port)
            _ = try client.readJSON()
            try client.send(text: #"{"op":"ping","id":"p-1"}"#)
            #expect(try client.readText() == #"{"id":"p-1","type":"pong"}"#)
            try client.send(text: #"{"op":"ping","id":7}"#)
            #expect(try client.readJSON() == ["type": "pong", "id": 7])
        }
    }

    @Test("a fragmented message is reassembled")
    func fragmented() async throws {
        try await withRunningServer { server in
            let client = try TestWebSocketClient.connect(port: server.port)
            _ = try client.readJSON()
            let text = Array(#"{"op":"ping","id":"frag"}"#.utf8)
            try client.send(opcode: 0x1, payload: Array(text[0..<5]), fin: false)
            try client.send(opcode: 0x0, payload: Array(text[5..<12]), fin: false)
            try client.send(opcode: 0x0, payload: Array(text[12...]), fin: true)
            #expect(try client.readJSON()["id"] == "frag")
        }
    }

    @Test("an unknown op and malformed JSON get an error message and the connection stays open")
    func badMessages() async throws {
        try await withRunningServer { server in
            let client = try TestWebSocketClient.connect(port: server.port)
            _ = try client.readJSON()
            try client.send(text: #"{"op":"dance","id":"d1"}"#)
            let unknown = try client.readJSON()
            #expect(unknown["type"] == "error")
            #expect(unknown["id"] == "d1")
            #expect(unknown["error"]?["code"] == "invalid_argument")
            #expect(unknown["error"]?["field"] == "/op")
            try client.send(text: #"{"op":"ping""#)
            let malformed = try client.readJSON()
            #expect(malformed["error"]?["code"] == "invalid_json")
            #expect(malformed["id"] == .null)
            try client.send(text: #"{"op":"ping","id":"still-open"}"#)
            #expect(try client.readJSON()["type"] == "pong")
        }
    }

    @Test("a message over 64 KiB closes the connection with 1009")
    func oversizeMessage() async throws {
        try await withRunningServer { server in
            let client = try TestWebSocketClient.connect(port: server.port)
            _ = try client.readJSON()
            try client.send(opcode: 0x1, payload: Array(repeating: UInt8(ascii: " "), count: 64 * 1024 + 1))
            #expect(try client.readClose() == 1009)
        }
    }

    @Test("an oversize message made of small fragments also closes with 1009")
    func oversizeFragments() async throws {
        try await withRunningServer { server in
            let client = try TestWebSocketClient.connect(port: server.port)
            _ = try client.readJSON()
            let piece = Array(repeating: UInt8(ascii: " "), count: 16 * 1024)
            try client.send(opcode: 0x1, payload: piece, fin: false)
            for _ in 0..<4 { try client.send(opcode: 0x0, payload: piece, fin: false) }
            #expect(try client.readClose() == 1009)
        }
    }

    @Test("a frame header announcing more than the limit closes with 1009 before the payload arrives")
    func oversizeAnnounced() async throws {
        try await withRunningServer { server in
            let client = try TestWebSocketClient.connect(port: server.port)
            _ = try client.readJSON()
            try client.sendHeaderOnly(opcode: 0x1, announcedLength: 10 * 1024 * 1024)
            try client.connection.socket.write(Array(repeating: 32, count: 8192))
            let frame = try client.readFrame()
            #expect(frame.closeCode == 1009, "\(frame)")
        }
    }

    @Test("200 concurrent clients connect and each receives hello")
    func manyClients() async throws {
        try await withRunningServer { server in
            let pending = try (0..<200).map { _ in try TestWebSocketClient.startConnecting(port: server.port) }
            let clients = try pending.map { try TestWebSocketClient.finishConnecting($0) }
            for client in clients {
                #expect(try client.readJSON()["type"] == "hello")
            }
            let open = try await server.withServer { $0.openStreams }
            #expect(open == 200)
        }
    }

    @Test("an upgrade without islet.v1, or to another path, is refused")
    func refusedUpgrades() async throws {
        try await withRunningServer { server in
            #expect(throws: TestClientError.self) {
                _ = try TestWebSocketClient.connect(port: server.port, subprotocols: ["other"])
            }
            #expect(throws: TestClientError.self) {
                _ = try TestWebSocketClient.connect(port: server.port, subprotocols: [])
            }
            #expect(throws: TestClientError.self) {
                _ = try TestWebSocketClient.connect(port: server.port, path: "/v1/elsewhere")
            }
            let plain = try TestHTTP.request(port: server.port, "/v1/stream")
            #expect(plain.status == 400)
        }
    }

    @Test("shutdown closes every stream with 1001 and the loop closes cleanly")
    func shutdownGoingAway() async throws {
        try await withLiveTestLock {
            let server = try await RunningServer.start(configuration: .testing(), logger: makeTestLogger())
            let clients = try (0..<5).map { _ in try TestWebSocketClient.connect(port: server.port) }
            for client in clients { _ = try client.readJSON() }
            server.shutdown()
            for client in clients { #expect(try client.readClose() == 1001) }
            let termination = await server.terminated()
            #expect(termination.isClean)
        }
    }
}

@Suite("Starting a server")
struct StartupTests {
    @Test("a configuration error after the transport is bound still closes the loop and throws")
    func badPublicDirectory() async throws {
        try await withLiveTestLock {
            await #expect(throws: ConfigurationError.self) {
                _ = try await RunningServer.start(
                    configuration: .testing(publicDirectory: "/nonexistent"), logger: makeTestLogger())
            }
        }
    }

    @Test("a port in use is a transport error")
    func portInUse() async throws {
        try await withRunningServer { server in
            var configuration = IsletConfiguration.testing()
            configuration.port = server.port
            await #expect(throws: (any Error).self) {
                _ = try await RunningServer.start(configuration: configuration, logger: makeTestLogger())
            }
        }
    }
}
