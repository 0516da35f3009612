/// Thins out log lines that repeat: within each second, a line is let through `perSecond` times;
/// the next line after that second also reports how many of each were left out. lws repeats a
/// line at every loop turn when something keeps failing (an `accept` at the open-file limit),
/// which would fill a disk. Time is an argument, so the thinning is tested without a clock.
struct RepeatedLines {
    static let perSecond = 10
    /// Distinct lines counted in one second, at most: beyond that a new line is let through
    /// uncounted.
    static let tracked = 1024

    private var since: ContinuousClock.Instant?
    private var counts: [String: Int] = [:]

    /// Whether to log `line` now, and the lines of the second before that were left out, with
    /// how many of each.
    mutating func admit(_ line: String, at now: ContinuousClock.Instant) -> (log: Bool, leftOut: [(String, Int)]) {
        var leftOut: [(String, Int)] = []
        if self.since.map({ now - $0 >= .seconds(1) }) ?? true {  // a new second
            leftOut = self.counts.filter { $0.value > Self.perSecond }.map { ($0.key, $0.value - Self.perSecond) }
                .sorted { $0.0 < $1.0 }
            self.counts = [:]
            self.since = now
        }
        guard self.counts[line] != nil || self.counts.count < Self.tracked else { return (true, leftOut) }
        self.counts[line, default: 0] += 1
        return (self.counts[line]! <= Self.perSecond, leftOut)
    }
}
