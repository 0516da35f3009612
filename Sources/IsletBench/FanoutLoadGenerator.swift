import IsletCore
import IsletServer
import IsletTransport
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The load generator of `islet bench fanout`: many subscribers on one event loop (libwebsockets
/// client mode) and one driver connection that sends `command` messages at a fixed rate. It
/// records, for every patch received, its revision and the instant it arrived, and for every
/// command, when it was sent and which revision its `ack` named, so change→receive latency is
/// measured on one clock in one process.
final class FanoutLoadGenerator: Sendable {
    /// What a run measured.
    struct Measurement: Sendable {
        var subscribers = 0
        var subscribed = 0
        var failed = 0
        var firstFailure: String?
        /// Commands sent and acknowledged during the window.
        var commandsSent = 0
        var commandsAcked = 0
        /// Patches received for the window's revisions, and the latency of each (nanoseconds).
        var framesReceived = 0
        var latenciesNanoseconds: [UInt64] = []
        /// Patches that should have arrived (acked revisions × subscribers) and did not.
        var lost = 0
        var resyncs = 0
        var errors = 0
        var bytesReceived = 0
        var patchBytes = 0
    }

    private let loop: EventLoop
    private let state: State

    private init(loop: EventLoop, state: State) {
        self.loop = loop
        self.state = state
    }

    static func start(logger: Logger) async throws -> FanoutLoadGenerator {
        let state = State()
        let loop = try await state.startLoop(name: "islet-fanout", logger: logger)
        return FanoutLoadGenerator(loop: loop, state: state)
    }

    /// Opens `count` subscribers (each subscribes to `path` after its hello) and the driver,
    /// and returns once every subscriber has its snapshot or failed.
    func connect(
        count: Int, host: String, port: Int, path: String, maxInFlight: Int = 200, timeout: Duration = .seconds(180)
    ) async throws -> Measurement {
        let state = self.state
        let loop = self.loop
        return try await withCheckedThrowingContinuation { continuation in
            let accepted = loop.execute {
                state.target = (host, port)
                state.path = path
                state.remaining = count
                state.maxInFlight = maxInFlight
                state.measurement.subscribers = count
                state.ready = { continuation.resume(returning: state.measurement) }
                state.driver = state.pool?.connect(host: host, port: port, path: "/v1/stream", subprotocol: "islet.v1")
                loop.scheduleTimer(after: timeout) { state.finishConnecting() }
                state.connectMore()
            }
            if !accepted { continuation.resume(throwing: TransportError.loopStopped) }
        }
    }

    /// Sends `command` (a JSON command object; `{n}` in its text is replaced by the sequence
    /// number) `rate` times per second for `duration`, then waits `drain` for the last patches.
    func drive(command: String, rate: Double, duration: Duration, drain: Duration) async throws -> Measurement {
        let state = self.state
        let loop = self.loop
        return try await withCheckedThrowingContinuation { continuation in
            let accepted = loop.execute {
                state.windowOpen = true
                state.template = command
                let interval = Duration.nanoseconds(Int64(1e9 / rate))
                let ticker = loop.scheduleTimer(after: .zero, repeating: interval) { state.sendCommand() }
                loop.scheduleTimer(after: duration) {
                    ticker.cancel()
                    loop.scheduleTimer(after: drain) {
                        state.windowOpen = false
                        continuation.resume(returning: state.finishWindow())
                    }
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
        var target = ("127.0.0.1", 0)
        var path = ""
        var remaining = 0
        var inFlight = 0
        var maxInFlight = 200
        var driver: ConnectionID?
        var ready: (() -> Void)?
        var greeted: Set<ConnectionID> = []
        var subscribed: Set<ConnectionID> = []
        var windowOpen = false
        var template = ""
        var sequence = 0
        var sentAt: [Int: UInt64] = [:]
        var revSentAt: [UInt64: UInt64] = [:]
        var arrivals: [(rev: UInt64, at: UInt64)] = []

        func connectMore() {
            while self.remaining > 0 && self.inFlight < self.maxInFlight {
                self.remaining -= 1
                self.inFlight += 1
                if self.pool?.connect(
                    host: self.target.0, port: self.target.1, path: "/v1/stream", subprotocol: "islet.v1")
                    == nil
                {
                    self.failed("could not start a connection")
                }
            }
            if self.remaining == 0 && self.inFlight == 0 { self.finishConnecting() }
        }

        func finishConnecting() {
            guard let ready = self.ready else { return }
            self.ready = nil
            self.measurement.subscribed = self.subscribed.count
            ready()
        }

        private func failed(_ reason: String) {
            self.measurement.failed += 1
            self.measurement.firstFailure = self.measurement.firstFailure ?? reason
            self.inFlight -= 1
        }

        func sendCommand() {
            guard let driver = self.driver, let pool = self.pool else { return }
            self.sequence += 1
            let text = self.template.replacing("{n}", with: String(self.sequence))
            let message = "{\"op\":\"command\",\"id\":\(self.sequence),\"commands\":[\(text)]}"
            self.sentAt[self.sequence] = monotonicNanoseconds()
            self.measurement.commandsSent += 1
            pool.send(.text(Array(message.utf8)), to: driver)
        }

        func finishWindow() -> Measurement {
            var measurement = self.measurement
            measurement.latenciesNanoseconds.reserveCapacity(self.arrivals.count)
            for arrival in self.arrivals {
                guard let sent = self.revSentAt[arrival.rev] else { continue }
                measurement.latenciesNanoseconds.append(arrival.at >= sent ? arrival.at - sent : 0)
            }
            measurement.framesReceived = measurement.latenciesNanoseconds.count
            measurement.commandsAcked = self.revSentAt.count
            measurement.lost = max(0, self.revSentAt.count * self.subscribed.count - measurement.framesReceived)
            return measurement
        }

        func client(_ pool: WebSocketClientPool, didOpen connection: ConnectionID) {}

        func client(_ pool: WebSocketClientPool, didReceive message: WebSocketMessage, from connection: ConnectionID) {
            let bytes = message.bytes
            if connection == self.driver { return self.driverReceived(bytes) }
            let now = monotonicNanoseconds()
            self.measurement.bytesReceived += bytes.count
            if bytes.starts(with: patchPrefix) {
                if self.windowOpen, let rev = trailingRev(bytes) {
                    self.arrivals.append((rev, now))
                    self.measurement.patchBytes = bytes.count
                }
                return
            }
            if self.greeted.insert(connection).inserted {
                let subscribe =
                    "{\"op\":\"subscribe\",\"id\":\"s\",\"path\":\(JSONValue.string(self.path).encodedString)}"
                pool.send(.text(Array(subscribe.utf8)), to: connection)
                return
            }
            if bytes.starts(with: snapshotMarker) || bytes.contains(subsequence: snapshotType) {
                if self.subscribed.insert(connection).inserted {
                    self.inFlight -= 1
                    self.connectMore()
                }
            } else if bytes.contains(subsequence: resyncType) {
                self.measurement.resyncs += 1
            } else if bytes.contains(subsequence: errorType) {
                self.measurement.errors += 1
            }
        }

        private func driverReceived(_ bytes: [UInt8]) {
            guard bytes.contains(subsequence: ackType), let rev = trailingRev(bytes, key: revKey) else { return }
            guard let value = try? JSONParser().parse(bytes), let id = value["id"]?.numberValue,
                let sent = self.sentAt.removeValue(forKey: Int(id))
            else { return }
            self.revSentAt[rev] = sent
        }

        func client(_ pool: WebSocketClientPool, didFail connection: ConnectionID, reason: String) {
            if connection == self.driver { return }
            self.failed(reason)
            self.connectMore()
        }

        func client(_ pool: WebSocketClientPool, didClose connection: ConnectionID, code: WebSocketCloseCode?) {
            if !self.subscribed.contains(connection) && connection != self.driver && self.ready != nil {
                self.failed("closed before the snapshot (\(code.map(\.description) ?? "no code"))")
                self.connectMore()
            }
        }
    }
}

private let patchPrefix = Array("{\"ops\":".utf8)
private let snapshotMarker = Array("{\"epoch\":".utf8)
private let snapshotType = Array("\"type\":\"snapshot\"".utf8)
private let resyncType = Array("\"type\":\"resync\"".utf8)
private let errorType = Array("\"type\":\"error\"".utf8)
private let ackType = Array("\"type\":\"ack\"".utf8)
private let revKey = Array(",\"rev\":".utf8)

/// The revision of a patch (`…,"rev":N,"type":"patch"}`) or ack, found from the end.
private func trailingRev(_ bytes: [UInt8], key: [UInt8] = revKey) -> UInt64? {
    var index = bytes.count - key.count
    while index >= 0 {
        if bytes[index] == key[0], bytes[index..<index + key.count].elementsEqual(key) {
            var value: UInt64 = 0
            var cursor = index + key.count
            while cursor < bytes.count, bytes[cursor] >= 48, bytes[cursor] <= 57 {
                value = value * 10 + UInt64(bytes[cursor] - 48)
                cursor += 1
            }
            return value
        }
        index -= 1
    }
    return nil
}

func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= self.count else { return false }
        for start in 0...(self.count - subsequence.count)
        where self[start] == subsequence[0] && self[start..<start + subsequence.count].elementsEqual(subsequence) {
            return true
        }
        return false
    }
}
