/// Forking: a new world that starts where another one stands.
extension Engine {
    /// This world as the first state of a new history (revision 0): the same document, byte for
    /// byte, unless `clock` moves it. A fork's clock may start at any instant, also before this
    /// world's: what happened stays, and the rules apply from the new instant on.
    ///
    /// - Parameters:
    ///   - clock: the new world's clock, if it differs (its instant is the one at `wall`).
    ///   - tokenSalt: mixed into every push token the new world generates, so that two worlds
    ///     given the same commands still hand out different tokens (tokens copied by the fork
    ///     stay as they are).
    public func forked(clock: SimulationClock?, atWall wall: Instant, tokenSalt: UInt64) -> Engine {
        var fork = self
        if let clock {
            let start = clock.simulated(atWall: wall)
            // A later start is this world run forward to it: each transition due by then happens
            // at its own instant (an activity ends 8 hours after it started, not when the fork
            // starts), as a restart after downtime replays them, all in the fork's revision 0.
            if let next = fork.nextDeadline, next <= start {
                fork.runDeadlines(upTo: start)
                fork.now = start
                _ = fork.finishRevision(results: [])
                fork.settleScheduler()
            }
            fork.clock = clock
            fork.now = start
            fork.document[.clock, "now"] = .string(fork.now.rfc3339)
            fork.document[.clock, "mode"] = .string(clock.mode.rawValue)
            fork.document[.clock, "rate"] = .number(clock.rate)
        }
        // Past every mark the source (and its run forward) stamped: else what a source revision
        // of the same number touched would count as already listed in the fork's revision, and
        // go unpublished.
        fork.markBase = fork.revisionMark
        fork.rev = 0
        fork.counters.tokenSalt = tokenSalt & Counters.saltMask
        return fork
    }
}
