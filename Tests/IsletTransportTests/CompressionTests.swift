import IsletTestSupport
import IsletTransport
import Testing

/// Collects what a compressing client pool receives. Loop-confined (the client loop).
final class CollectingClient: WebSocketClientDelegate, @unchecked Sendable {
    var opened: [ConnectionID] = []
    var received: [ConnectionID: [WebSocketMessage]] = [:]
    var closed: [ConnectionID: WebSocketCloseCode?] = [:]
    var failures: [String] = []
    var pool: WebSocketClientPool?
    private var waiter: (condition: () -> Bool, resume: () -> Void)?

    /// Calls `resume` on the loop once `condition` holds (checked now and after every event).
    func whenever(_ condition: @escaping () -> Bool, resume: @escaping () -> Void) {
        self.waiter = (condition, resume)
        self.check()
    }

    private func check() {
        guard let waiter, waiter.condition() || !self.failures.isEmpty || !self.closed.isEmpty else { return }
        self.waiter = nil
        waiter.resume()
    }

    func client(_ pool: WebSocketClientPool, didOpen connection: ConnectionID) {
        self.opened.append(connection)
        self.check()
    }
    func client(_ pool: WebSocketClientPool, didReceive message: WebSocketMessage, from connection: ConnectionID) {
        self.received[connection, default: []].append(message)
        self.check()
    }
    func client(_ pool: WebSocketClientPool, didFail connection: ConnectionID, reason: String) {
        self.failures.append(reason)
        self.check()
    }
    func client(_ pool: WebSocketClientPool, didClose connection: ConnectionID, code: WebSocketCloseCode?) {
        self.closed[connection] = code
        self.check()
    }
}

/// Waits, without polling, until `condition` holds for `client` on `loop` (or a connection
/// failed or closed, or `timeout` passed).
func wait(
    on loop: EventLoop, for client: CollectingClient, timeout: Duration = .seconds(30),
    until condition: @escaping @Sendable () -> Bool
) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        loop.execute {
            var resumed = false
            let finish = {
                guard !resumed else { return }
                resumed = true
                continuation.resume()
            }
            let timer = loop.scheduleTimer(after: timeout) { finish() }
            client.whenever(condition) {
                timer.cancel()
                finish()
            }
        }
    }
}

/// permessage-deflate between Islet's server transport and its client pool, both compressing:
/// lws's inflate path is wrapped (UnsafeLWSExtensions.swift), and these round trips exercise it
/// with messages that take many inflate steps, on connections that interleave.
@Suite("permessage-deflate round trips")
struct CompressionTests {
    /// Text of `count` bytes that compresses like JSON: repeated keys, varying values.
    static func jsonLike(_ count: Int, seed: Int) -> [UInt8] {
        var text = "["
        var index = seed
        while text.utf8.count < count {
            text += #"{"id":"a\#(index * 7919 % 10007)","eta":"08:\#(index % 60)","progress":\#(index % 100)},"#
            index += 1
        }
        return Array(text.utf8.prefix(count))
    }

    /// Bytes that hardly compress (a linear congruential sequence).
    static func noise(_ count: Int, seed: Int) -> [UInt8] {
        var state = UInt32(truncatingIfNeeded: seed &* 2_654_435_761 &+ 1)
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    @Test("messages of 0 B to 64 KiB, compressible or not, on three interleaved connections, come back intact")
    func roundTrips() async throws {
        let configuration = TransportConfiguration(port: 0, webSocketCompression: true)
        try await withEchoTransport(configuration) { loop, box in
            let port = try await loop.submit { box.transport.boundPort }
            let sizes = [0, 1, 100, 1023, 1024, 1025, 3000, 4096, 5000, 16_384, 40_000, 65_536]
            var messages: [WebSocketMessage] = []
            for (index, size) in sizes.enumerated() {
                messages.append(.text(Self.jsonLike(size, seed: index)))
                messages.append(.binary(Self.noise(size, seed: index)))
            }
            let client = CollectingClient()
            let sent = messages
            let termination = try await withLoop { clientLoop in
                let connections = try await clientLoop.submit {
                    let pool = try WebSocketClientPool(loop: clientLoop, logger: makeTestLogger(), compression: true)
                    pool.delegate = client
                    client.pool = pool
                    return (0..<3).compactMap { _ in
                        pool.connect(host: "127.0.0.1", port: port, path: "/echo", subprotocol: nil)
                    }
                }
                #expect(connections.count == 3)
                await wait(on: clientLoop, for: client) { client.opened.count == 3 }
                try await clientLoop.submit {
                    for message in sent {
                        for connection in client.opened { client.pool?.send(message, to: connection) }
                    }
                }
                await wait(on: clientLoop, for: client) {
                    client.received.values.reduce(0) { $0 + $1.count } == sent.count * 3
                }
                let (received, closed, failures) = try await clientLoop.submit {
                    (client.received, client.closed, client.failures)
                }
                #expect(closed.isEmpty)
                #expect(failures.isEmpty)
                for connection in connections {
                    let echoes = received[connection, default: []]
                    #expect(echoes.count == sent.count)
                    let intact = zip(echoes, sent).filter { $0.0 == $0.1 }.count
                    #expect(intact == sent.count, "connection \(connection): \(intact) of \(sent.count) intact")
                }
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    clientLoop.execute {
                        client.pool?.shutdown(gracePeriod: .seconds(2)) { continuation.resume() }
                    }
                }
            }
            #expect(termination.isClean)
            let statistics = try await loop.submit { box.transport.statistics }
            #expect(statistics.largestReassemblyBytes <= 64 * 1024)
        }
    }
}
