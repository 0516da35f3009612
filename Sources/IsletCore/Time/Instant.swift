/// A point in time: whole milliseconds since the Unix epoch (1970-01-01T00:00:00Z).
///
/// The engine never reads a clock; every instant is data the caller passes in, so replaying the
/// same commands at the same instants reproduces the same state byte for byte. Integers (not
/// `Double`, not `Foundation.Date`) keep arithmetic exact and encoding canonical.
public struct Instant: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z; negative before it.
    public var millisecondsSinceEpoch: Int64

    public init(millisecondsSinceEpoch: Int64) {
        self.millisecondsSinceEpoch = millisecondsSinceEpoch
    }

    /// The instant `seconds` whole seconds after the epoch (APNs `aps` dates are Unix seconds).
    public init(secondsSinceEpoch seconds: Int64) {
        self.millisecondsSinceEpoch = seconds * 1000
    }

    /// The instant a Unix-seconds number names, rounded to the millisecond; `nil` when it is not
    /// finite or lies outside years 0000–9999.
    public init?(unixSeconds: Double) {
        guard unixSeconds.isFinite, abs(unixSeconds) < 300_000_000_000 else { return nil }
        self.millisecondsSinceEpoch = Int64((unixSeconds * 1000).rounded())
        guard self.isWritable else { return nil }
    }

    /// Whole seconds since the epoch, rounded down.
    public var secondsSinceEpoch: Int64 {
        self.millisecondsSinceEpoch.floorDivided(by: 1000)
    }

    /// This instant moved by `milliseconds` (negative moves it back).
    public func adding(milliseconds: Int64) -> Instant {
        Instant(millisecondsSinceEpoch: self.millisecondsSinceEpoch &+ milliseconds)
    }

    /// This instant moved by `seconds`, rounded to the millisecond.
    public func adding(seconds: Double) -> Instant {
        self.adding(milliseconds: Milliseconds(seconds: seconds))
    }

    /// Milliseconds from `other` to `self` (positive when `self` is later).
    public func milliseconds(since other: Instant) -> Int64 {
        self.millisecondsSinceEpoch &- other.millisecondsSinceEpoch
    }

    /// 9999-12-31T23:59:59.999Z, the last instant RFC 3339 can write: arithmetic on instants
    /// derived from input saturates here instead of overflowing.
    public static let latestWritable = Instant(millisecondsSinceEpoch: 253_402_300_799_999)
    /// 0000-01-01T00:00:00Z, the first instant RFC 3339 can write.
    public static let earliestWritable = Instant(millisecondsSinceEpoch: -62_167_219_200_000)

    /// Whether RFC 3339 can write this instant (years 0000–9999 in UTC): the range of every
    /// instant Islet accepts, so that everything it accepts it can also store and read back.
    public var isWritable: Bool { (Self.earliestWritable...Self.latestWritable).contains(self) }

    public static func < (lhs: Instant, rhs: Instant) -> Bool {
        lhs.millisecondsSinceEpoch < rhs.millisecondsSinceEpoch
    }

    /// The canonical RFC 3339 form (`2026-11-22T08:00:00Z`, or `…00.123Z` with milliseconds).
    public var description: String { self.rfc3339 }
}

/// Converts a duration in (possibly fractional) seconds to whole milliseconds, rounding to nearest;
/// saturating at ±(latestWritable − earliestWritable), so no input-derived duration can trap.
@inline(__always)
func Milliseconds(seconds: Double) -> Int64 {
    Int64(saturating: seconds * 1000, .toNearestOrAwayFromZero, limit: Instant.representableSpan)
}

extension Instant {
    /// The longest span between two RFC 3339 instants, in milliseconds.
    static let representableSpan = Instant.latestWritable.milliseconds(since: .earliestWritable)
}

extension Int64 {
    /// `value` rounded by `rule` and clamped to `-limit...limit`; NaN becomes 0.
    init(saturating value: Double, _ rule: FloatingPointRoundingRule, limit: Int64) {
        guard !value.isNaN else {
            self = 0
            return
        }
        let rounded = value.rounded(rule)
        if rounded >= Double(limit) {
            self = limit
        } else if rounded <= -Double(limit) {
            self = -limit
        } else {
            self = Int64(rounded)
        }
    }
}

extension Int64 {
    /// Division rounding toward negative infinity (Swift's `/` rounds toward zero).
    func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }

    /// The remainder that goes with `floorDivided(by:)`: always in `0..<divisor` for a positive divisor.
    func floorModulo(_ divisor: Int64) -> Int64 {
        self - self.floorDivided(by: divisor) * divisor
    }
}
