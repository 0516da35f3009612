import Foundation
import IsletTestSupport
import Testing

@testable import IsletTransport

/// Answers HTTP/2 requests for the listener tests: `/big?bytes=N` with N bytes, `/later` not until
/// the test says so, a refused body with 413, anything else with its own body. Loop-confined.
final class HTTP2TestDelegate: TransportDelegate {
    var requests: [HTTPRequest] = []
    var held: [RequestID] = []

    func transport(_ transport: any Transport, didReceive request: HTTPRequest) {
        self.requests.append(request)
        if request.bodyProblem != nil { return transport.respond(to: request.id, with: HTTPResponse(status: 413)) }
        switch request.path {
        case "/big":
            let size = request.query["bytes"].flatMap { Int($0) } ?? 0
            let body = [UInt8](repeating: 0x62, count: size)
            transport.respond(to: request.id, with: HTTPResponse(status: 200, body: body))
        case "/later": self.held.append(request.id)
        default: transport.respond(to: request.id, with: HTTPResponse(status: 200, body: request.body))
        }
    }

    func transport(_ transport: any Transport, shouldAccept upgrade: WebSocketUpgrade) -> Bool { false }
    func transport(_ transport: any Transport, didOpen connection: ConnectionID, upgrade: WebSocketUpgrade) {}
    func transport(_ transport: any Transport, didReceive message: WebSocketMessage, from connection: ConnectionID) {}
    func transport(_ transport: any Transport, didClose connection: ConnectionID, code: WebSocketCloseCode?) {}
}

typealias HTTP2Box = TransportBox<HTTP2TestDelegate>

extension TransportBox where Delegate == HTTP2TestDelegate {
    var securePort: Int { self.transport.securePort! }
    var listener: HTTP2Listener { self.transport.secure! }
}

/// Runs `body` with an HTTP/2 listener (a self-signed certificate) on port 0, then shuts down
/// and checks a clean loop close.
func withHTTP2Transport(
    configure: (inout TransportConfiguration) -> Void = { _ in },
    _ body: (EventLoop, HTTP2Box) async throws -> Void
) async throws {
    let (cert, key) = try TestCertificate.files()
    var configuration = TransportConfiguration(port: 0)
    configuration.tls = TransportConfiguration.TLS(certificatePath: cert, keyPath: key, port: 0)
    configure(&configuration)
    try await withTransport(configuration, TransportBox(HTTP2TestDelegate()), body)
}

/// Runs `scripts/h2_limits_client.py command` to completion and returns its JSON line.
func h2Client(_ command: String, port: Int, _ arguments: [String] = []) throws -> [String: Any] {
    let (status, output) = try runProcess(
        PythonTools.python,
        [PackagePaths.root + "/scripts/h2_limits_client.py", command, "--port", String(port)] + arguments)
    guard status == 0, let line = output.split(separator: "\n").last,
        let json = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    else { throw TestClientError("h2_limits_client.py \(command) exited \(status): \(output)") }
    return json
}

/// Resumes once `condition` holds on the loop, checked at every loop-timer tick (10 ms), or
/// throws naming `what` once `timeout` of loop time has passed.
func waitOnLoop(
    _ loop: EventLoop, timeout: Duration, _ what: String, _ condition: @escaping @Sendable () -> Bool
) async throws {
    final class Poll: @unchecked Sendable { var timer: LoopTimer? }
    let poll = Poll()
    let limit = UInt64(timeout / .milliseconds(1))
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        loop.execute {
            let start = loop.nowMilliseconds
            poll.timer = loop.scheduleTimer(after: .zero, repeating: .milliseconds(10)) {
                if condition() {
                    poll.timer?.cancel()
                    continuation.resume()
                } else if loop.nowMilliseconds - start >= limit {
                    poll.timer?.cancel()
                    continuation.resume(throwing: TestClientError("timed out after \(timeout) waiting until \(what)"))
                }
            }
        }
    }
}

private let needsPython = Testing.ConditionTrait.enabled(
    if: PythonTools.available || PythonTools.required,
    "needs .venv with h2: run scripts/bootstrap --test (scripts/test does)")

@Suite("HTTP/2 listener: nghttp2 as documented, limits, backpressure and timeouts")
struct HTTP2ListenerTests {
    @Test("HPACK bomb: a header list decoding to ~48 MB is answered 431 unstored, and the connection goes on", needsPython)
    func hpackBomb() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport { loop, box in
            let port = try await loop.submit { box.securePort }
            let result = try h2Client("hpack-bomb", port: port)
            let bomb = try #require(result["bomb"] as? [String: Any], "\(result)")
            #expect(bomb["status"] as? Int == 431)
            #expect(bomb["body"] as? Int ?? 0 > 0)
            let after = try #require(result["after"] as? [String: Any], "\(result)")
            #expect(after["status"] as? Int == 200)
            let paths = try await loop.submit { box.delegate.requests.map(\.path) }
            #expect(paths == ["/after"])
        }
    }

    @Test("header field flood: 200 small fields are over the 100-field limit, answered 431", needsPython)
    func manyHeaders() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport { loop, box in
            let port = try await loop.submit { box.securePort }
            let result = try h2Client("many-headers", port: port)
            #expect((result["crowd"] as? [String: Any])?["status"] as? Int == 431, "\(result)")
            #expect((result["after"] as? [String: Any])?["status"] as? Int == 200, "\(result)")
        }
    }

    @Test(
        "a client ignoring SETTINGS_MAX_CONCURRENT_STREAMS before acknowledging it: the extra stream is refused (REFUSED_STREAM), the others go on",
        needsPython)
    func streamsBeforeAck() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport { loop, box in
            let port = try await loop.submit { box.securePort }
            let result = try h2Client("streams", port: port, ["--count", "101"])
            #expect((result["resets"] as? [String: Int])?["201"] == 7, "\(result)")  // REFUSED_STREAM
            #expect(result["goaway"] is NSNull, "\(result)")
            #expect(result["answered"] as? Int == 1, "\(result)")
        }
    }

    @Test(
        "a client ignoring SETTINGS_MAX_CONCURRENT_STREAMS it acknowledged: connection error (GOAWAY PROTOCOL_ERROR) and close",
        needsPython)
    func streamsAfterAck() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport(configure: { $0.tls?.maxConcurrentStreams = 10 }) { loop, box in
            let port = try await loop.submit { box.securePort }
            let result = try h2Client("streams", port: port, ["--count", "11", "--ack"])
            let goaway = try #require(result["goaway"] as? [String: Int], "\(result)")
            #expect(goaway["error"] == 1)  // PROTOCOL_ERROR
            #expect(goaway["last"] == 19)
            try await waitOnLoop(loop, timeout: .seconds(5), "the connection is closed") {
                box.transport.statistics.openHTTPConnections == 0
            }
        }
    }

    @Test("trailers end the request they follow: its body reaches the delegate, the trailers do not", needsPython)
    func trailers() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport { loop, box in
            let port = try await loop.submit { box.securePort }
            let result = try h2Client("trailers", port: port)
            let reply = try #require(result["reply"] as? [String: Any], "\(result)")
            #expect(reply["status"] as? Int == 200)
            #expect(reply["body"] as? Int == 7)
            let request = try await loop.submit { box.delegate.requests.map { ($0.body, $0.headers["x-checksum"]) } }
            #expect(request.count == 1)
            #expect(request.first?.0 == Array("payload".utf8))
            #expect(request.first?.1 == nil)
        }
    }

    @Test(
        "oversized bodies: over the limit by Content-Length or by DATA, 413 at once and RST_STREAM(NO_ERROR), nothing buffered",
        needsPython)
    func oversizedBody() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport(configure: { $0.maxRequestBodyBytes = 100_000 }) { loop, box in
            let port = try await loop.submit { box.securePort }
            let result = try h2Client("big-body", port: port, ["--limit", "100000"])
            #expect((result["announced"] as? [String: Any])?["status"] as? Int == 413, "\(result)")
            #expect(result["announcedReset"] as? Int == 0, "\(result)")
            #expect((result["unannounced"] as? [String: Any])?["status"] as? Int == 413, "\(result)")
            #expect(result["unannouncedReset"] as? Int == 0, "\(result)")
            let problems = try await loop.submit { box.delegate.requests.map { ($0.bodyProblem, $0.body.count) } }
            #expect(problems.count == 2)
            #expect(problems.allSatisfy { $0 == (.tooLarge(limit: 100_000), 0) })
        }
    }

    @Test("slowloris before TLS: a connection that never finishes its handshake is closed at the deadline")
    func handshakeTimeout() async throws {
        try await withHTTP2Transport(configure: { $0.tls?.handshakeTimeout = .milliseconds(300) }) { loop, box in
            let port = try await loop.submit { box.securePort }
            let silent = try TestSocket.connect(port: port)
            let dribbling = try TestSocket.connect(port: port)
            try dribbling.write([0x16, 0x03, 0x01])  // the start of a TLS record, never finished
            #expect(try silent.read(timeout: .seconds(5)) == [])
            #expect(try dribbling.read(timeout: .seconds(5)) == [])
            try await waitOnLoop(loop, timeout: .seconds(5), "both are closed") {
                box.transport.statistics.openHTTPConnections == 0
            }
        }
    }

    @Test("idle HTTP/2 connection: GOAWAY(NO_ERROR) after the idle timeout, then close", needsPython)
    func idleTimeout() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport(configure: { $0.tls?.idleTimeout = .milliseconds(300) }) { loop, box in
            let port = try await loop.submit { box.securePort }
            let result = try h2Client("idle", port: port)
            #expect(result["status"] as? Int == 200, "\(result)")
            #expect((result["goaway"] as? [String: Int])?["error"] == 0, "\(result)")
            #expect(result["closed"] as? Bool == true, "\(result)")
        }
    }

    @Test("slowloris over HTTP/2: a request left half-sent does not keep the connection open", needsPython)
    func halfSentRequest() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport(configure: { $0.tls?.idleTimeout = .milliseconds(300) }) { loop, box in
            let port = try await loop.submit { box.securePort }
            let result = try h2Client("idle", port: port, ["--half-request"])
            #expect((result["goaway"] as? [String: Int])?["error"] == 0, "\(result)")
            #expect(result["closed"] as? Bool == true, "\(result)")
            #expect(try await loop.submit { box.delegate.requests.isEmpty })
        }
    }

    @Test("a reply the application gives later, from the loop, is written; the idle deadline waits for it", needsPython)
    func replyLater() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport(configure: { $0.tls?.idleTimeout = .milliseconds(200) }) { loop, box in
            let port = try await loop.submit { box.securePort }
            let client = try ScriptProcess(
                PythonTools.python,
                [PackagePaths.root + "/scripts/h2_limits_client.py", "get", "--port", String(port), "--path", "/later"])
            try await waitOnLoop(loop, timeout: .seconds(10), "the request is held") { !box.delegate.held.isEmpty }
            // Held for three idle timeouts: the connection stays open while a reply is owed.
            let heldAt = try await loop.submit { loop.nowMilliseconds }
            try await waitOnLoop(loop, timeout: .seconds(5), "three idle timeouts have passed") {
                loop.nowMilliseconds - heldAt >= 600
            }
            let stillOpen = try await loop.submit {
                let open = box.transport.statistics.openHTTPConnections == 1
                let late = HTTPResponse(status: 202, body: Array("late".utf8))
                box.transport.respond(to: box.delegate.held[0], with: late)
                return open
            }
            #expect(stillOpen)
            let line = try client.readLine(timeout: .seconds(10))
            #expect(line.contains("\"status\": 202"), "\(line)")
            #expect(try client.finish() == 0)
        }
    }

    @Test(
        "many requests in one read, each answered at once by the delegate: replies are written after nghttp2 returns",
        needsPython)
    func answeredDuringReceive() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport { loop, box in
            let port = try await loop.submit { box.securePort }
            let result = try h2Client("get", port: port, ["--count", "50", "--path", "/big?bytes=70000"])
            let replies = try #require(result["replies"] as? [[String: Any]], "\(result)")
            #expect(replies.count == 50)
            #expect(replies.allSatisfy { $0["status"] as? Int == 200 && $0["body"] as? Int == 70000 })
        }
    }

    @Test(
        "a client that never reads: the socket queue stays under the cap, reading and request delivery stop, others are served",
        needsPython)
    func neverReads() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        let cap = 256 * 1024
        try await withHTTP2Transport(configure: {
            $0.outboundCapBytes = cap
            $0.tls?.idleTimeout = .zero
        }) { loop, box in
            let port = try await loop.submit { box.securePort }
            let greedy = try ScriptProcess(
                PythonTools.python,
                [
                    PackagePaths.root + "/scripts/h2_limits_client.py", "no-read", "--port", String(port), "--count",
                    "40", "--path", "/big?bytes=1048576", "--ping-every", "0.05",
                ])
            #expect(try greedy.readLine(timeout: .seconds(10)) == "sent")
            // Each PING is a turn where the server could queue more; once the kernel's buffers
            // are full, the socket's queue reaches the cap and the server stops reading.
            final class Seen: @unchecked Sendable { var mostQueued = 0, held = 0, delivered = 0 }
            let seen = Seen()
            try await waitOnLoop(loop, timeout: .seconds(20), "the connection stops reading") {
                guard let id = box.delegate.requests.first?.id.connection,
                    let connection = box.listener.connection(id), !connection.isReading
                else { return false }
                (seen.mostQueued, seen.held) = (connection.mostQueuedBytes, connection.heldReplyBytes)
                seen.delivered = box.delegate.requests.count
                return true
            }
            // One frame (16 KiB of DATA, with TLS framing) may go past the cap; the replies held
            // are at most the cap, that frame and the reply that crossed the cap.
            #expect(seen.mostQueued >= cap && seen.mostQueued <= cap + 20 * 1024)
            #expect(seen.held <= cap + 20 * 1024 + 1_048_576)
            #expect(seen.delivered < 40)
            let other = try h2Client("get", port: port, ["--count", "3", "--path", "/big?bytes=100000"])
            let replies = try #require(other["replies"] as? [[String: Any]], "\(other)")
            #expect(replies.allSatisfy { $0["status"] as? Int == 200 && $0["body"] as? Int == 100000 })
            #expect(try greedy.finish() == 0)
            try await waitOnLoop(loop, timeout: .seconds(5), "the greedy connection is closed") {
                box.transport.statistics.openHTTPConnections == 0
            }
        }
    }

    @Test("a client that never reads, with an idle timeout: closed as stalled", needsPython)
    func stalledIsClosed() async throws {
        try #require(PythonTools.available, "scripts/test requires \(PythonTools.python)")
        try await withHTTP2Transport(configure: {
            $0.outboundCapBytes = 256 * 1024
            $0.tls?.idleTimeout = .milliseconds(500)
        }) { loop, box in
            let port = try await loop.submit { box.securePort }
            let greedy = try ScriptProcess(
                PythonTools.python,
                [
                    PackagePaths.root + "/scripts/h2_limits_client.py", "no-read", "--port", String(port), "--count",
                    "40", "--path", "/big?bytes=1048576",
                ])
            #expect(try greedy.readLine(timeout: .seconds(10)) == "sent")
            try await waitOnLoop(loop, timeout: .seconds(20), "the stalled connection is closed") {
                !box.delegate.requests.isEmpty && box.transport.statistics.openHTTPConnections == 0
            }
            #expect(try greedy.finish() == 0)
        }
    }
}
