/// Decides when an HTTP/2 connection has gone too long without progress. A value: the
/// connection reports what happened, with the loop's time (`uv_now`, in milliseconds), and asks
/// for a verdict; it reads no clock.
///
/// - A TLS handshake must finish within `handshakeTimeout` of the accept.
/// - After it, progress is a frame received or queued bytes written. With none for
///   `idleTimeout`, the connection ends: `idle` (GOAWAY, then close), or `stalled` when its
///   output is stuck over the cap (the peer reads nothing). While the application owes a reply
///   and the output is not stuck, there is no deadline: the wait is the server's, not the peer's.
struct HTTP2Watchdog: Equatable {
    enum Verdict: Equatable {
        /// Nothing to do before this instant; nil: not before something happens.
        case wait(until: UInt64?)
        case handshakeTimedOut
        case idle
        case stalled
    }

    private let handshakeTimeout: UInt64
    private let idleTimeout: UInt64
    private var isEstablished = false
    /// When the connection was accepted, then when it last made progress.
    private var since: UInt64

    /// - Parameters:
    ///   - handshakeTimeout: Zero: no limit.
    ///   - idleTimeout: Zero: no limit.
    ///   - now: When the connection was accepted.
    init(handshakeTimeout: Duration, idleTimeout: Duration, acceptedAt now: UInt64) {
        self.handshakeTimeout = Self.milliseconds(handshakeTimeout)
        self.idleTimeout = Self.milliseconds(idleTimeout)
        self.since = now
    }

    mutating func handshakeFinished(at now: UInt64) {
        self.isEstablished = true
        self.since = now
    }

    /// Counts from `now` again, once the handshake is done (before, the deadline is fixed: a
    /// client dribbling its handshake gains nothing).
    mutating func progressed(at now: UInt64) {
        guard self.isEstablished else { return }
        self.since = max(self.since, now)
    }

    /// - Parameters:
    ///   - awaitingApplication: A request was handed to the application and not answered yet.
    ///   - outputStuck: The socket's queue is over the cap, so the connection stopped reading.
    func verdict(at now: UInt64, awaitingApplication: Bool, outputStuck: Bool) -> Verdict {
        guard self.isEstablished else {
            guard self.handshakeTimeout > 0 else { return .wait(until: nil) }
            let deadline = self.since + self.handshakeTimeout
            return now >= deadline ? .handshakeTimedOut : .wait(until: deadline)
        }
        guard self.idleTimeout > 0, outputStuck || !awaitingApplication else { return .wait(until: nil) }
        let deadline = self.since + self.idleTimeout
        guard now >= deadline else { return .wait(until: deadline) }
        return outputStuck ? .stalled : .idle
    }

    /// Whole milliseconds, rounded up (a timeout never fires early); negative durations are zero,
    /// absurdly long ones about 35,000 years.
    private static func milliseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let milliseconds = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return UInt64(min(seconds, 1 << 40)) * 1000 + UInt64(milliseconds)
    }
}
