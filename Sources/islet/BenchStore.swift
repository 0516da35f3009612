import ArgumentParser
import Foundation
import IsletStore
import Logging

/// `islet bench store`: group-commit latency and throughput of `CommandLog.append` at each
/// durability, and the time to recover a long log from its latest snapshot.
///
/// This measures the store alone, on the calling thread; acknowledgement latency through the
/// server is measured with the server integration. Results are printed as Markdown tables.
struct BenchStore: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Measures IsletStore: append latency and throughput with group commit, and recovery time.")

    @Option(help: "Directory for the benchmark's database files, removed afterwards (default: a new temporary one).")
    var dir: String?

    @Option(help: "Transactions measured for each group size and durability.")
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

    func run() throws {
        let directory = try self.makeDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("## Append with group commit (\(self.commits) transactions each, \(self.payloadBytes)-byte payloads)\n")
        print("| durability | records/commit | records/s | commits/s | p50 ms | p99 ms | max ms |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for durability in Durability.allCases {
            for group in [1, 10, 100] {
                try self.benchAppend(durability: durability, group: group, path: "\(directory)/append.sqlite")
            }
        }
        if !self.skipRecovery {
            try self.benchRecovery(path: "\(directory)/recovery.sqlite")
        }
    }

    private func makeDirectory() throws -> String {
        let parent = self.dir ?? FileManager.default.temporaryDirectory.path
        let path = "\(parent)/islet-bench-store-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func benchAppend(durability: Durability, group: Int, path: String) throws {
        defer { removeDatabase(path) }
        let log = try CommandLog(path: path, durability: durability, logger: silentLogger)
        var bytes = PayloadBytes(seed: UInt64(group))
        // Payloads are made before timing starts, so only the store is measured.
        let payloads = (0..<1024).map { _ in bytes.next(self.payloadBytes) }
        let warmUp = 100
        var latencies: [Duration] = []
        latencies.reserveCapacity(self.commits)
        let clock = ContinuousClock()
        let start = clock.now
        var measuredStart = start
        for commit in 0..<(warmUp + self.commits) {
            if commit == warmUp { measuredStart = clock.now }
            let first = log.lastSequence + 1
            let batch = (0..<UInt64(group)).map {
                LogRecord(sequence: first + $0, instant: 0, kind: .batch, payload: payloads[Int((first + $0) % 1024)])
            }
            let before = clock.now
            try log.append(batch)
            if commit >= warmUp { latencies.append(before.duration(to: clock.now)) }
        }
        let seconds = measuredStart.duration(to: clock.now).seconds
        let sorted = latencies.sorted()
        let row = [
            durability.rawValue, "\(group)", whole(Double(self.commits * group) / seconds),
            whole(Double(self.commits) / seconds), millis(sorted.percentile(0.50)), millis(sorted.percentile(0.99)),
            millis(sorted.last ?? .zero),
        ]
        print("| " + row.joined(separator: " | ") + " |")
    }

    private func benchRecovery(path: String) throws {
        defer { removeDatabase(path) }
        let clock = ContinuousClock()
        let writing = try clock.measure { try self.writeRecoveryLog(path: path) }
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0

        var snapshot: LogSnapshot?
        var log: CommandLog?
        let opening = try clock.measure {
            log = try CommandLog(path: path, durability: .normal, logger: silentLogger)
            snapshot = try log?.latestSnapshot()
        }
        guard let log, let snapshot else { throw ValidationError("the recovery log has no snapshot") }
        var tail = ReadTally()
        let tailRead = try clock.measure { try log.forEachRecord(after: snapshot.sequence) { tail.add($0) } }
        var all = ReadTally()
        let fullRead = try clock.measure { try log.forEachRecord(after: 0) { all.add($0) } }
        let compaction = try clock.measure { try log.compact(keepingRecords: 0, reclaimingSpace: true) }
        let compactedBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0

        print("\n## Recovery of a \(self.records)-record log (snapshot every \(self.snapshotEvery), "
            + "\(self.snapshotBytes)-byte snapshots)\n")
        print("| step | time | detail |")
        print("| --- | ---: | --- |")
        print("| write the log (groups of 1,000, `normal`) | \(millis(writing)) ms | file \(mebibytes(fileBytes)) MiB |")
        print("| (a) open + latestSnapshot | \(millis(opening)) ms | snapshot at \(snapshot.sequence), \(snapshot.payload.count) bytes |")
        print("| (b) read the tail after the snapshot | \(millis(tailRead)) ms | \(tail.count) records, \(tail.bytes) payload bytes |")
        print("| (a) + (b) | \(millis(opening + tailRead)) ms | what startup costs the store (engine replay not included) |")
        print("| read all records | \(millis(fullRead)) ms | \(all.count) records, \(all.bytes) payload bytes |")
        print("| compact (delete before snapshot + VACUUM) | \(millis(compaction)) ms | file \(mebibytes(compactedBytes)) MiB after |")
        print("\nmax RSS of this process: \(maxResidentMiB()) MiB")
    }

    /// Records in groups of 1,000; a snapshot every `snapshotEvery` records, except at the very end,
    /// so the tail is a full interval long (the worst case: killed just before the next snapshot).
    private func writeRecoveryLog(path: String) throws {
        let log = try CommandLog(path: path, durability: .normal, logger: silentLogger)
        var bytes = PayloadBytes(seed: 7)
        let snapshotPayload = bytes.next(self.snapshotBytes)
        var sequence: UInt64 = 0
        while sequence < UInt64(self.records) {
            let count = min(1000, UInt64(self.records) - sequence)
            let batch = (1...count).map {
                LogRecord(sequence: sequence + $0, instant: Int64(sequence + $0), kind: .batch,
                          payload: bytes.next(self.payloadBytes))
            }
            try log.append(batch)
            sequence += count
            if sequence % UInt64(self.snapshotEvery) == 0, sequence < UInt64(self.records) {
                try log.writeSnapshot(sequence: sequence, instant: Int64(sequence), payload: snapshotPayload)
            }
        }
    }
}

private let silentLogger = Logger(label: "islet.bench.store") { _ in SwiftLogNoOpLogHandler() }

private func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// Cheap, deterministic, incompressible-looking bytes (xorshift64).
private struct PayloadBytes {
    var state: UInt64

    init(seed: UInt64) { self.state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    mutating func next(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in
            self.state ^= self.state << 13
            self.state ^= self.state >> 7
            self.state ^= self.state << 17
            return UInt8(truncatingIfNeeded: self.state)
        }
    }
}

/// Counts what was read, so the reading cannot be optimised away.
private struct ReadTally {
    var count = 0
    var bytes = 0

    mutating func add(_ record: LogRecord) {
        self.count += 1
        self.bytes += record.payload.count
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(self.components.seconds) + Double(self.components.attoseconds) / 1e18
    }
}

extension [Duration] {
    /// The value at fraction `p` of a sorted array (nearest rank).
    fileprivate func percentile(_ p: Double) -> Duration {
        guard !self.isEmpty else { return .zero }
        return self[Swift.min(self.count - 1, Int((Double(self.count) * p).rounded(.up)) - 1)]
    }
}

private func millis(_ duration: Duration) -> String {
    String(format: "%.3f", duration.seconds * 1000)
}

private func mebibytes(_ bytes: Int) -> String {
    String(format: "%.1f", Double(bytes) / 1_048_576)
}

private func whole(_ value: Double) -> String {
    String(Int(value.rounded()))
}

private func maxResidentMiB() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss / 1024
}
