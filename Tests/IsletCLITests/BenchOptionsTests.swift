import Foundation
import IsletTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `islet bench` refuses counts it cannot measure with a usage error, rather than dividing by
/// zero (a crash) or waiting for ever for connections that never come.
@Suite("islet bench option checks")
struct BenchOptionsTests {
    @Test(
        "a zero count (or too many simulations) is a usage error naming the option (exit 64), and a store log too short for a snapshot is refused",
        arguments: [
            (["engine", "--activities", "0"], "--activities must be at least 1, not 0"),
            (["engine", "--apps", "0"], "--apps must be at least 1, not 0"),
            (["simulations", "--count", "0"], "--count must be at least 1, not 0"),
            (["simulations", "--count", "1000000"], "--count must be at most 999997, not 1000000"),
            (["commands", "--clients", "0"], "--clients must be at least 1, not 0"),
            (["compression", "--connections", "0"], "--connections must be at least 1, not 0"),
            (["broadcast", "--subscribers", "0"], "--subscribers must be at least 1, not 0"),
            (["store", "--records", "100", "--snapshot-every", "100"], "--records (100) must be more than --snapshot-every (100)"),
        ])
    func zeroCounts(arguments: [String], message: String) throws {
        let run = try runIslet(["bench"] + arguments)
        #expect(run.status == 64, "\(run.errors)")
        #expect(run.errors.contains(message), "\(run.errors)")
    }

    @Test(
        "a benchmark stopped with SIGTERM stops the islet serve it started (it ran on, reparented to init) and removes its temporary directory, from the server's first moments (a signal it ignores, as its parent did) or once it handles SIGTERM",
        arguments: [
            (["broadcast", "--subscribers", "20", "--runs", "1000000"], nil, false),
            (["broadcast", "--subscribers", "20", "--runs", "1000000"], nil, true),
            (["simulations", "--count", "100000"], "sims", true),
        ] as [([String], String?, Bool)])
    func interruptedBenchStopsItsServer(arguments: [String], directoryName: String?, serverHandlesSIGTERM: Bool) throws {
        let bench = try IsletProcess(arguments: ["bench"] + arguments)
        var child: Int32?
        try waitUntil(timeout: .seconds(20), "the bench has started its server") {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(bench.pid)/task")) ?? []
            child = tasks.lazy.compactMap { task in
                (try? String(contentsOfFile: "/proc/\(bench.pid)/task/\(task)/children", encoding: .utf8))?
                    .split(separator: " ").first.flatMap { Int32($0) }
            }.first
            return child != nil
        }
        let server = try #require(child)
        if serverHandlesSIGTERM {
            try waitUntil(timeout: .seconds(20), "its server \(server) catches SIGTERM") {
                let status = (try? String(contentsOfFile: "/proc/\(server)/status", encoding: .utf8)) ?? ""
                let caught = status.split(separator: "\n").first { $0.hasPrefix("SigCgt:") }
                    .flatMap { UInt64($0.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16) }
                return (caught ?? 0) & (1 << (SIGTERM - 1)) != 0
            }
        }
        let directory = directoryName.map { FileManager.default.temporaryDirectory.path + "/islet-bench-\($0)-\(bench.pid)" }
        if let directory { #expect(FileManager.default.fileExists(atPath: directory)) }
        bench.send(signal: SIGTERM)
        #expect(try bench.waitForExit() == 128 + SIGTERM)
        try waitUntil(timeout: .seconds(10), "its server \(server) has exited") {
            // Gone, or a zombie waiting for init to reap it.
            guard let stat = try? String(contentsOfFile: "/proc/\(server)/stat", encoding: .utf8) else { return true }
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        if let directory { #expect(!FileManager.default.fileExists(atPath: directory), "\(directory) is removed") }
    }

    @Test("bench store puts a snapshot every --snapshot-every records even when that is not a multiple of its 1,000-record groups")
    func storeSnapshotInterval() throws {
        let run = try runIslet(["bench", "store", "--commits", "2", "--records", "100", "--snapshot-every", "30"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.output.contains("snapshot at 90,"), "\(run.output)")
    }
}
