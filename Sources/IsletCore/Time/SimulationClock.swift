/// How the simulator's time relates to real time: the `/clock` of the state document.
///
/// A pure value. The caller reads a real clock (a ``TimeSource``) once per loop turn and passes
/// that wall instant to the engine; the engine maps it through this value to the simulated
/// instant at which rules apply. In `wall` mode the two are equal. In `virtual` mode simulated
/// time starts at an anchor and runs at `rate` simulated seconds per wall second (0 = paused,
/// so it moves only by `clock.set` and `clock.advance`).
public struct SimulationClock: Sendable, Hashable {
    /// Whether simulated time follows the wall clock or is driven by commands.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        case wall
        case virtual
    }

    public private(set) var mode: Mode
    /// Simulated seconds per wall second: 1 in wall mode; 0 pauses a virtual clock.
    public private(set) var rate: Double
    /// The wall instant of the anchor.
    public private(set) var anchorWall: Instant
    /// The simulated instant that corresponds to `anchorWall`.
    public private(set) var anchorSimulated: Instant

    /// A clock that follows real time.
    public static func wall(at wall: Instant) -> SimulationClock {
        SimulationClock(mode: .wall, rate: 1, anchorWall: wall, anchorSimulated: wall)
    }

    /// A virtual clock showing `now` at wall instant `wall` and running at `rate`.
    /// - Precondition: `rate` is finite and not negative.
    public static func virtual(now: Instant, rate: Double = 0, atWall wall: Instant) -> SimulationClock {
        precondition(rate.isFinite && rate >= 0, "a clock rate must be finite and >= 0")
        return SimulationClock(mode: .virtual, rate: rate, anchorWall: wall, anchorSimulated: now)
    }

    init(mode: Mode, rate: Double, anchorWall: Instant, anchorSimulated: Instant) {
        self.mode = mode
        self.rate = rate
        self.anchorWall = anchorWall
        self.anchorSimulated = anchorSimulated
    }

    /// The simulated instant at wall instant `wall` (rounded down to the millisecond).
    public func simulated(atWall wall: Instant) -> Instant {
        switch self.mode {
        case .wall:
            return wall
        case .virtual:
            let elapsed = Double(wall.milliseconds(since: self.anchorWall)) * self.rate
            let simulated = self.anchorSimulated.adding(
                milliseconds: Int64(saturating: elapsed, .down, limit: Instant.representableSpan))
            return min(max(simulated, .earliestWritable), .latestWritable)
        }
    }

    /// The earliest wall instant at which simulated time reaches `simulated`, so the server can
    /// arm a timer for the next deadline; `nil` when a paused virtual clock never gets there, or
    /// a slow one only after `Instant.latestWritable` (a rate of 1e-300 must not trap).
    public func wall(forSimulated simulated: Instant) -> Instant? {
        switch self.mode {
        case .wall:
            return simulated
        case .virtual:
            let ahead = simulated.milliseconds(since: self.anchorSimulated)
            if ahead <= 0 { return self.anchorWall.adding(milliseconds: 0) }
            guard self.rate > 0 else { return nil }
            let delay = Int64(saturating: Double(ahead) / self.rate, .up, limit: Instant.representableSpan)
            guard delay < Instant.latestWritable.milliseconds(since: self.anchorWall) else { return nil }
            return self.anchorWall.adding(milliseconds: delay)
        }
    }

    /// The same clock re-anchored so that wall instant `wall` maps to `simulated`.
    func reanchored(wall: Instant, simulated: Instant) -> SimulationClock {
        SimulationClock(mode: self.mode, rate: self.rate, anchorWall: wall, anchorSimulated: simulated)
    }

    /// The same clock with another mode and rate, anchored at (`wall`, `simulated`).
    func with(mode: Mode, rate: Double, wall: Instant, simulated: Instant) -> SimulationClock {
        SimulationClock(mode: mode, rate: rate, anchorWall: wall, anchorSimulated: simulated)
    }
}

/// Where the caller's wall instants come from.
///
/// The engine never reads time itself. The server's implementation reads the system clock once
/// per loop turn (it lives outside `IsletCore`); tests and tools use ``ManualTimeSource``.
public protocol TimeSource: Sendable {
    /// The current wall instant.
    var now: Instant { get }
}

/// A time source that moves only when told to: for tests, tools and benchmarks.
public struct ManualTimeSource: TimeSource, Hashable {
    public var now: Instant

    public init(now: Instant) {
        self.now = now
    }

    /// Moves the time forward by `seconds`.
    public mutating func advance(seconds: Double) {
        self.now = self.now.adding(seconds: seconds)
    }
}
