@testable import IsletCore
import Testing

@Suite struct InstantTests {
    @Test(
        "parses RFC 3339 with Z, offsets and fractions, and formats canonically",
        arguments: [
            ("2026-11-22T08:00:00Z", "2026-11-22T08:00:00Z"), ("2026-11-22t08:00:00z", "2026-11-22T08:00:00Z"),
            ("2026-11-22T09:30:00+01:30", "2026-11-22T08:00:00Z"),
            ("2026-11-22T03:00:00-05:00", "2026-11-22T08:00:00Z"),
            ("2026-11-22T08:00:00.5Z", "2026-11-22T08:00:00.500Z"),
            ("2026-11-22T08:00:00.123456789Z", "2026-11-22T08:00:00.123Z"),
            ("2026-11-22T08:00:00.000Z", "2026-11-22T08:00:00Z"), ("2024-02-29T23:59:59Z", "2024-02-29T23:59:59Z"),
            ("1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z"),
            ("2000-01-01T00:00:00+00:00", "2000-01-01T00:00:00Z"),
            ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"), ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
        ])
    func roundTrip(text: String, canonical: String) throws {
        let instant = try Instant(rfc3339: text)
        #expect(instant.rfc3339 == canonical)
        #expect(try Instant(rfc3339: canonical) == instant)
    }

    @Test(
        "rejects malformed dates",
        arguments: [
            "", "2026-11-22", "2026-11-22T08:00:00", "2026-11-22 08:00:00Z", "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2026-11-31T00:00:00Z", "2026-11-22T24:00:00Z",
            "2026-11-22T08:60:00Z", "2026-11-22T08:00:60Z", "2026-11-22T08:00:00.Z", "2026-11-22T08:00:00+0100",
            "2026-11-22T08:00:00+24:00", " 2026-11-22T08:00:00Z", "2026-11-22T08:00:00Zx", "26-11-22T08:00:00Z",
            "2026-11-22T08:00:00.1234567890Z", "+2026-11-22T08:00:00Z",
        ])
    func rejects(text: String) {
        #expect(throws: APIError.invalidArgument) { try Instant(rfc3339: text) }
    }

    @Test("only instants of years 0000-9999 in UTC are accepted: an offset cannot carry a date out of that range")
    func writableRange() throws {
        for inside in ["9999-12-31T23:59:59.999Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59+00:00"] {
            let instant = try Instant(rfc3339: inside)
            #expect(try Instant(rfc3339: instant.rfc3339) == instant)
        }
        for outside in ["9999-12-31T23:59:59-00:01", "9999-12-31T23:30:00-23:59", "0000-01-01T00:00:00+00:01"] {
            let error = #expect(throws: APIError.self) { try Instant(rfc3339: outside) }
            #expect(error?.message.contains("between 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z") == true)
        }
        #expect(Instant(unixSeconds: 253_402_300_799.999) == .latestWritable)
        #expect(Instant(unixSeconds: 253_402_300_800) == nil)
        #expect(Instant(unixSeconds: -62_167_219_200.001) == nil)
    }

    @Test("what rfc3339 writes for any instant, also past year 9999 or before year 0, a record reads back")
    func recordedForms() throws {
        let instants = [
            Instant.latestWritable.adding(milliseconds: 1), Instant.earliestWritable.adding(milliseconds: -1),
            Instant(millisecondsSinceEpoch: .max / 2), Instant(millisecondsSinceEpoch: .min / 2), .latestWritable,
        ]
        for instant in instants {
            #expect(Instant(recordedRFC3339: instant.rfc3339) == instant, "\(instant.rfc3339)")
        }
        #expect(Instant.latestWritable.adding(milliseconds: 1).rfc3339 == "10000-01-01T00:00:00Z")
        #expect(Instant.earliestWritable.adding(milliseconds: -1000).rfc3339 == "-0001-12-31T23:59:59Z")
        #expect(throws: APIError.self) { try Instant(rfc3339: "10000-01-01T00:00:00Z") }
        #expect(Instant(recordedRFC3339: "1000000000-01-01T00:00:00Z") == nil)
    }

    @Test("milliseconds since the epoch, Unix seconds and arithmetic")
    func arithmetic() throws {
        let instant = try Instant(rfc3339: "2026-11-22T08:00:00Z")
        #expect(instant.millisecondsSinceEpoch == 1_795_334_400_000)
        #expect(instant == Instant(secondsSinceEpoch: 1_795_334_400))
        #expect(Instant(unixSeconds: 1_795_334_400.25)?.rfc3339 == "2026-11-22T08:00:00.250Z")
        #expect(instant.adding(seconds: 8 * 3600).rfc3339 == "2026-11-22T16:00:00Z")
        #expect(instant.adding(seconds: 0.001).milliseconds(since: instant) == 1)
        #expect(Instant(millisecondsSinceEpoch: -1).secondsSinceEpoch == -1)
        #expect(Instant(unixSeconds: .infinity) == nil)
    }

    @Test("every day of four years round-trips through the civil calendar")
    func everyDay() throws {
        var instant = try Instant(rfc3339: "2023-01-01T12:34:56.789Z")
        for _ in 0..<(4 * 366) {
            #expect(try Instant(rfc3339: instant.rfc3339) == instant)
            instant = instant.adding(seconds: 86_400)
        }
        #expect(instant.rfc3339.hasPrefix("2027-01-0"))
    }
}
