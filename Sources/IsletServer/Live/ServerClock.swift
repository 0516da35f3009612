public import IsletCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The system's wall clock as a `TimeSource`: the one clock read of a running server.
public struct SystemTimeSource: TimeSource {
    public init() {}

    /// The current wall instant (`CLOCK_REALTIME`, to the millisecond).
    public var now: Instant {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Instant(millisecondsSinceEpoch: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}

/// A time source whose instant is set by hand, shareable across threads: for tests that drive
/// a live server's wall clock.
public final class SettableTimeSource: TimeSource, Sendable {
    private let instant: Mutex<Instant>

    public init(now: Instant) { self.instant = Mutex(now) }

    public var now: Instant { self.instant.withLock { $0 } }

    /// Sets the current instant.
    public func set(_ instant: Instant) { self.instant.withLock { $0 = instant } }

    /// Moves the current instant forward.
    public func advance(seconds: Double) { self.instant.withLock { $0 = $0.adding(seconds: seconds) } }
}

/// The wall instant of the current loop turn: read from the time source at most once per turn
/// (on first use) and forgotten when the turn ends, as libuv caches `uv_now`.
final class TurnClock {
    let source: any TimeSource
    private var cached: Instant?

    init(source: any TimeSource) { self.source = source }

    /// The wall instant of this loop turn.
    var now: Instant {
        if let cached = self.cached { return cached }
        let now = self.source.now
        self.cached = now
        return now
    }

    /// Ends the turn: the next `now` reads the time source again.
    func endTurn() { self.cached = nil }
}
