/// Where a checkpoint (copying the WAL back into the database file, with its fsyncs) happens.
///
/// A checkpoint is the slow part of SQLite's WAL mode: measured on this project's machine it
/// stalls the commit that triggers it for 5–10 ms, while an ordinary commit takes 0.01–0.3 ms
/// (BENCHMARKS.md). A server that appends from its event loop therefore wants `.background`.
public struct Checkpointing: Hashable, Sendable {
    /// WAL size, in pages, that triggers a checkpoint; nil for SQLite's automatic checkpoint.
    let walPages: Int?

    /// SQLite's automatic checkpoint: the commit that takes the WAL past 1,000 pages (about
    /// 4 MiB) checkpoints before `append` returns. Simplest; fits tools and tests.
    public static let inline = Self(walPages: nil)

    /// A background queue with a connection of its own checkpoints once the WAL passes 1,000
    /// pages, so `append` never waits for a checkpoint. The default.
    public static let background = Self(walPages: 1000)

    /// Like `.background`, with another WAL size (in pages, at least 1) as the trigger.
    public static func background(walPages: Int) -> Self {
        precondition(walPages >= 1, "a checkpoint threshold is at least one page")
        return Self(walPages: walPages)
    }
}
