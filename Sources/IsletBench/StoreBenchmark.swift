import Foundation
import IsletServer
import IsletStore
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `islet bench store`: group-commit latency and throughput of `CommandLog.append` at each
/// durability, and the time to recover a long log from its latest snapshot. `islet bench
/// store` parses the options.
///
/// This measures the store alone, on the calling thread; acknowledgement latency through the
/// server is measured with the server integration. Results are reported as Markdown tables.
struct StoreBenchmark: Sendable {
    /// Transactions measured for each group size and durability.
    var commits: Int
    /// Payload bytes per record.
    var payloadBytes: Int
    /// Records in the recovery log.
    var records: Int
    /// Records between two snapshots of the recovery log.
    var snapshotEvery: Int
    /// Bytes in each snapshot of the recovery log.
    var snapshotBytes: Int
    /// Measure appends only.
    var skipRecovery: Bool

    init(
        commits: Int, payloadBytes: Int, records: Int, snapshotEvery: Int, snapshotBytes: Int, skipRecovery: Bool
    ) {
        self.commits = commits
        self.payloadBytes = payloadBytes
        self.records = records
        self.snapshotEvery = snapshotEvery
        self.snapshotBytes = snapshotBytes
        self.skipRecovery = skipRecovery
    }

    /// Measures with database files in `directory` (which the caller creates and removes), handing
    /// each line of the report to `report` as it is measured.
    func run(in directory: String, report: (String) -> Void) throws {
        let path = "\(directory)/append.sqlite"
        report("## Append, back to back (\(self.commits) transactions each, \(self.payloadBytes)-byte payloads)\n")
        report(AppendResult.header)
        for durability in Durability.allCases {
            for checkpointing in checkpointings {
                for group in [1, 10, 100] {
                    let setup = AppendSetup(
                        durability: durability, checkpointing: checkpointing, group: group, commits: self.commits)
                    report(try self.benchAppend(setup, path: path).row)
                }
            }
        }
        // Twice as many as back to back, one a millisecond: 4 s each by default.
        let turns = 2 * self.commits
        report(
            "\n## Append, paced like a loop turn: 20 records every 1 ms (20,000 records/s), \(turns) turns "
                + "(\(Double(turns) / 1000) s)\n")
        report(AppendResult.header)
        for durability in Durability.allCases {
            for checkpointing in checkpointings {
                let setup = AppendSetup(
                    durability: durability, checkpointing: checkpointing, group: 20, commits: turns,
                    interval: .milliseconds(1))
                report(try self.benchAppend(setup, path: path).row)
            }
        }
        if !self.skipRecovery {
            try self.benchRecovery(path: "\(directory)/recovery.sqlite", report)
        }
    }

    /// Appends `commits` groups (after 100 unmeasured ones), timing each `append` call; with an
    /// interval, each group starts on its own tick, as a server's loop turns would.
    private func benchAppend(_ setup: AppendSetup, path: String) throws -> AppendResult {
        defer { removeDatabase(path) }
        let log = try CommandLog(
            path: path, durability: setup.durability, checkpointing: setup.checkpointing.value, logger: silentLogger)
        var bytes = PayloadBytes(seed: UInt64(setup.group))
        // Payloads are made before timing starts, so only the store is measured.
        let payloads = (0..<1024).map { _ in bytes.next(self.payloadBytes) }
        let clock = ContinuousClock()
        var result = AppendResult(setup: setup)
        result.latencies.reserveCapacity(setup.commits)
        var measuredStart = clock.now
        for commit in -100..<setup.commits {
            if commit == 0 { measuredStart = clock.now }
            if let interval = setup.interval { waitUntil(measuredStart + interval * max(commit, 0), clock: clock) }
            let first = log.lastSequence + 1
            let batch = (0..<UInt64(setup.group)).map {
                LogRecord(sequence: first + $0, instant: 0, kind: .batch, payload: payloads[Int((first + $0) % 1024)])
            }
            let before = clock.now
            try log.append(batch)
            if commit >= 0 { result.latencies.append(before.duration(to: clock.now)) }
            result.maxWALBytes = max(result.maxWALBytes, fileSize(path + "-wal"))
        }
        result.seconds = measuredStart.duration(to: clock.now).seconds
        return result
    }

    private func benchRecovery(path: String, _ report: (String) -> Void) throws {
        defer { removeDatabase(path) }
        let clock = ContinuousClock()
        let writing = try clock.measure { try self.writeRecoveryLog(path: path) }
        let fileBytes = fileSize(path)

        var snapshot: LogSnapshot?
        var log: CommandLog?
        let opening = try clock.measure {
            log = try CommandLog(path: path, durability: .normal, logger: silentLogger)
            snapshot = try log?.latestSnapshot()
        }
        guard let log, let snapshot else { throw BenchmarkError(description: "the recovery log has no snapshot") }
        var tail = ReadTally()
        let tailRead = try clock.measure { try log.forEachRecord(after: snapshot.sequence) { tail.add($0) } }
        var all = ReadTally()
        let fullRead = try clock.measure { try log.forEachRecord(after: 0) { all.add($0) } }
        let compaction = try clock.measure { try log.compact(keepingRecords: 0, reclaimingSpace: true) }
        let compactedBytes = fileSize(path)

        report(
            "\n## Recovery of a \(self.records)-record log (snapshot every \(self.snapshotEvery), "
                + "\(self.snapshotBytes)-byte snapshots)\n\n| step | time | detail |\n| --- | ---: | --- |")
        report(stepRow("write the log (groups of 1,000, `normal`)", writing, "file \(mebibytes(fileBytes)) MiB"))
        let snapshotDetail = "snapshot at \(snapshot.sequence), \(snapshot.payload.count) bytes"
        report(stepRow("(a) open + latestSnapshot", opening, snapshotDetail))
        let tailDetail = "\(tail.count) records, \(tail.bytes) bytes"
        report(stepRow("(b) read the tail after the snapshot", tailRead, tailDetail))
        let startupDetail = "what startup costs the store (engine replay not included)"
        report(stepRow("(a) + (b)", opening + tailRead, startupDetail))
        report(stepRow("read all records", fullRead, "\(all.count) records, \(all.bytes) payload bytes"))
        let compactedDetail = "file \(mebibytes(compactedBytes)) MiB after"
        report(stepRow("compact (delete before snapshot + VACUUM)", compaction, compactedDetail))
        report("\nmax RSS of this process: \(maxResidentMiB()) MiB")
    }

    /// Records in groups of up to 1,000 (a group ends where a snapshot falls); a snapshot every
    /// `snapshotEvery` records, except at the very end, so the tail is a full interval long (the
    /// worst case: killed just before the next snapshot).
    private func writeRecoveryLog(path: String) throws {
        let log = try CommandLog(path: path, durability: .normal, logger: silentLogger)
        var bytes = PayloadBytes(seed: 7)
        let snapshotPayload = bytes.next(self.snapshotBytes)
        var sequence: UInt64 = 0
        while sequence < UInt64(self.records) {
            let toSnapshot = UInt64(self.snapshotEvery) - sequence % UInt64(self.snapshotEvery)
            let count = min(1000, UInt64(self.records) - sequence, toSnapshot)
            let batch = (1...count).map {
                LogRecord(
                    sequence: sequence + $0, instant: Int64(sequence + $0), kind: .batch,
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

private let checkpointings: [(name: String, value: Checkpointing)] = [("inline", .inline), ("background", .background)]

private struct AppendSetup {
    var durability: Durability
    var checkpointing: (name: String, value: Checkpointing)
    var group: Int
    var commits: Int
    var interval: Duration? = nil
}

private struct AppendResult {
    static let header = """
        | durability | checkpoints | records/commit | records/s | commits/s | p50 ms | p99 ms | max ms | max WAL MiB |
        | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
        """

    let setup: AppendSetup
    var latencies: [Duration] = []
    var seconds = 0.0
    var maxWALBytes = 0

    var row: String {
        let sorted = self.latencies.sorted()
        let cells = [
            self.setup.durability.rawValue, self.setup.checkpointing.name, "\(self.setup.group)",
            whole(Double(self.setup.commits * self.setup.group) / self.seconds),
            whole(Double(self.setup.commits) / self.seconds), millis(sorted.percentile(0.50)),
            millis(sorted.percentile(0.99)), millis(sorted.last ?? .zero), mebibytes(self.maxWALBytes),
        ]
        return "| " + cells.joined(separator: " | ") + " |"
    }
}

/// Sleeps until shortly before `deadline`, then spins, so ticks start on time without burning a core.
private func waitUntil(_ deadline: ContinuousClock.Instant, clock: ContinuousClock) {
    let early = deadline - .microseconds(100)
    if clock.now < early { usleep(UInt32(clock.now.duration(to: early).seconds * 1_000_000)) }
    while clock.now < deadline {}
}

/// A benchmark that cannot report what it measured.
struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
}

private let silentLogger = Logger(label: "islet.bench.store") { _ in SwiftLogNoOpLogHandler() }

private func fileSize(_ path: String) -> Int {
    var status = stat()
    return stat(path, &status) == 0 ? Int(status.st_size) : 0
}

private func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
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

private func stepRow(_ step: String, _ time: Duration, _ detail: String) -> String {
    "| \(step) | \(millis(time)) ms | \(detail) |"
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
