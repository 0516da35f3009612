/// RFC 3339 text for instants: strict parsing, one canonical output form.
///
/// Accepted: `YYYY-MM-DDTHH:MM:SS`, optional `.fraction` (1–9 digits; digits past milliseconds
/// are truncated), then `Z` or `±HH:MM`. `T` and `Z` may be lower case (RFC 3339 §5.6 allows it).
/// Rejected: missing parts, out-of-range fields (including February 30 and leap second `:60`,
/// which milliseconds since the epoch cannot name), whitespace and anything trailing, and
/// instants outside years 0000–9999 in UTC, which the canonical form could not write back.
extension Instant {
    /// Parses RFC 3339 text.
    /// - Throws: `invalid_argument` saying what is wrong (the caller adds the field).
    public init(rfc3339 text: String) throws(APIError) {
        var scanner = DateScanner(bytes: Array(text.utf8))
        guard let value = scanner.parse() else {
            throw APIError(.invalidArgument, "expected an RFC 3339 date such as 2026-11-22T08:00:00Z, got \"\(text)\"")
        }
        // An offset can carry a date written in range out of it ("9999-12-31T23:59:59-01:00").
        guard value.isWritable else {
            throw APIError(
                .invalidArgument,
                "a date must lie between 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z in UTC, got \"\(text)\"")
        }
        self = value
    }

    /// Reads back what ``rfc3339`` wrote for any instant, also outside years 0000–9999 (a
    /// signed year of 4 to 9 digits): deadlines the engine computed past the last writable
    /// instant are stored in snapshots. For the engine's own records, never for input.
    init?(recordedRFC3339 text: String) {
        var scanner = DateScanner(bytes: Array(text.utf8), anyYear: true)
        guard let value = scanner.parse() else { return nil }
        self = value
    }

    /// The canonical RFC 3339 form in UTC: `2026-11-22T08:00:00Z`, or `2026-11-22T08:00:00.123Z`
    /// when the milliseconds are not zero.
    public var rfc3339: String {
        let millis = self.millisecondsSinceEpoch.floorModulo(1000)
        let seconds = self.millisecondsSinceEpoch.floorDivided(by: 1000)
        let days = seconds.floorDivided(by: 86_400)
        let secondOfDay = seconds.floorModulo(86_400)
        let (year, month, day) = civilFromDays(days)
        guard (0...9999).contains(year) else { return self.rfc3339Slowly(year, month, day, secondOfDay, millis) }
        // Written straight into the string's storage: dates are formatted several times per
        // revision.
        return String(unsafeUninitializedCapacity: millis == 0 ? 20 : 24) { buffer in
            func put(_ value: Int64, _ width: Int, at offset: Int) {
                var value = value
                for index in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[index] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
            }
            put(year, 4, at: 0)
            buffer[4] = UInt8(ascii: "-")
            put(month, 2, at: 5)
            buffer[7] = UInt8(ascii: "-")
            put(day, 2, at: 8)
            buffer[10] = UInt8(ascii: "T")
            put(secondOfDay / 3600, 2, at: 11)
            buffer[13] = UInt8(ascii: ":")
            put(secondOfDay % 3600 / 60, 2, at: 14)
            buffer[16] = UInt8(ascii: ":")
            put(secondOfDay % 60, 2, at: 17)
            guard millis != 0 else {
                buffer[19] = UInt8(ascii: "Z")
                return 20
            }
            buffer[19] = UInt8(ascii: ".")
            put(millis, 3, at: 20)
            buffer[23] = UInt8(ascii: "Z")
            return 24
        }
    }

    /// The general form, for years outside 0–9999 (`-0001`, `10000`): only instants the engine
    /// computed, such as a deadline past the last writable instant, can have them.
    private func rfc3339Slowly(_ year: Int64, _ month: Int64, _ day: Int64, _ secondOfDay: Int64, _ millis: Int64)
        -> String
    {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        if year < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(&bytes, year.magnitude, 4)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(&bytes, month, 2)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(&bytes, day, 2)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(&bytes, secondOfDay / 3600, 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(&bytes, secondOfDay % 3600 / 60, 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(&bytes, secondOfDay % 60, 2)
        if millis != 0 {
            bytes.append(UInt8(ascii: "."))
            appendDigits(&bytes, millis, 3)
        }
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Appends `value` in decimal, zero-padded to `width` digits.
private func appendDigits(_ bytes: inout [UInt8], _ value: some BinaryInteger, _ width: Int) {
    let value = UInt64(value)
    var divisor: UInt64 = 1
    var digits = 1
    while divisor <= value / 10 {
        divisor *= 10
        digits += 1
    }
    for _ in digits..<max(width, digits) { bytes.append(UInt8(ascii: "0")) }
    while divisor > 0 {
        bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
        divisor /= 10
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = y.floorDivided(by: 400)
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (`civil_from_days`).
func civilFromDays(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
    let z = days + 719_468
    let era = z.floorDivided(by: 146_097)
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let mp = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
}

private func daysInMonth(year: Int64, month: Int64) -> Int64 {
    switch month {
    case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: 30
    default: 31
    }
}

/// A cursor over RFC 3339 text; every reader returns `nil` on the first deviation.
private struct DateScanner {
    let bytes: [UInt8]
    /// Whether a year may be signed and longer than 4 digits (``Instant/init(recordedRFC3339:)``).
    var anyYear = false
    var index = 0

    mutating func parse() -> Instant? {
        guard let year = self.year(), self.take("-"), let month = self.digits(2), self.take("-"),
            let day = self.digits(2), self.take("T") || self.take("t"),
            let hour = self.digits(2), self.take(":"), let minute = self.digits(2), self.take(":"),
            let second = self.digits(2), let millis = self.fraction(), let offset = self.offset(),
            self.index == self.bytes.count
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month),
            hour < 24, minute < 60, second < 60
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let local = ((days * 24 + hour) * 60 + minute) * 60 + second
        let (seconds, overflow) = (local - offset).multipliedReportingOverflow(by: 1000)
        let (milliseconds, carry) = seconds.addingReportingOverflow(millis)
        guard !overflow, !carry else { return nil }
        return Instant(millisecondsSinceEpoch: milliseconds)
    }

    /// Four digits; with `anyYear`, an optional `-` and 4 to 9 digits.
    mutating func year() -> Int64? {
        guard self.anyYear else { return self.digits(4) }
        let negative = self.take("-")
        let start = self.index
        while self.index < self.bytes.count, self.index - start < 9, self.bytes[self.index] != UInt8(ascii: "-") {
            self.index += 1
        }
        let count = self.index - start
        self.index = start
        guard count >= 4, let magnitude = self.digits(count) else { return nil }
        return negative ? -magnitude : magnitude
    }

    mutating func take(_ ascii: Unicode.Scalar) -> Bool {
        guard self.index < self.bytes.count, self.bytes[self.index] == UInt8(ascii: ascii) else { return false }
        self.index += 1
        return true
    }

    mutating func digits(_ count: Int) -> Int64? {
        guard self.bytes.count - self.index >= count else { return nil }
        var value: Int64 = 0
        for _ in 0..<count {
            let byte = self.bytes[self.index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            self.index += 1
        }
        return value
    }

    /// Milliseconds of an optional `.fraction`; 0 when absent.
    mutating func fraction() -> Int64? {
        guard self.take(".") else { return 0 }
        var millis: Int64 = 0
        var count = 0
        while self.index < self.bytes.count, self.bytes[self.index] >= UInt8(ascii: "0"),
            self.bytes[self.index] <= UInt8(ascii: "9")
        {
            if count < 3 { millis = millis * 10 + Int64(self.bytes[self.index] - UInt8(ascii: "0")) }
            count += 1
            self.index += 1
        }
        guard (1...9).contains(count) else { return nil }
        for _ in count..<max(count, 3) { millis *= 10 }
        return millis
    }

    /// The offset from UTC in seconds: 0 for `Z`, else `±HH:MM`.
    mutating func offset() -> Int64? {
        if self.take("Z") || self.take("z") { return 0 }
        let sign: Int64
        if self.take("+") { sign = 1 } else if self.take("-") { sign = -1 } else { return nil }
        guard let hours = self.digits(2), self.take(":"), let minutes = self.digits(2), hours < 24, minutes < 60
        else { return nil }
        return sign * (hours * 3600 + minutes * 60)
    }
}
