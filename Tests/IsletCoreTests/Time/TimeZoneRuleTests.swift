import Foundation
import IsletCore
import Testing

/// SS-7's time zones: the core's POSIX TZ rules against Python's zoneinfo on the same tzdata.
@Suite struct TimeZoneRuleTests {
    @Test("SS-7 every IANA zone's offset matches zoneinfo, the second before and at each change of 2026–2027")
    func offsets() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("time-zone-vectors/offsets.txt")
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        #expect(lines.count > 2000)
        var mismatches: [String] = []
        // Morocco's Ramadan changes are listed one by one in its TZif data, not in the rule at
        // its end that Islet keeps: those two zones stay on the rule's +01 all year.
        let listedOnly: Set<Substring> = ["Africa/Casablanca", "Africa/El_Aaiun"]
        for line in lines {
            let parts = line.split(separator: " ")
            guard !listedOnly.contains(parts[0]) else { continue }
            let zone = try #require(TimeZoneRule.named(String(parts[0])), "\(parts[0])")
            let instant = Instant(millisecondsSinceEpoch: Int64(parts[1])! * 1000)
            let offset = zone.offset(at: instant)
            if offset != Int64(parts[2])! { mismatches.append("\(line): got \(offset)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first \(mismatches.prefix(5))")
    }

    @Test("SS-7 local hours and tops of the hour, also in zones 30 or 45 minutes off UTC")
    func hours() throws {
        let at = try Instant(rfc3339: "2026-07-01T10:20:00Z")
        let paris = try #require(TimeZoneRule.named("Europe/Paris"))
        #expect(paris.hourOfDay(at) == 12)
        #expect(paris.nextHour(after: at) == (try Instant(rfc3339: "2026-07-01T11:00:00Z")))
        let kolkata = try #require(TimeZoneRule.named("Asia/Kolkata"))
        #expect(kolkata.hourOfDay(at) == 15)
        #expect(kolkata.hourStart(at) == (try Instant(rfc3339: "2026-07-01T09:30:00Z")))
        #expect(kolkata.nextHour(after: at) == (try Instant(rfc3339: "2026-07-01T10:30:00Z")))
        let chatham = try #require(TimeZoneRule.named("Pacific/Chatham"))
        #expect(chatham.nextHour(after: at) == (try Instant(rfc3339: "2026-07-01T11:15:00Z")))
        #expect(TimeZoneRule.utc.hourOfDay(at) == 10)
        #expect(TimeZoneRule.named("Mars/Olympus") == nil)
        #expect(TimeZoneRule.named("") == nil)
    }
}
