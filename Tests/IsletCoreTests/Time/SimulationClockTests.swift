import IsletCore
import Testing

@Suite struct SimulationClockTests {
    let wall = try! Instant(rfc3339: "2026-11-22T08:00:00Z")

    @Test("a wall clock maps every wall instant to itself")
    func wallClock() {
        let clock = SimulationClock.wall(at: self.wall)
        let later = self.wall.adding(seconds: 12.5)
        #expect(clock.simulated(atWall: later) == later)
        #expect(clock.wall(forSimulated: later) == later)
    }

    @Test("a virtual clock runs at its rate from its anchor, and tells when a deadline comes")
    func virtualClock() throws {
        let start = try Instant(rfc3339: "2030-01-01T00:00:00Z")
        let clock = SimulationClock.virtual(now: start, rate: 60, atWall: self.wall)
        #expect(clock.simulated(atWall: self.wall.adding(seconds: 10)) == start.adding(seconds: 600))
        #expect(clock.wall(forSimulated: start.adding(seconds: 3600)) == self.wall.adding(seconds: 60))
        let paused = SimulationClock.virtual(now: start, atWall: self.wall)
        #expect(paused.simulated(atWall: self.wall.adding(seconds: 1000)) == start)
        #expect(paused.wall(forSimulated: start.adding(seconds: 1)) == nil)
    }

    @Test("extreme rates and distances saturate instead of trapping (a rate of 1e-300 killed the server)")
    func extremeRates() throws {
        let start = try Instant(rfc3339: "2030-01-01T00:00:00Z")
        let deadline = start.adding(seconds: 60)
        for rate in [1e-300, Double.leastNonzeroMagnitude, 1e-9] {
            let clock = SimulationClock.virtual(now: start, rate: rate, atWall: self.wall)
            // 60 s of simulated time at 1e-9 take 1900 years of wall time: still writable.
            if let wake = clock.wall(forSimulated: deadline) {
                #expect(wake > self.wall && wake <= .latestWritable, "rate \(rate)")
            }
            #expect(clock.wall(forSimulated: start.adding(seconds: 86_400 * 3650)) == nil, "rate \(rate)")
            #expect(clock.simulated(atWall: .latestWritable) >= start)
        }
        let fast = SimulationClock.virtual(now: start, rate: 1_000_000, atWall: self.wall)
        #expect(fast.simulated(atWall: .latestWritable) == .latestWritable)
        #expect(fast.simulated(atWall: .earliestWritable) == .earliestWritable)
        #expect(start.adding(seconds: 1e300) == start.adding(milliseconds: Instant.latestWritable.milliseconds(since: .earliestWritable)))
        #expect(start.adding(seconds: .nan) == start)
    }

    @Test("a manual time source moves only when told")
    func manualSource() {
        var source = ManualTimeSource(now: self.wall)
        source.advance(seconds: 1.5)
        #expect(source.now == self.wall.adding(seconds: 1.5))
    }
}
