import IsletCore
import Testing

/// `clock.set` and `clock.advance`; the engine never reads a clock itself.
@Suite struct ClockCommandTests {
    @Test("clock.advance is refused in wall mode; clock.set switches to virtual, sets now and rate")
    func modes() throws {
        let start = try Instant(rfc3339: "2026-11-22T08:00:00Z")
        var engine = Engine(renderer: TestRenderer(), at: start)
        #expect(engine.value(at: "/clock") == ["mode": "wall", "now": "2026-11-22T08:00:00Z", "rate": 1])
        let refused = #expect(throws: APIError.self) {
            try engine.apply([["type": "clock.advance", "seconds": 1]] as [JSONValue], at: start)
        }
        #expect(refused?.code == .conflict)
        let set = try engine.apply(
            [["type": "clock.set", "mode": "virtual", "now": "2026-11-23T00:00:00Z", "rate": 2]] as [JSONValue],
            at: start.adding(seconds: 1))
        #expect(set.results[0] == ["now": "2026-11-23T00:00:00Z"])
        #expect(engine.value(at: "/clock") == ["mode": "virtual", "now": "2026-11-23T00:00:00Z", "rate": 2])
        // Two wall seconds later the simulated clock is four seconds on.
        let next = try engine.apply(
            [["type": "clock.advance", "seconds": 0]] as [JSONValue], at: start.adding(seconds: 3))
        #expect(next.at.rfc3339 == "2026-11-23T00:00:04Z")
        let backwards = #expect(throws: APIError.self) {
            try engine.apply(
                [["type": "clock.set", "now": "2026-11-22T00:00:00Z"]] as [JSONValue], at: start.adding(seconds: 3))
        }
        #expect(backwards?.field == "/commands/0/now")
    }

    @Test("clock.advance stops at the last instant the document can write, however often it is sent")
    func advanceStopsAtTheEnd() throws {
        let start = try Instant(rfc3339: "9999-12-31T00:00:00Z")
        var engine = Engine(renderer: TestRenderer(), at: start, clock: .virtual(now: start, atWall: start))
        let decade: [JSONValue] = [["type": "clock.advance", "seconds": 315_360_000]]
        let first = try engine.apply(decade, at: start)
        #expect(first.at == .latestWritable)
        #expect(engine.value(at: "/clock/now") == "9999-12-31T23:59:59.999Z")
        #expect(try engine.apply(decade, at: start).at == .latestWritable)
    }

    @Test("in wall mode the engine advances to the instants the caller passes, and arms the next wake-up")
    func wallModeAdvance() throws {
        let start = try Instant(rfc3339: "2026-11-22T08:00:00Z")
        var source = ManualTimeSource(now: start)
        var engine = Engine(renderer: TestRenderer(), at: start)
        _ = try engine.apply(
            [
                ["type": "app.upsert", "id": "coffee", "foreground": true],
                [
                    "type": "activity.request", "id": "a1", "app": "coffee", "attributesType": "T",
                    "content": ["state": [:], "staleDate": "2026-11-22T08:10:00Z"],
                ],
            ] as [JSONValue], at: source.now)
        #expect(engine.nextDeadline?.rfc3339 == "2026-11-22T08:10:00Z")
        #expect(engine.nextWakeUp?.rfc3339 == "2026-11-22T08:10:00Z")
        source.advance(seconds: 300)
        let early = engine.advance(using: source)
        #expect(early == nil, "nothing is due: no revision")
        source.advance(seconds: 301)
        let due = engine.advance(using: source)
        let revision = try #require(due)
        #expect(revision.at.rfc3339 == "2026-11-22T08:10:00Z", "the revision happens at the transition's own instant")
        #expect(engine.value(at: "/activities/a1/activityState") == "stale")
        #expect(engine.value(at: "/clock/now") == "2026-11-22T08:10:00Z")
    }
}
