import ArgumentParser
import Foundation
import IsletServer

/// `islet bench store`: the options of `StoreBenchmark`, which measures in process, and the
/// directory its database files live in.
struct BenchStore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Measures IsletStore: append latency and throughput with group commit, and recovery time.")

    @Option(help: "Directory for the benchmark's database files, removed afterwards (default: a new temporary one).")
    var dir: String?

    @Option(help: "Transactions measured for each group size and durability (twice as many, one a millisecond, when paced).")
    var commits = 2000

    @Option(help: "Payload bytes per record.")
    var payloadBytes = 300

    @Option(help: "Records in the recovery log.")
    var records = 1_000_000

    @Option(help: "Records between two snapshots of the recovery log.")
    var snapshotEvery = 10_000

    @Option(help: "Bytes in each snapshot of the recovery log.")
    var snapshotBytes = 1_000_000

    @Flag(help: "Measure appends only.")
    var skipRecovery = false

    func validate() throws {
        try requirePositive(["commits": self.commits, "records": self.records, "snapshot-every": self.snapshotEvery])
        // The log's last snapshot is one interval before its end: a shorter log has none.
        guard self.skipRecovery || self.records > self.snapshotEvery else {
            throw ValidationError("--records (\(self.records)) must be more than --snapshot-every (\(self.snapshotEvery))")
        }
    }

    func run() throws {
        let directory = try self.makeDirectory()
        defer { BenchChildren.removeDirectory(directory) }
        let benchmark = StoreBenchmark(
            commits: self.commits, payloadBytes: self.payloadBytes, records: self.records,
            snapshotEvery: self.snapshotEvery, snapshotBytes: self.snapshotBytes, skipRecovery: self.skipRecovery)
        try benchmark.run(in: directory) { print($0) }
    }

    /// A new directory, inside `--dir` when given.
    private func makeDirectory() throws -> String {
        guard let parent = self.dir else { return try BenchChildren.makeDirectory("store") }
        let path = "\(parent)/islet-bench-store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
