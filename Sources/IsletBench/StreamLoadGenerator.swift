import IsletServer
import IsletTransport
import Logging

/// Opens many `/v1/stream` connections from this process (libwebsockets client mode on its own
/// event loop) and counts what they receive: the load generator of `islet bench`.
final class StreamLoadGenerator: Sendable {
    /// What `openStreams` achieved.
    struct Report: Sendable {
        var opened = 0
        var failed = 0
        /// Connections whose first message (the `hello`) arrived.
        var greeted = 0
        var messagesReceived = 0
        var bytesReceived = 0
        var firstFailure: String?
    }

    private let loop: EventLoop
    private let state: State

    private init(loop: EventLoop, state: State) {
        self.loop = loop
        self.state = state
    }

    /// Starts the generator's loop and client context.
    static func start(logger: Logger) async throws -> StreamLoadGenerator {
        let state = State()
        let loop = try await state.startLoop(name: "islet-loadgen", logger: logger)
        return StreamLoadGenerator(loop: loop, state: state)
    }

    /// Opens `count` streams to `host:port`, at most `maxInFlight` handshakes at a time, and
    /// returns once each has received its hello or failed (or `timeout` passed).
    func openStreams(
        count: Int, host: String, port: Int, maxInFlight: Int = 200, timeout: Duration = .seconds(120)
    )
        async throws -> Report
    {
        let state = self.state
        let loop = self.loop
        return try await withCheckedThrowingContinuation { continuation in
            let accepted = loop.execute {
                state.target = (host, port)
                state.remaining = count
                state.maxInFlight = maxInFlight
                state.done = { continuation.resume(returning: state.report) }
                loop.scheduleTimer(after: timeout) { state.finish() }
                state.startMore()
            }
            if !accepted { continuation.resume(throwing: TransportError.loopStopped) }
        }
    }

    /// Counters so far.
    func report() async throws -> Report {
        let state = self.state
        return try await self.loop.submit { state.report }
    }

    /// Closes every stream, destroys the client context and stops the loop. Returns whether
    /// the loop closed cleanly.
    func stop() async -> Bool {
        await self.state.stop(self.loop)
    }

    /// Loop-confined counters and pool, reachable only from jobs on the generator's loop.
    private final class State: LoadGeneratorState, @unchecked Sendable {
        var pool: WebSocketClientPool?
        var report = Report()
        var target = ("127.0.0.1", 0)
        var remaining = 0
        var inFlight = 0
        var maxInFlight = 200
        var greeted: Set<ConnectionID> = []
        var done: (() -> Void)?

        func startMore() {
            while self.remaining > 0 && self.inFlight < self.maxInFlight {
                self.remaining -= 1
                self.inFlight += 1
                if self.pool?.connect(
                    host: self.target.0, port: self.target.1, path: "/v1/stream", subprotocol: "islet.v1") == nil
                {
                    self.failed("could not start a connection")
                }
            }
            if self.remaining == 0 && self.inFlight == 0 { self.finish() }
        }

        func finish() {
            guard let done = self.done else { return }
            self.done = nil
            done()
        }

        private func failed(_ reason: String) {
            self.report.failed += 1
            self.report.firstFailure = self.report.firstFailure ?? reason
            self.inFlight -= 1
        }

        func client(_ pool: WebSocketClientPool, didOpen connection: ConnectionID) {
            self.report.opened += 1
        }

        func client(_ pool: WebSocketClientPool, didReceive message: WebSocketMessage, from connection: ConnectionID) {
            self.report.messagesReceived += 1
            self.report.bytesReceived += message.bytes.count
            guard self.greeted.insert(connection).inserted else { return }
            self.report.greeted += 1
            self.inFlight -= 1
            self.startMore()
        }

        func client(_ pool: WebSocketClientPool, didFail connection: ConnectionID, reason: String) {
            self.failed(reason)
            self.startMore()
        }

        func client(_ pool: WebSocketClientPool, didClose connection: ConnectionID, code: WebSocketCloseCode?) {
            if self.greeted.remove(connection) == nil {
                self.failed("closed before hello")
                self.startMore()
            }
        }
    }
}
