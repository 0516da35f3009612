import IsletTestSupport
import Testing

@testable import IsletTransport

/// Echo clients, each known open once its first message came back; with `receiveBufferBytes`,
/// a small kernel receive buffer (a socket that fills soon) and a longer timeout to drain it.
private func readyClients(port: Int, count: Int = 2, receiveBufferBytes: Int? = nil) throws -> [TestWebSocketClient] {
    try (0..<count).map { _ in
        let client = try TestWebSocketClient.connect(
            port: port, subprotocols: [], timeout: .seconds(receiveBufferBytes == nil ? 5 : 10),
            receiveBufferBytes: receiveBufferBytes)
        try client.send(text: "ready")
        _ = try client.readFrame()
        return client
    }
}

/// A transport configuration whose broadcasts wait `milliseconds` (the write delay).
private func withWriteDelay(milliseconds: Int) -> TransportConfiguration {
    var configuration = TransportConfiguration(port: 0)
    configuration.webSocketWriteDelay = .milliseconds(milliseconds)
    return configuration
}

@Suite("Broadcast and write coalescing")
struct WriteCoalescingTests {
    @Test("server frames: 2-, 4- and 10-byte headers, FIN set, unmasked, payload after")
    func framing() {
        for (size, header) in [(0, 2), (125, 2), (126, 4), (65535, 4), (65536, 10)] {
            let payload = [UInt8](repeating: 0x61, count: size)
            let framed = WebSocketFraming.framed(.text(payload))
            #expect(WebSocketFraming.headerBytes(payload: size) == header)
            #expect(framed.count == header + size)
            #expect(framed[0] == 0x81)
            #expect(framed[1] & 0x80 == 0)
            let length: Int
            switch header {
            case 2: length = Int(framed[1])
            case 4: length = Int(framed[2]) << 8 | Int(framed[3])
            default: length = framed[2..<10].reduce(0) { $0 << 8 | Int($1) }
            }
            #expect(length == size)
            #expect(Array(framed[header...]) == payload)
        }
        #expect(WebSocketFraming.framed(.binary([1, 2]))[0] == 0x82)
    }

    /// Broadcasts three messages to two ready clients in one loop job, checks that each reads
    /// them in order, and returns the transport's statistics before, right after the job, and
    /// at the end.
    private static func broadcastThree(
        _ configuration: TransportConfiguration
    ) async throws -> (before: TransportStatistics, held: TransportStatistics, after: TransportStatistics) {
        var figures: (TransportStatistics, TransportStatistics, TransportStatistics)!
        try await withEchoTransport(configuration) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let clients = try readyClients(port: port)
            let (before, held) = try await loop.submit {
                let before = box.transport.statistics
                let ids = Set(box.delegate.opened)
                for text in ["one", "two", "three"] {
                    let result = box.transport.broadcast(.text(Array(text.utf8)), to: ids)
                    #expect(result.queued == 2 && result.overCap.isEmpty)
                }
                return (before, box.transport.statistics)
            }
            for client in clients { #expect(try (0..<3).map { _ in try client.readText() } == ["one", "two", "three"]) }
            figures = (before, held, try await loop.submit { box.transport.statistics })
        }
        return figures
    }

    @Test("a broadcast reaches every connection in order, one write per message without a delay")
    func broadcastAtOnce() async throws {
        let (before, _, after) = try await Self.broadcastThree(TransportConfiguration(port: 0))
        #expect(after.webSocketMessagesSent - before.webSocketMessagesSent == 6)
        #expect(after.webSocketWrites - before.webSocketWrites == 6)
    }

    @Test("a broadcast to more connections than the fan-out looks ahead (states and lws lines prefetched 8 and 4 places on) reaches each, in order, one write per message")
    func broadcastToMany() async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let clients = try readyClients(port: port, count: 13)
            let (results, writes) = try await loop.submit {
                let before = box.transport.statistics.webSocketWrites
                let ids = Set(box.delegate.opened)
                let results = ["one", "two", "three"].map { box.transport.broadcast(.text(Array($0.utf8)), to: ids) }
                return (results, box.transport.statistics.webSocketWrites - before)
            }
            #expect(results.allSatisfy { $0.queued == 13 && $0.overCap.isEmpty })
            #expect(writes == 39)
            for client in clients { #expect(try (0..<3).map { _ in try client.readText() } == ["one", "two", "three"]) }
        }
    }

    /// An echo transport and one ready client whose socket fills soon (a 4 KiB receive buffer).
    private static func withSmallSocketClient(
        _ body: (EventLoop, TransportBox<EchoDelegate>, TestWebSocketClient) async throws -> Void
    ) async throws {
        try await withEchoTransport { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            try await body(loop, box, try readyClients(port: port, count: 1, receiveBufferBytes: 4096)[0])
        }
    }

    @Test("a broadcast that fills the socket: what the socket refuses (part of a frame, or all of it) is finished by libwebsockets, later ones queue behind it, and each arrives whole and in order")
    func broadcastPastTheSocket() async throws {
        try await Self.withSmallSocketClient { loop, box, client in
            // 4,000-byte messages (written past lws, the fan-out's path) until the socket and
            // the queue are full; the socket takes a part of one of them.
            let message = Self.numberedMessage
            let (accepted, lwsHeldPart) = try await loop.submit {
                let id = box.delegate.opened[0]
                var accepted = 0
                var lwsHeldPart = false
                while accepted < 5000 {
                    let result = box.transport.broadcast(.binary(message(accepted)), to: [id])
                    if !result.overCap.isEmpty { break }
                    accepted += 1
                    lwsHeldPart = lwsHeldPart || box.transport.sockets[id]!.connection.hasBufferedOutput
                }
                return (accepted, lwsHeldPart)
            }
            #expect(lwsHeldPart, "the socket never refused a frame's bytes")
            #expect(accepted > 10)
            for number in 0..<accepted {
                let frame = try client.readFrame()
                #expect(frame.opcode == TestWebSocketClient.Frame.binary)
                guard frame.payload == message(number) else {
                    Issue.record("message \(number) of \(accepted) arrived as \(frame.payload.count) bytes, not as sent")
                    return
                }
            }
        }
    }

    @Test("a pong libwebsockets owes while the socket is full, and the broadcasts around it, arrive as whole frames")
    func pongAmongBroadcasts() async throws {
        try await Self.withSmallSocketClient { loop, box, client in
            let message = Self.numberedMessage
            func broadcast(from first: Int, count: Int) async throws -> Int {
                try await loop.submit {
                    let id = box.delegate.opened[0]
                    var sent = 0
                    while sent < count, box.transport.broadcast(.binary(message(first + sent)), to: [id]).overCap.isEmpty {
                        sent += 1
                    }
                    return sent
                }
            }
            // Fill the socket, have lws owe a pong (the echoed marker shows lws read the ping
            // before it), then broadcast more: the pong goes between two whole frames.
            let first = try await broadcast(from: 0, count: 40)
            let before = try await loop.submit { box.transport.statistics.bytesReceived }
            try client.send(opcode: TestWebSocketClient.Frame.ping, payload: Array("p".utf8))
            try client.send(text: "marker")
            try await waitOnLoop(loop, timeout: .seconds(10), "the marker after the ping arrives") {
                box.transport.statistics.bytesReceived >= before + 6
            }
            let second = try await broadcast(from: first, count: 40)
            var numbers: [Int] = []
            var (pongs, markers) = (0, 0)
            while numbers.count < first + second || pongs == 0 || markers == 0 {
                let frame = try client.readFrame()
                switch frame.opcode {
                case TestWebSocketClient.Frame.pong: pongs += 1
                case TestWebSocketClient.Frame.text: markers += frame.payload == Array("marker".utf8) ? 1 : 100
                default:
                    guard frame.payload == message(numbers.count) else {
                        Issue.record("frame \(numbers.count) of \(first + second) arrived as \(frame.payload.count) bytes, not as sent")
                        return
                    }
                    numbers.append(numbers.count)
                }
            }
            #expect(pongs == 1 && markers == 1)
            #expect(first > 0 && second > 0)
        }
    }

    /// 4,000 bytes: the number in five digits, then one letter repeated.
    @Sendable private static func numberedMessage(_ number: Int) -> [UInt8] {
        let digits = String(number)
        return Array((String(repeating: "0", count: 5 - digits.count) + digits).utf8)
            + [UInt8](repeating: UInt8(0x61 + number % 26), count: 3995)
    }

    @Test("with a write delay, a connection's messages within it leave in one write, in order")
    func coalesced() async throws {
        let configuration = withWriteDelay(milliseconds: 200)
        let (before, held, after) = try await Self.broadcastThree(configuration)
        #expect(held.webSocketWrites == before.webSocketWrites)
        #expect(after.webSocketMessagesSent - before.webSocketMessagesSent == 6)
        #expect(after.webSocketWrites - before.webSocketWrites == 2)
    }

    @Test("with a write delay, a broadcast past the fan-out's look-ahead holds each connection once; one that closes meanwhile is passed over at the release; a broadcast after it holds anew")
    func coalescedToMany() async throws {
        let configuration = withWriteDelay(milliseconds: 1500)
        try await withEchoTransport(configuration) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            var clients = try readyClients(port: port, count: 13)
            let (ids, before) = try await loop.submit {
                let ids = Set(box.delegate.opened)
                let before = box.transport.statistics
                #expect(box.transport.broadcast(.text(Array("one".utf8)), to: ids).queued == 13)
                return (ids, before)
            }
            let leaving = clients.removeLast()
            try leaving.sendClose()
            #expect(try leaving.readClose(reply: false) == 1000)
            try await waitOnLoop(loop, timeout: .seconds(5), "the server saw the close") { !box.delegate.closed.isEmpty }
            let held = try await loop.submit {
                #expect(box.transport.broadcast(.text(Array("two".utf8)), to: ids).queued == 12)
                return box.transport.statistics
            }
            #expect(held.webSocketWrites == before.webSocketWrites)
            for client in clients { #expect(try [client.readText(), client.readText()] == ["one", "two"]) }
            let released = try await loop.submit {
                let released = box.transport.statistics
                #expect(box.transport.broadcast(.text(Array("three".utf8)), to: ids).queued == 12)
                return released
            }
            #expect(released.webSocketWrites - before.webSocketWrites == 12)
            #expect(released.webSocketMessagesSent - before.webSocketMessagesSent == 24)
            for client in clients { #expect(try client.readText() == "three") }
            let after = try await loop.submit { box.transport.statistics }
            #expect(after.webSocketWrites - released.webSocketWrites == 12)
        }
    }

    @Test("a reply is not delayed: it takes the held messages along, in order")
    func replyFlushes() async throws {
        let configuration = withWriteDelay(milliseconds: 1000)
        try await withEchoTransport(configuration) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let client = try TestWebSocketClient.connect(port: port, subprotocols: [], timeout: .milliseconds(900))
            try client.send(text: "ready")
            _ = try client.readFrame()
            try await loop.submit {
                let id = box.delegate.opened[0]
                box.transport.broadcast(.text(Array("patch".utf8)), to: [id])
                box.transport.send(.text(Array("reply".utf8)), to: id)
            }
            #expect(try client.readText() == "patch")
            #expect(try client.readText() == "reply")
        }
    }
}
