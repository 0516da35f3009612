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

    @Test("SS-7 around every change of offset of 2026–2027, in every zone, the next top of the hour is after the instant, a whole local hour, and the first such")
    func nextHourAroundEveryChange() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("time-zone-vectors/offsets.txt")
        var previous: (zone: Substring, offset: Substring)?
        var changes: [(TimeZoneRule, Int64)] = []
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if let previous, previous.zone == parts[0], previous.offset != parts[2],
                let zone = TimeZoneRule.named(String(parts[0]))
            {
                changes.append((zone, Int64(parts[1])! * 1000))
            }
            previous = (parts[0], parts[2])
        }
        #expect(changes.count > 100)
        let minute: Int64 = 60_000
        var failures: [String] = []
        func isTop(_ zone: TimeZoneRule, _ instant: Instant) -> Bool {
            (instant.millisecondsSinceEpoch + zone.offset(at: instant) * 1000).isMultiple(of: 60 * minute)
        }
        for (zone, change) in changes {
            for step in stride(from: -180 * minute, through: 180 * minute, by: Int(10 * minute)) {
                let at = Instant(millisecondsSinceEpoch: change + step)
                let next = zone.nextHour(after: at)
                let firstTop = stride(
                    from: at.millisecondsSinceEpoch + minute, through: next.millisecondsSinceEpoch, by: Int(minute)
                ).first { isTop(zone, Instant(millisecondsSinceEpoch: $0)) }
                if next <= at || !isTop(zone, next) || firstTop != next.millisecondsSinceEpoch {
                    failures.append("\(zone.identifier) after \(at): \(next)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) wrong, first \(failures.prefix(5))")
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
        // Lord Howe moves by 30 minutes: after its April change the tops are at :30 UTC. (The
        // next top was computed as the instant itself there, and a Smart Stack re-ranked for ever.)
        let lordHowe = try #require(TimeZoneRule.named("Australia/Lord_Howe"))
        #expect(lordHowe.nextHour(after: try Instant(rfc3339: "2026-04-04T14:30:00Z")) == (try Instant(rfc3339: "2026-04-04T15:30:00Z")))
        #expect(lordHowe.nextHour(after: try Instant(rfc3339: "2026-10-03T14:30:00Z")) == (try Instant(rfc3339: "2026-10-03T16:00:00Z")))
        #expect(TimeZoneRule.named("Mars/Olympus") == nil)
        #expect(TimeZoneRule.named("") == nil)
    }
}
