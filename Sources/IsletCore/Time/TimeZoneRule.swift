/// SS-7: a device's time zone, as the POSIX TZ rule of its IANA zone (RFC 8536 §3.3).
///
/// The rule is today's (standard offset, and a daylight saving offset with its two yearly
/// transitions); past rule changes do not matter to a simulation that runs now. The rules come
/// with the core (``table``) rather than from the host, so a log replays to the same local
/// hours on every machine.
public struct TimeZoneRule: Sendable, Hashable {
    /// The IANA name (`Europe/Paris`).
    public let identifier: String
    /// Seconds east of UTC in standard time.
    let standardOffset: Int64
    let daylight: Daylight?

    /// Daylight saving time: its offset and when it starts and ends, each in local time of the
    /// offset in force before the transition.
    struct Daylight: Sendable, Hashable {
        let offset: Int64
        let start: Transition
        let end: Transition
    }

    /// `Mm.w.d/time`: day `d` (0 = Sunday) of week `w` (5 = the last) of month `m`, at `time`
    /// seconds after that day's local midnight (may be negative or beyond a day).
    struct Transition: Sendable, Hashable {
        let month: Int64
        let week: Int64
        let weekday: Int64
        let time: Int64
    }

    public static let utc = TimeZoneRule(identifier: "UTC", standardOffset: 0, daylight: nil)

    /// The zone called `identifier`, or `nil` when the table has none.
    public static func named(_ identifier: String) -> TimeZoneRule? {
        guard let text = Self.rules[identifier] else { return nil }
        return TimeZoneRule(identifier: identifier, posix: text)
    }

    private static let rules: [String: String] = {
        var rules: [String: String] = [:]
        for line in Self.table.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            rules[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return rules
    }()

    private init(identifier: String, standardOffset: Int64, daylight: Daylight?) {
        self.identifier = identifier
        self.standardOffset = standardOffset
        self.daylight = daylight
    }

    /// Parses a POSIX TZ string such as `CET-1CEST,M3.5.0,M10.5.0/3` or `<+0530>-5:30`.
    init?(identifier: String, posix: String) {
        var scanner = PosixScanner(Array(posix.utf8))
        guard scanner.skipName(), let standardWest = scanner.offset() else { return nil }
        self.identifier = identifier
        self.standardOffset = -standardWest
        guard !scanner.isAtEnd else {
            self.daylight = nil
            return
        }
        guard scanner.skipName() else { return nil }
        let daylightOffset = scanner.peekIsRuleStart ? self.standardOffset + 3600 : scanner.offset().map { -$0 }
        guard let daylightOffset, scanner.take(","), let start = scanner.transition(), scanner.take(","),
            let end = scanner.transition(), scanner.isAtEnd
        else { return nil }
        self.daylight = Daylight(offset: daylightOffset, start: start, end: end)
    }

    /// Seconds east of UTC in force at `instant`.
    public func offset(at instant: Instant) -> Int64 {
        guard let daylight = self.daylight else { return self.standardOffset }
        let seconds = instant.millisecondsSinceEpoch.floorDivided(by: 1000)
        let year = civilFromDays((seconds + self.standardOffset).floorDivided(by: 86_400)).year
        // Both transitions of this year, in UTC; the southern hemisphere starts after it ends.
        let start = daylight.start.utcSeconds(year: year) - self.standardOffset
        let end = daylight.end.utcSeconds(year: year) - daylight.offset
        let inDaylight = start < end ? (seconds >= start && seconds < end) : (seconds < end || seconds >= start)
        return inDaylight ? daylight.offset : self.standardOffset
    }

    /// The local hour of day (0–23) at `instant`.
    public func hourOfDay(_ instant: Instant) -> Int {
        Int(self.localMilliseconds(instant).floorDivided(by: millisecondsPerHour).floorModulo(24))
    }

    /// The start of the local hour that contains `instant` (zones 30 or 45 minutes off UTC
    /// have their tops of the hour at :30 or :15 UTC).
    public func hourStart(_ instant: Instant) -> Instant {
        let offset = self.offset(at: instant) * 1000
        let local = instant.millisecondsSinceEpoch + offset
        return Instant(millisecondsSinceEpoch: local.floorDivided(by: millisecondsPerHour) * millisecondsPerHour - offset)
    }

    /// The next local top of the hour strictly after `instant`: the first instant after it whose
    /// local time, in the offset in force then, is a whole hour. Every offset and transition of
    /// the table falls on a quarter hour of UTC, so the quarter hours after `instant` are the
    /// candidates: past a change of offset the next top can be 30 minutes or two hours away
    /// (Lord Howe moves by 30 minutes, so its tops are at :00 UTC before and :30 after), and a
    /// local hour a change skips has none.
    public func nextHour(after instant: Instant) -> Instant {
        // Where the offset is the same at both ends, the tops are an hour apart: one step.
        let offset = self.offset(at: instant)
        let local = instant.millisecondsSinceEpoch + offset * 1000
        let next = Instant(
            millisecondsSinceEpoch: (local.floorDivided(by: millisecondsPerHour) + 1) * millisecondsPerHour - offset * 1000)
        if self.offset(at: next) == offset { return next }
        let quarter = millisecondsPerHour / 4
        var candidate = Instant(
            millisecondsSinceEpoch: (instant.millisecondsSinceEpoch.floorDivided(by: quarter) + 1) * quarter)
        // At most three hours on (a skipped hour after a 1-hour change); eight would do.
        for _ in 0..<12 {
            if self.localMilliseconds(candidate).floorModulo(millisecondsPerHour) == 0 { return candidate }
            candidate = candidate.adding(milliseconds: quarter)
        }
        preconditionFailure("no top of the hour within three hours in \(self.identifier)")
    }

    private func localMilliseconds(_ instant: Instant) -> Int64 {
        instant.millisecondsSinceEpoch + self.offset(at: instant) * 1000
    }
}

extension TimeZoneRule.Transition {
    /// The transition's instant in `year` as seconds since the epoch, read as if local time were UTC.
    func utcSeconds(year: Int64) -> Int64 {
        let first = daysFromCivil(year: year, month: self.month, day: 1)
        // 1970-01-01 was a Thursday (4).
        let firstWeekday = (first + 4).floorModulo(7)
        var day = first + (self.weekday - firstWeekday).floorModulo(7) + (self.week - 1) * 7
        if self.week == 5 {
            let nextMonth =
                self.month == 12
                ? daysFromCivil(year: year + 1, month: 1, day: 1) : daysFromCivil(year: year, month: self.month + 1, day: 1)
            while day >= nextMonth { day -= 7 }
        }
        return day * 86_400 + self.time
    }
}

/// Reads the parts of a POSIX TZ string.
private struct PosixScanner {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { self.position == self.bytes.count }
    var peekIsRuleStart: Bool { !self.isAtEnd && self.bytes[self.position] == UInt8(ascii: ",") }

    mutating func take(_ ascii: Unicode.Scalar) -> Bool {
        guard !self.isAtEnd, self.bytes[self.position] == UInt8(ascii: ascii) else { return false }
        self.position += 1
        return true
    }

    /// A zone abbreviation: three or more letters, or anything between `<` and `>`.
    mutating func skipName() -> Bool {
        if self.take("<") {
            while !self.isAtEnd, self.bytes[self.position] != UInt8(ascii: ">") { self.position += 1 }
            return self.take(">")
        }
        let start = self.position
        while !self.isAtEnd, (UInt8(ascii: "A")...UInt8(ascii: "z")).contains(self.bytes[self.position]) {
            self.position += 1
        }
        return self.position - start >= 3
    }

    /// `[+-]h[:mm[:ss]]` as seconds (POSIX offsets are west of UTC).
    mutating func offset() -> Int64? {
        let negative = self.take("-")
        if !negative { _ = self.take("+") }
        guard let value = self.clockTime() else { return nil }
        return negative ? -value : value
    }

    /// `Mm.w.d[/time]`.
    mutating func transition() -> TimeZoneRule.Transition? {
        guard self.take("M"), let month = self.number(), self.take("."), let week = self.number(), self.take("."),
            let weekday = self.number(), (1...12).contains(month), (1...5).contains(week), (0...6).contains(weekday)
        else { return nil }
        var time: Int64 = 7200
        if self.take("/") {
            let negative = self.take("-")
            guard let value = self.clockTime() else { return nil }
            time = negative ? -value : value
        }
        return .init(month: month, week: week, weekday: weekday, time: time)
    }

    private mutating func clockTime() -> Int64? {
        guard let hours = self.number() else { return nil }
        var seconds = hours * 3600
        if self.take(":") {
            guard let minutes = self.number() else { return nil }
            seconds += minutes * 60
            if self.take(":") {
                guard let rest = self.number() else { return nil }
                seconds += rest
            }
        }
        return seconds
    }

    private mutating func number() -> Int64? {
        let start = self.position
        var value: Int64 = 0
        while !self.isAtEnd, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self.bytes[self.position]),
            self.position - start < 3
        {
            value = value * 10 + Int64(self.bytes[self.position] - UInt8(ascii: "0"))
            self.position += 1
        }
        return self.position > start ? value : nil
    }
}
