public import IsletCore
import IsletStore
public import IsletTransport
public import Logging

/// Opens a server's command log and recovers its state: what `RunningServer` does before it
/// listens, and what tools and tests call to start from the same place.
public enum StorePersistence {
    /// Opens `configuration.store.path` (exclusively), restores the latest snapshot and replays the
    /// records after it, and returns the state with the commit stage that continues the log.
    ///
    /// Must be called on the thread that will own the log for `.caller` and `.loop` threads (the
    /// loop thread, or the caller's).
    /// - Parameters:
    ///   - loop: the server's loop, or nil for a stage that does everything on the calling thread.
    ///   - wall: now (a new store's engine starts here).
    /// With `configuration.store.replayPath`, the scenario file is first replayed into the store
    /// (which must hold no revision yet).
    /// - Throws: `StoreError` (the file cannot be used), `RecoveryError` (its log does not
    ///   replay) or `ScenarioError` (the scenario file cannot be replayed).
    public static func open(
        _ configuration: IsletConfiguration, loop: EventLoop?, wall: Instant, logger: Logger
    ) throws -> (state: RecoveredState, stage: StoreCommitStage) {
        let settings = configuration.store
        // A scenario is checked before the log is created or touched.
        if let replay = settings.replayPath { try ScenarioImport.check(file: replay, configuration: configuration) }
        let log = try CommandLog(path: settings.path, durability: settings.durability, logger: logger)
        let clock = ContinuousClock()
        let started = clock.now
        if let replay = settings.replayPath {
            let summary = try ScenarioImport.run(file: replay, into: log, configuration: configuration)
            logger.info(
                "scenario replayed",
                metadata: [
                    "islet.replay.file": "\(replay)", "islet.replay.lines": "\(summary.lines)",
                    "islet.replay.revisions": "\(summary.revisions)",
                    "islet.replay.clock_advances": "\(summary.clockAdvances)",
                ])
        }
        var state = try StoreRecovery.recover(log, configuration: configuration, wall: wall, logger: logger)
        state.logID = try log.identity()
        let elapsed = started.duration(to: clock.now)
        logger.info(
            state.created ? "store created" : "store recovered",
            metadata: [
                "islet.store.path": "\(settings.path)", "islet.store.epoch": "\(state.epoch)",
                "islet.store.rev": "\(state.engine.rev)", "islet.store.snapshot": "\(state.snapshotSequence)",
                "islet.store.replayed": "\(state.replayedRecords)", "islet.store.recovery": "\(elapsed)",
            ])
        if !state.created, configuration.virtualClockStart != nil, settings.replayPath == nil {
            logger.info(
                "the store already holds a simulation: its clock is kept, --virtual-clock applies to new stores")
        }
        let threads: StoreCommitStage.Threads
        switch (loop, settings.writer) {
        case (nil, _): threads = .caller
        case (let loop?, .loop): threads = .loop(loop)
        case (let loop?, .thread): threads = .writer(loop)
        }
        let stage = StoreCommitStage(
            log: log, settings: settings, threads: threads, lastSnapshot: (state.snapshotSequence, wall),
            logger: logger)
        return (state, stage)
    }
}
