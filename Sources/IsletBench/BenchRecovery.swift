import ArgumentParser
import Foundation
import IsletServer
import Logging

/// `islet bench recovery`: restart time for a long command log (DESIGN.md: a 1,000,000-command
/// log recovered, snapshot + tail, in ≤ 2 s), and what snapshots of large worlds cost.
struct BenchRecovery: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recovery",
        abstract: "Measure startup on a long command log, and snapshot costs of large worlds.",
        discussion: """
            Builds a log of --revisions single-command revisions produced by the engine (mostly activity \
            updates), with a snapshot every --snapshot-every revisions except at the end, so startup \
            replays a whole interval (a server killed just before its next snapshot). Then times the \
            startup path in this process (open, restore the snapshot, replay the tail) and `islet serve \
            --db` as a child process from spawn to its listening line (killed with SIGKILL after each \
            run, so no shutdown snapshot shortens the next). With --scale-activities or \
            --scale-widgets, also times snapshotting and restoring those worlds. Use a release build.
            """)

    @Option(help: "Revisions in the log.")
    var revisions = 1_000_000

    @Option(help: "Revisions between two snapshots.")
    var snapshotEvery = 10_000

    @Option(help: "Startup runs measured (each in-process and as a process).")
    var runs = 3

    @Option(help: "Directory for the database (default: a new temporary one, removed afterwards).")
    var dir: String?

    @Option(help: "Also measure a snapshot of the engine scale world with this many activities (0: skip).")
    var scaleActivities = 10_000

    @Option(help: "Also measure a snapshot of the widget scale world with this many widgets (0: skip).")
    var scaleWidgets = 0

    @Flag(help: "Skip the log; measure only the scale snapshots.")
    var snapshotsOnly = false

    func run() async throws {
        if !self.snapshotsOnly { try self.recovery() }
        try RecoveryBenchmark.snapshotCosts(activities: self.scaleActivities, widgets: self.scaleWidgets) { print($0) }
    }

    private func recovery() throws {
        let (directory, isTemporary) = try BenchChildren.directory(given: self.dir, else: "recovery")
        defer { if isTemporary { BenchChildren.removeDirectory(directory) } }
        let path = directory + "/recovery.sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }

        let clock = ContinuousClock()
        var report: RecoveryLogBuilder.Report?
        let building = try clock.measure {
            report = try RecoveryLogBuilder.build(
                path: path, revisions: self.revisions, snapshotEvery: self.snapshotEvery
            ) {
                printError("  … \($0) revisions")
            }
        }
        guard let report else { return }
        print("## Recovery of a \(report.revisions)-revision log (snapshot every \(self.snapshotEvery))\n")
        print(
            "Built in \(seconds(building)) s: \(report.snapshots) snapshots written, the last at \(report.lastSnapshot) "
                + "(\(report.snapshotBytes) bytes with its stream history); file \(mebibytes(path)) MiB.\n")
        print("| run | in-process startup (open + restore + replay) | replayed | `islet serve` spawn → listening |")
        print("| ---: | ---: | ---: | ---: |")
        var configuration = IsletConfiguration()
        configuration.store.path = path
        let quiet = Logger(label: "islet.bench") { _ in SwiftLogNoOpLogHandler() }
        for run in 1...self.runs {
            var replayed = 0
            let inProcess = try clock.measure { replayed = try RecoveryBenchmark.startUp(configuration, logger: quiet) }
            let spawn = clock.now
            let server = try ServerProcess.launch(extraArguments: ["--db", path, "--demo", "off"])
            let listening = spawn.duration(to: clock.now)
            server.kill()
            print("| \(run) | \(millis(inProcess)) ms | \(replayed) | \(millis(listening)) ms |")
        }
        print("")
    }
}

private func seconds(_ duration: Duration) -> String {
    String(format: "%.1f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
}

private func millis(_ duration: Duration) -> String {
    String(format: "%.0f", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
}

private func mebibytes(_ path: String) -> String {
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    return String(format: "%.1f", Double(size) / 1_048_576)
}
