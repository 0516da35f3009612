import Foundation
import IsletCore
import IsletRender
import IsletServer
import Logging

/// The in-process measurements of `islet bench recovery`: startup on a long log, and what
/// snapshots of the scale worlds cost. `islet bench
/// recovery` builds the log, spawns the server processes and prints the tables.
enum RecoveryBenchmark {
    /// Opens `configuration.store.path` as a server starts (restore the latest snapshot, replay
    /// the records after it), then closes it.
    /// - Returns: how many records were replayed.
    static func startUp(_ configuration: IsletConfiguration, logger: Logger) throws -> Int {
        let opened = try StorePersistence.open(configuration, loop: nil, wall: BenchWorld.start, logger: logger)
        return opened.state.replayedRecords
    }

    /// Snapshots and restores the engine scale world with `activities` activities (0 skips it) and
    /// the widget scale world with `widgets` widgets (0 skips it), one report line each.
    static func snapshotCosts(activities: Int, widgets: Int, report: (String) -> Void) throws {
        if activities > 0 {
            var engine = try BenchWorld.build(activities: activities, apps: 1000)
            report(try self.snapshotCosts("\(activities) activities, 1,000 apps, 3 devices", &engine))
        }
        if widgets > 0 {
            var engine = Engine(renderer: MustacheRenderer(), at: BenchWorld.start, clock: BenchWorld.pausedClock)
            try BenchWidgetWorld.add(to: &engine, .init(widgets: widgets, entries: 24, stagger: false))
            report(try self.snapshotCosts("\(widgets) widgets × 24 entries", &engine))
        }
    }

    private static func snapshotCosts(_ name: String, _ engine: inout Engine) throws -> String {
        let clock = ContinuousClock()
        var bytes: [UInt8] = []
        let encoding = clock.measure { bytes = engine.snapshotBytes }
        var restored: Engine?
        let decoding = try clock.measure {
            restored = try Engine(snapshot: try JSONParser(maxDepth: 1024).parse(bytes), renderer: MustacheRenderer())
        }
        let same = restored?.documentBytes == engine.documentBytes
        return "| \(name) | \(bytes.count / 1024) KiB | encode \(millis(encoding)) ms | restore \(millis(decoding)) ms | "
            + "document equal: \(same) |"
    }
}

private func millis(_ duration: Duration) -> String {
    String(format: "%.0f", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
}
