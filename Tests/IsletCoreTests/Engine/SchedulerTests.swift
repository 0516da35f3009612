import IsletTestSupport
import Testing

@testable import IsletCore

/// The deadline scheduler: one heap, `(instant, sequence)` order, superseded deadlines skipped.
@Suite struct SchedulerTests {
    @Test(
        "deadlines pop in time order, ties in scheduling order, whatever the insertion pattern",
        arguments: [1, 2, 3] as [UInt64])
    func popOrder(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var scheduler = DeadlineScheduler()
        var expected: [Deadline] = []
        for index in 0..<500 {
            let at = Instant(millisecondsSinceEpoch: Int64.random(in: 0..<50, using: &random))
            let sequence = scheduler.schedule(.activityStale(activity: "a\(index)"), at: at)
            expected.append(Deadline(at: at, sequence: sequence, kind: .activityStale(activity: "a\(index)")))
            if index % 7 == 0 { scheduler.flush() }
        }
        var popped: [Deadline] = []
        while let next = scheduler.popDue(atOrBefore: Instant(millisecondsSinceEpoch: 100)) { popped.append(next) }
        #expect(popped == expected.sorted())
        #expect(popped.map(\.at) == popped.map(\.at).sorted())
    }

    @Test("a deadline superseded many times fires once, at its latest instant")
    func supersededDeadlines() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        for minutes in 1...50 {
            try sim.run([
                "type": "activity.update", "id": "a1",
                "content": ["state": [:], "staleDate": sim.date(after: Double(minutes * 60))],
            ])
        }
        let revision = try sim.advance(seconds: 3600)
        #expect(revision.transitions == 1)
        #expect(sim.state(of: "a1") == "stale")
    }

    @Test("ties: a stale date equal to the 8-hour end is superseded by the end scheduled before it")
    func tieOrder() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        try sim.run([
            "type": "activity.update", "id": "a1", "content": ["state": [:], "staleDate": sim.date(after: 8 * 3600)],
        ])
        let revision = try sim.advance(seconds: 8 * 3600)
        #expect(revision.transitions == 1, "the end fires first; the stale deadline is then no longer armed")
        #expect(sim.state(of: "a1") == "ended")
    }

    @Test("cost follows transitions, not elapsed time: a quiet year is one revision with none")
    func costFollowsTransitions() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        let revision = try sim.advance(seconds: 365 * 86_400)
        #expect(revision.transitions == 3, "end, dismissal, forgetting")
        #expect(sim.get("/activities/a1") == nil)
        #expect(sim.engine.nextDeadline == nil)
    }
}
