public import IsletCore

/// The simulated instant live tests start from, so their dates never depend on when they run.
public enum TestClock {
    /// 2026-11-22T08:00:00Z: the servers of `.testing()` start on a paused virtual clock here.
    public static let start = Instant(secondsSinceEpoch: 1_795_334_400)

    /// `islet serve` arguments that start the process's clock at `start`.
    public static let serveArguments = ["--virtual-clock", "2026-11-22T08:00:00Z"]
}
