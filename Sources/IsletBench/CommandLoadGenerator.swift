import DequeModule
import IsletServer
import IsletTransport
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The command path's load generator (`islet bench commands`): N stream connections, each
/// keeping `window` single-command batches in flight (`command` messages, the next sent as each
/// `ack` or `error` arrives), timing every one from its send to its ack on one monotonic clock.
/// libwebsockets client mode on a loop thread of its own.
final class CommandLoadGenerator: Sendable {
    /// What one run measured.
    struct Measurement: Sendable {
        var connections = 0
        var failed = 0
        var firstFailure: String?
        /// Batches sent and answered within the measured window.
        var acked = 0
        var errors = 0
        /// Send → ack latency of each batch sent in the window, in nanoseconds.
        var latenciesNanoseconds: [UInt64] = []
        var windowSeconds = 0.0
        /// The first error message received, if any (a sign the command template is wrong).
        var firstError: String?
        /// Open loop: batches not sent because every connection was at its cap (the server fell behind).
        var heldBack = 0
    }

    private let loop: EventLoop
    private let state: State

    private init(loop: EventLoop, state: State) {
        self.loop = loop
        self.state = state
    }

    /// Starts the generator's loop and client context.
    static func start(logger: Logger) async throws -> CommandLoadGenerator {
        let state = State()
        let loop = try await state.startLoop(name: "islet-commands", logger: logger)
        return CommandLoadGenerator(loop: loop, state: state)
    }

    /// Opens `count` streams and returns once each has its hello (or failed).
    func connect(count: Int, host: String, port: Int, timeout: Duration = .seconds(60)) async throws
        -> Measurement
    {
        let state = self.state
        let loop = self.loop
        return try await withCheckedThrowingContinuation { continuation in
            let accepted = loop.execute {
                state.expected = count
                state.ready = { continuation.resume(returning: state.measurement) }
                for _ in 0..<count {
                    if state.pool?.connect(host: host, port: port, path: "/v1/stream", subprotocol: "islet.v1") == nil {
                        state.failed("could not start a connection")
                    }
                }
                loop.scheduleTimer(after: timeout) { state.timedOut() }
            }
            if !accepted { continuation.resume(throwing: TransportError.loopStopped) }
        }
    }

    /// Sends batches for `warmup + duration`, measuring those sent during `duration`, then waits
    /// at most `drain` for the last answers.
    /// - Parameters:
    ///   - command: the command object's JSON text; `{n}` becomes the batch's sequence number and
    ///     `{k}` the connection's index modulo `keys`.
    ///   - window: batches in flight per connection. Closed loop (no `rate`): each answer sends the
    ///     next. With a `rate`, the cap on a connection's batches in flight.
    ///   - rate: open loop: batches per second in all, sent every millisecond round-robin over the
    ///     connections, whether answers came or not.
    func run(
        command: String, keys: Int, window: Int, rate: Double? = nil, warmup: Duration, duration: Duration,
        drain: Duration = .seconds(5)
    ) async throws -> Measurement {
        let state = self.state
        let loop = self.loop
        return try await withCheckedThrowingContinuation { continuation in
            let accepted = loop.execute {
                state.template = command
                state.keys = max(1, keys)
                let now = monotonicNanoseconds()
                state.windowStart =
                    now + UInt64(warmup.components.seconds) * 1_000_000_000
                    + UInt64(warmup.components.attoseconds / 1_000_000_000)
                state.windowEnd =
                    state.windowStart + UInt64(duration.components.seconds) * 1_000_000_000
                    + UInt64(duration.components.attoseconds / 1_000_000_000)
                state.running = true
                state.window = max(1, window)
                var pacer: LoopTimer?
                if let rate {
                    state.paced = true
                    state.rate = rate
                    state.pacingStart = now
                    pacer = loop.scheduleTimer(after: .zero, repeating: .milliseconds(1)) { state.pace() }
                } else {
                    for (index, connection) in state.order.enumerated() {
                        for _ in 0..<state.window { state.send(on: connection, index: index) }
                    }
                }
                loop.scheduleTimer(after: warmup + duration) {
                    pacer?.cancel()
                    state.running = false
                    loop.scheduleTimer(after: drain) { continuation.resume(returning: state.finish()) }
                }
            }
            if !accepted { continuation.resume(throwing: TransportError.loopStopped) }
        }
    }

    /// Closes every connection and stops the loop.
    func stop() async -> Bool {
        await self.state.stop(self.loop)
    }

    /// Loop-confined.
    private final class State: LoadGeneratorState, @unchecked Sendable {
        var pool: WebSocketClientPool?
        var measurement = Measurement()
        var expected = 0
        var ready: (() -> Void)?
        var order: [ConnectionID] = []
        var index: [ConnectionID: Int] = [:]
        /// Send instants of the batches in flight on each connection, oldest first (answers
        /// come in the order the batches were sent).
        var inFlight: [ConnectionID: Deque<UInt64>] = [:]
        var template = ""
        var keys = 1
        var sequence = 0
        var running = false
        var windowStart: UInt64 = 0
        var windowEnd: UInt64 = 0
        var window = 1
        var paced = false
        var rate = 0.0
        var pacingStart: UInt64 = 0
        var pacedSent = 0
        var nextConnection = 0

        /// Open loop: sends what is due by now, round-robin, skipping connections at their cap.
        func pace() {
            guard self.running, !self.order.isEmpty else { return }
            let due = Int(Double(monotonicNanoseconds() - self.pacingStart) / 1e9 * self.rate)
            var skipped = 0
            while self.pacedSent < due && skipped < self.order.count {
                let index = self.nextConnection
                self.nextConnection = (self.nextConnection + 1) % self.order.count
                let connection = self.order[index]
                guard (self.inFlight[connection]?.count ?? 0) < self.window else {
                    skipped += 1
                    continue
                }
                skipped = 0
                self.send(on: connection, index: index)
                self.pacedSent += 1
            }
            // Batches the caps held back are dropped, not sent late in a burst.
            if self.pacedSent < due { self.measurement.heldBack += due - self.pacedSent; self.pacedSent = due }
        }

        func failed(_ reason: String) {
            self.measurement.failed += 1
            self.measurement.firstFailure = self.measurement.firstFailure ?? reason
            self.connected()
        }

        /// Reports readiness once every connection has its hello or failed.
        func connected() {
            guard self.order.count + self.measurement.failed >= self.expected else { return }
            self.timedOut()
        }

        func timedOut() {
            guard let ready = self.ready else { return }
            self.ready = nil
            ready()
        }

        func send(on connection: ConnectionID, index: Int) {
            guard let pool = self.pool else { return }
            self.sequence += 1
            let text = self.template.replacing("{n}", with: String(self.sequence)).replacing(
                "{k}", with: String(index % self.keys))
            let message = "{\"op\":\"command\",\"id\":\(self.sequence),\"commands\":[\(text)]}"
            self.inFlight[connection, default: []].append(monotonicNanoseconds())
            pool.send(.text(Array(message.utf8)), to: connection)
        }

        func finish() -> Measurement {
            var measurement = self.measurement
            measurement.windowSeconds = Double(self.windowEnd - self.windowStart) / 1e9
            return measurement
        }

        func client(_ pool: WebSocketClientPool, didOpen connection: ConnectionID) {}

        func client(_ pool: WebSocketClientPool, didReceive message: WebSocketMessage, from connection: ConnectionID) {
            let bytes = message.bytes
            guard let index = self.index[connection] else {
                // The hello.
                self.index[connection] = self.order.count
                self.order.append(connection)
                self.measurement.connections = self.order.count
                self.connected()
                return
            }
            guard let sent = self.inFlight[connection]?.popFirst() else { return }
            let now = monotonicNanoseconds()
            let isAck = bytes.ends(with: ackSuffix)
            if sent >= self.windowStart && sent < self.windowEnd {
                if isAck {
                    self.measurement.acked += 1
                    self.measurement.latenciesNanoseconds.append(now - sent)
                } else {
                    self.measurement.errors += 1
                    self.measurement.firstError = self.measurement.firstError ?? String(decoding: bytes, as: UTF8.self)
                }
            }
            if self.running && !self.paced { self.send(on: connection, index: index) }
        }

        func client(_ pool: WebSocketClientPool, didFail connection: ConnectionID, reason: String) {
            self.failed(reason)
        }

        func client(_ pool: WebSocketClientPool, didClose connection: ConnectionID, code: WebSocketCloseCode?) {
            if self.index[connection] == nil { self.failed("closed before hello") }
        }
    }
}

private let ackSuffix = Array("\"type\":\"ack\"}".utf8)

extension Array where Element == UInt8 {
    fileprivate func ends(with suffix: [UInt8]) -> Bool {
        self.count >= suffix.count && self[(self.count - suffix.count)...].elementsEqual(suffix)
    }
}
