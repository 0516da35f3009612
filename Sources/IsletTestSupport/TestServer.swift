public import IsletCore

/// How test servers start: on a fixed simulated instant (so dates never depend on when the
/// tests run) and without the demo scenario (so revisions are the tests' own).
public enum TestServer {
    /// 2026-11-22T08:00:00Z: the servers of `.testing()` start on a paused virtual clock here.
    public static let start = Instant(secondsSinceEpoch: 1_795_334_400)

    /// `islet serve` arguments for such a process: clock at `start`, demo off.
    public static let serveArguments = ["--virtual-clock", "2026-11-22T08:00:00Z", "--demo", "off"]
}
