import IsletTestSupport
import IsletTransport
import Testing

/// Echoes requests and messages; `big:N` asks for an N-byte reply. Loop-confined.
final class EchoDelegate: TransportDelegate {
    var opened: [ConnectionID] = []
    var closed: [(ConnectionID, WebSocketCloseCode?)] = []
    var requests: [HTTPRequest] = []

    func transport(_ transport: any Transport, didReceive request: HTTPRequest) {
        self.requests.append(request)
        var headers: HTTPHeaders = ["content-type": "application/octet-stream", "x-path": request.path]
        headers.add(name: "x-query", value: request.query.map { "\($0.name)=\($0.value)" }.joined(separator: "&"))
        transport.respond(to: request.id, with: HTTPResponse(status: 200, headers: headers, body: request.body))
    }

    func transport(_ transport: any Transport, shouldAccept upgrade: WebSocketUpgrade) -> Bool {
        upgrade.path != "/refuse"
    }

    func transport(_ transport: any Transport, didOpen connection: ConnectionID, upgrade: WebSocketUpgrade) {
        self.opened.append(connection)
    }

    func transport(_ transport: any Transport, didReceive message: WebSocketMessage, from connection: ConnectionID) {
        let text = String(decoding: message.bytes, as: UTF8.self)
        if text.hasPrefix("big:"), let size = Int(text.dropFirst(4)) {
            transport.send(.binary(Array(repeating: 0x61, count: size)), to: connection)
        } else {
            transport.send(message, to: connection)
        }
    }

    func transport(_ transport: any Transport, didClose connection: ConnectionID, code: WebSocketCloseCode?) {
        self.closed.append((connection, code))
    }
}

/// Answers requests only when told to (`release`), to hold a response back. Loop-confined.
final class HoldingDelegate: TransportDelegate {
    var requests: [HTTPRequest] = []
    private var held: [HTTPRequest] = []

    func transport(_ transport: any Transport, didReceive request: HTTPRequest) {
        self.requests.append(request)
        self.held.append(request)
    }

    /// Answers every request held, echoing its path and body.
    func release(_ transport: any Transport) {
        for request in self.held {
            transport.respond(
                to: request.id, with: HTTPResponse(status: 200, headers: ["x-path": request.path], body: request.body))
        }
        self.held = []
    }

    func transport(_ transport: any Transport, shouldAccept upgrade: WebSocketUpgrade) -> Bool { false }
    func transport(_ transport: any Transport, didOpen connection: ConnectionID, upgrade: WebSocketUpgrade) {}
    func transport(_ transport: any Transport, didReceive message: WebSocketMessage, from connection: ConnectionID) {}
    func transport(_ transport: any Transport, didClose connection: ConnectionID, code: WebSocketCloseCode?) {}
}

/// The transport and its delegate, touched only from jobs on the loop.
final class TransportBox<Delegate: TransportDelegate>: @unchecked Sendable {
    var transport: SocketTransport!
    let delegate: Delegate

    init(_ delegate: Delegate) { self.delegate = delegate }
}

/// Runs `body` with an echo transport on port 0, then shuts down and checks a clean loop close.
func withEchoTransport(
    _ configuration: TransportConfiguration = TransportConfiguration(port: 0, subprotocols: ["echo.v1"]),
    _ body: (EventLoop, TransportBox<EchoDelegate>) async throws -> Void
) async throws {
    try await withTransport(configuration, TransportBox(EchoDelegate()), body)
}

/// Runs `body` with a transport configured so and `box`'s delegate, then shuts down and checks
/// a clean loop close.
func withTransport<Delegate>(
    _ configuration: TransportConfiguration, _ box: TransportBox<Delegate>,
    _ body: (EventLoop, TransportBox<Delegate>) async throws -> Void
) async throws {
    try await withLiveTestLock {
        let termination = try await withLoop { [configuration] loop in
            try await loop.submit {
                box.transport = try SocketTransport(loop: loop, configuration: configuration, logger: makeTestLogger())
                box.transport.delegate = box.delegate
            }
            do { try await body(loop, box) } catch {
                _ = try? await loop.submit { box.transport.shutdown(gracePeriod: .zero) {} }
                throw error
            }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                loop.execute { box.transport.shutdown(gracePeriod: .seconds(2)) { continuation.resume() } }
            }
        }
        #expect(termination.isClean)
    }
}

@Suite("Socket transport")
struct SocketTransportTests {
    @Test("requests carry method, decoded path, query, headers and body")
    func request() async throws {
        var configuration = TransportConfiguration(port: 0)
        configuration.extraHeaderNames = ["apns-topic"]
        try await withEchoTransport(configuration) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let response = try TestHTTP.request(
                port: port, "PUT", "/a%20b/c?x=1&y=two%20words&flag",
                headers: [("apns-topic", "com.example.app"), ("Authorization", "Bearer t")], body: Array("payload".utf8)
            )
            #expect(response.status == 200)
            #expect(response.text == "payload")
            #expect(response.headers["x-path"] == "/a b/c")
            #expect(response.headers["x-query"] == "x=1&y=two words&flag=")
            let headers = try await loop.submit { box.delegate.requests.last!.headers }
            #expect(headers["apns-topic"] == "com.example.app")
            #expect(headers["authorization"] == "Bearer t")
            #expect(headers["content-length"] == "7")
        }
    }

    @Test("pipelined HTTP/1.1 requests are answered in order; one with a body behind an earlier request closes its connection after the earlier replies (lws 4.1 looped on it for ever, the whole server stuck); nothing but the bodies sent reaches the delegate")
    func pipelining() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let head = { (method: String, path: String) in "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n" }
            let put = { (path: String) in head("PUT", path) + "Content-Length: 2\r\n\r\n{}" }
            let get = { (path: String) in head("GET", path) + "\r\n" }
            let post = { (path: String) in head("POST", path) + "Content-Type: application/json\r\nContent-Length: 7\r\n\r\n[1,2,3]" }

            let inOrder = try TestHTTPConnection(port: port)
            try inOrder.sendRaw(put("/a") + get("/b") + get("/c"))
            for (path, body) in [("/a", "{}"), ("/b", ""), ("/c", "")] {
                let response = try inOrder.readResponse()
                #expect(response.status == 200 && response.headers["x-path"] == path && response.text == body)
            }
            for pipelined in [get("/d") + put("/e"), put("/d") + put("/e"), post("/d") + post("/e"), put("/d") + "\r\n" + post("/e")] {
                let connection = try TestHTTPConnection(port: port)
                try connection.sendRaw(pipelined)
                #expect(try connection.readResponse().headers["x-path"] == "/d", "\(pipelined)")
                #expect(try connection.isClosedByServer(), "\(pipelined)")
            }
            #expect(try TestHTTP.request(port: port, "GET", "/f").status == 200, "the server goes on")
            let seen = try await loop.submit { box.delegate.requests.map { ($0.path, String(decoding: $0.body, as: UTF8.self)) } }
            #expect(!seen.contains { $0.0 == "/e" }, "\(seen)")
            #expect(seen.allSatisfy { ["", "{}", "[1,2,3]"].contains($0.1) }, "\(seen)")
        }
    }

    @Test("a request pipelined behind one still unanswered waits for it, its head arriving in two parts, and gets its own body")
    func pipeliningBehindAHeldResponse() async throws {
        try await withTransport(TransportConfiguration(port: 0), TransportBox(HoldingDelegate())) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let connection = try TestHTTPConnection(port: port)
            try connection.sendRaw("GET /d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nPUT /e HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            try await waitOnLoop(loop, timeout: .seconds(5), "/d has arrived") { box.delegate.requests.count == 1 }
            try connection.sendRaw("Content-Length: 2\r\n\r\n{}")
            try await loop.submit { box.delegate.release(box.transport) }
            #expect(try connection.readResponse().headers["x-path"] == "/d")
            try await waitOnLoop(loop, timeout: .seconds(5), "/e has arrived") { box.delegate.requests.count == 2 }
            try await loop.submit { box.delegate.release(box.transport) }
            let second = try connection.readResponse()
            #expect(second.headers["x-path"] == "/e" && second.text == "{}")
            let seen = try await loop.submit { box.delegate.requests.map { ($0.path, String(decoding: $0.body, as: UTF8.self)) } }
            #expect(seen.map(\.0) == ["/d", "/e"] && seen.map(\.1) == ["", "{}"])

            let bodyFirst = try TestHTTPConnection(port: port)
            try bodyFirst.sendRaw(
                "PUT /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}GET /y HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try await waitOnLoop(loop, timeout: .seconds(5), "/x has arrived") { box.delegate.requests.count == 3 }
            try await loop.submit { box.delegate.release(box.transport) }
            #expect(try bodyFirst.readResponse().headers["x-path"] == "/x")
            try await waitOnLoop(loop, timeout: .seconds(5), "/y has arrived") { box.delegate.requests.count == 4 }
            try await loop.submit { box.delegate.release(box.transport) }
            #expect(try bodyFirst.readResponse().headers["x-path"] == "/y")
        }
    }

    @Test("CONNECT and an h2c upgrade are hung up at once (lws 4.1 made the one a raw socket it read for ever, the other its own HTTP/2); the connection is counted out")
    func connectAndH2CAreRefused() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            for request in [
                "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
                "GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
                    + "HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
            ] {
                let connection = try TestHTTPConnection(port: port)
                try connection.sendRaw(request)
                #expect(try connection.isClosedByServer(), "\(request)")
            }
            try await waitOnLoop(loop, timeout: .seconds(5), "both are counted out") { box.transport.statistics.openConnections == 0 }
            #expect(try await loop.submit { box.delegate.requests.isEmpty })
            #expect(try TestHTTP.request(port: port, "GET", "/b").status == 200)
        }
    }

    @Test("a message larger than the write chunk goes out as fragments and arrives whole")
    func outboundFragments() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, path: "/echo", subprotocols: ["echo.v1"])
            #expect(client.subprotocol == "echo.v1")
            try client.send(text: "big:200000")
            var frames: [TestWebSocketClient.Frame] = []
            repeat { frames.append(try client.readFrame()) } while !frames.last!.fin
            #expect(frames.count == 4)
            #expect(frames.first?.opcode == TestWebSocketClient.Frame.binary)
            #expect(frames.dropFirst().allSatisfy { $0.opcode == TestWebSocketClient.Frame.continuation })
            #expect(frames.reduce(0) { $0 + $1.payload.count } == 200_000)
        }
    }

    @Test("a reader that stops reading fills its queue to the cap, then sends are refused")
    func outboundCap() async throws {
        var configuration = TransportConfiguration(port: 0)
        configuration.outboundCapBytes = 256 * 1024
        try await withEchoTransport(configuration) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try client.send(text: "ready")
            _ = try client.readFrame()
            let (results, queued, dropped) = try await loop.submit {
                let id = box.delegate.opened[0]
                var results: [SendResult] = []
                for _ in 0..<2000 {
                    results.append(box.transport.send(.binary(Array(repeating: 1, count: 32 * 1024)), to: id))
                    if results.last == .overCap { break }
                }
                let queued = box.transport.queuedBytes(of: id)
                return (results, queued, box.transport.discardQueued(of: id))
            }
            #expect(results.last == .overCap)
            #expect(queued <= 256 * 1024)
            #expect(dropped > 0)
            let after = try await loop.submit { box.transport.queuedBytes(of: box.delegate.opened[0]) }
            #expect(after <= 32 * 1024)
            client.drop()
        }
    }

    @Test("close sends the code after the queued messages and reports it")
    func serverClose() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try client.send(text: "hello")
            _ = try client.readFrame()
            try await loop.submit {
                let id = box.delegate.opened[0]
                box.transport.send(.text(Array("last".utf8)), to: id)
                box.transport.close(id, code: .policyViolation, reason: "bye")
                #expect(box.transport.send(.text([1]), to: id) == .notOpen)
            }
            #expect(try client.readText() == "last")
            let frame = try client.readFrame()
            #expect(frame.closeCode == 1008)
            #expect(String(decoding: frame.payload.dropFirst(2), as: UTF8.self) == "bye")
            try client.sendClose(code: 1008)
            #expect(try client.connection.socket.read().isEmpty)
        }
    }

    @Test("a client's close code is reported")
    func peerClose() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try client.sendClose(code: 4321, reason: "done")
            #expect(try client.readClose(reply: false) == 4321)
            #expect(try client.connection.socket.read().isEmpty)
            let closed = try await loop.submit { box.delegate.closed.map { $0.1 } }
            #expect(closed == [WebSocketCloseCode(4321)])
        }
    }

    @Test("refused upgrades, unknown subprotocols and invalid UTF-8 text")
    func refusals() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            #expect(throws: TestClientError.self) {
                _ = try TestWebSocketClient.connect(port: port, path: "/refuse", subprotocols: [])
            }
            #expect(throws: TestClientError.self) {
                _ = try TestWebSocketClient.connect(port: port, subprotocols: ["nope"])
            }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try client.send(opcode: TestWebSocketClient.Frame.text, payload: [0xC3, 0x28])
            #expect(try client.readClose() == 1007)
        }
    }

    @Test("binding a port in use fails with bindFailed, and the loop still closes cleanly")
    func bindFailure() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let termination = try await withLoop { other in
                await #expect(throws: TransportError.bindFailed) {
                    try await other.submit {
                        _ = try SocketTransport(
                            loop: other, configuration: TransportConfiguration(port: port), logger: makeTestLogger())
                    }
                }
            }
            #expect(termination.isClean)
        }
    }

    @Test("statistics count connections and payload bytes")
    func statistics() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            _ = try TestHTTP.request(port: port, "POST", "/x", body: Array(repeating: 0, count: 100))
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [])
            try client.send(text: "0123456789")
            _ = try client.readFrame()
            let statistics = try await loop.submit { box.transport.statistics }
            #expect(statistics.connectionsAccepted >= 2)
            #expect(statistics.bytesReceived == 110)
            #expect(statistics.bytesSent == 110)
            #expect(statistics.openWebSockets == 1)
        }
    }
}
