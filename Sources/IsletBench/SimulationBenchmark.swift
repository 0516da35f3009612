import Foundation
import IsletCore
import IsletRender
import IsletServer
import Logging

/// `islet bench simulations`, the in-process half: what forking a large world costs the loop
/// (copying the engine, then storing its genesis snapshot in a new SQLite log).
enum SimulationBenchmark {
    /// The fork timings, in seconds.
    struct ForkReport: Sendable {
        var build: Double
        var snapshotBytes: Int
        var copies: [Double]
        /// Until the fork is acknowledged: its row and reference in the world store.
        var stores: [Double]
        /// After it, off the loop: its genesis snapshot encoded and written.
        var genesisWrites: [Double] = []
    }

    /// Builds a world of `activities` activities and `widgets` widgets (24 entries each), then
    /// forks it `runs` times into a world store under `directory`, as `POST /v1/simulations`
    /// with `from` does.
    static func fork(activities: Int, widgets: Int, runs: Int, directory: String) throws -> ForkReport {
        let clock = ContinuousClock()
        let started = clock.now
        var engine = try BenchWorld.build(activities: activities, apps: max(1, activities / 200))
        try BenchWidgetWorld.add(to: &engine, .init(widgets: widgets, entries: 24, stagger: true))
        var report = ForkReport(build: seconds(started.duration(to: clock.now)), snapshotBytes: 0, copies: [], stores: [])
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = IsletConfiguration()
        configuration.store.path = directory + "/islet.sqlite"
        let storage = SimulationStorage.beside(configuration, loop: nil)
        var logger = Logger(label: "islet.bench")
        logger.logLevel = .warning
        let wall = engine.now
        for run in 0..<runs {
            let copyStarted = clock.now
            let genesis = engine.forked(clock: nil, atWall: wall, tokenSalt: UInt64(run + 1))
            report.copies.append(seconds(copyStarted.duration(to: clock.now)))
            // What the reply waits for: the fork's row and its reference to the source.
            let storeStarted = clock.now
            let reference = ForkReference(source: "default", rev: engine.rev, clock: nil, created: wall, salt: UInt64(run + 1))
            let stored = try storage.create(
                "fork-\(run)", engine: genesis, wall: wall, tokens: nil, fork: reference, configuration: configuration,
                logger: logger)
            report.stores.append(seconds(storeStarted.duration(to: clock.now)))
            // What follows off the loop: encoding and writing the genesis snapshot.
            let genesisStarted = clock.now
            stored.stage.writeGenesis(genesis, wall: wall) { _ in }
            report.genesisWrites.append(seconds(genesisStarted.duration(to: clock.now)))
            if run == 0 { report.snapshotBytes = genesis.snapshotBytes.count }
        }
        return report
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (whole, attoseconds) = duration.components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
