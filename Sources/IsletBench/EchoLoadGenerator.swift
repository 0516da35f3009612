import IsletServer
import IsletTransport
import Logging

/// Sends messages to a server's `/v1/echo` (`islet serve --conformance-echo`) over
/// libwebsockets client connections on their own event loop, optionally offering
/// permessage-deflate, and waits for every echo: the load generator of
/// `islet bench compression`.
final class EchoLoadGenerator: Sendable {
    /// What `run` achieved.
    struct Report: Sendable {
        var opened = 0
        var failed = 0
        var sent = 0
        var echoed = 0
        /// Echoes whose bytes differ from what was sent.
        var mismatched = 0
        var firstFailure: String?
    }

    private let loop: EventLoop
    private let state: State

    private init(loop: EventLoop, state: State) {
        self.loop = loop
        self.state = state
    }

    /// Starts the generator's loop and client context.
    static func start(compression: Bool, logger: Logger) async throws -> EchoLoadGenerator {
        let state = State()
        let loop = try await state.startLoop(name: "islet-echo-load", compression: compression, logger: logger)
        return EchoLoadGenerator(loop: loop, state: state)
    }

    /// Opens `connections` to `ws://host:port/v1/echo` (once; later calls reuse them), then sends
    /// `messages` text messages, cycling through `payloads`, spread over the connections, each
    /// connection keeping at most `window` unanswered, and returns once all are echoed (or
    /// `timeout` passed). Every echo is compared with what was sent.
    func run(
        host: String, port: Int, connections: Int, messages: Int, payloads: [[UInt8]], window: Int = 8,
        timeout: Duration = .seconds(120)
    ) async throws -> Report {
        precondition(!payloads.isEmpty, "no payload to send")
        let state = self.state
        let loop = self.loop
        return try await withCheckedThrowingContinuation { continuation in
            let accepted = loop.execute {
                state.report.sent = 0
                state.report.echoed = 0
                state.report.mismatched = 0
                state.payloads = payloads
                state.next = 0
                state.expected = [:]
                state.window = window
                state.remaining = messages
                state.inFlight = [:]
                state.done = { continuation.resume(returning: state.report) }
                state.timer = loop.scheduleTimer(after: timeout) {
                    state.report.firstFailure = state.report.firstFailure ?? "timed out"
                    state.finish()
                }
                if state.open.isEmpty {
                    for _ in 0..<connections {
                        if state.pool?.connect(host: host, port: port, path: "/v1/echo", subprotocol: nil) == nil {
                            state.report.failed += 1
                        }
                    }
                    state.connectionsWanted = connections
                } else {
                    for connection in state.open { state.fill(connection) }
                }
            }
            if !accepted { continuation.resume(throwing: TransportError.loopStopped) }
        }
    }

    /// Closes every connection, destroys the client context and stops the loop. Returns whether
    /// the loop closed cleanly.
    func stop() async -> Bool {
        await self.state.stop(self.loop)
    }

    /// Loop-confined counters and pool, reachable only from jobs on the generator's loop.
    private final class State: LoadGeneratorState, @unchecked Sendable {
        var pool: WebSocketClientPool?
        var report = Report()
        var payloads: [[UInt8]] = []
        var next = 0
        var window = 8
        var remaining = 0
        var connectionsWanted = 0
        /// Per connection, the indexes of the payloads sent and not yet echoed, in order.
        var expected: [ConnectionID: [Int]] = [:]
        var open: [ConnectionID] = []
        var inFlight: [ConnectionID: Int] = [:]
        var done: (() -> Void)?
        var timer: LoopTimer?

        func fill(_ connection: ConnectionID) {
            while self.remaining > 0 && self.inFlight[connection, default: 0] < self.window {
                let index = self.next % self.payloads.count
                guard self.pool?.send(.text(self.payloads[index]), to: connection) == .queued else { return }
                self.next += 1
                self.expected[connection, default: []].append(index)
                self.remaining -= 1
                self.report.sent += 1
                self.inFlight[connection, default: 0] += 1
            }
            self.finishIfDone()
        }

        func finishIfDone() {
            if self.remaining == 0 && self.inFlight.values.allSatisfy({ $0 == 0 }) { self.finish() }
        }

        func finish() {
            guard let done = self.done else { return }
            self.done = nil
            self.timer?.cancel()
            done()
        }

        func client(_ pool: WebSocketClientPool, didOpen connection: ConnectionID) {
            self.report.opened += 1
            self.open.append(connection)
            self.fill(connection)
        }

        func client(_ pool: WebSocketClientPool, didReceive message: WebSocketMessage, from connection: ConnectionID) {
            self.report.echoed += 1
            if let index = self.expected[connection]?.first {
                self.expected[connection]?.removeFirst()
                if message.bytes != self.payloads[index] { self.report.mismatched += 1 }
            } else {
                self.report.mismatched += 1
            }
            self.inFlight[connection, default: 1] -= 1
            self.fill(connection)
        }

        func client(_ pool: WebSocketClientPool, didFail connection: ConnectionID, reason: String) {
            self.report.failed += 1
            self.report.firstFailure = self.report.firstFailure ?? reason
            if self.report.failed >= self.connectionsWanted { self.finish() }
        }

        func client(_ pool: WebSocketClientPool, didClose connection: ConnectionID, code: WebSocketCloseCode?) {
            self.open.removeAll { $0 == connection }
            self.inFlight[connection] = nil
            self.report.firstFailure = self.report.firstFailure ?? "closed with \(code.map(\.description) ?? "no code")"
            self.finishIfDone()
        }
    }
}
