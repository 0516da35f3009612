import ArgumentParser
import Foundation
import IsletClient
import IsletServer
import Synchronization

/// `islet bench simulations`: what a simulation costs. Creates empty simulations over HTTP on
/// an `islet serve` child process (each on its own SQLite file) and reads its resident memory
/// before and after; then forks a large world in this process, as the server does.
struct BenchSimulations: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulations",
        abstract: "Measure creating simulations, the memory of idle ones, and forking a large world.",
        discussion: "Use a release build: swift build -c release && .build/release/islet bench simulations")

    @Option(help: "Empty simulations to create.")
    var count = 1000

    @Option(help: "Activities in the world that is forked.")
    var activities = 10_000

    @Option(help: "Widgets (24 timeline entries each) in the world that is forked.")
    var widgets = 10_000

    @Option(help: "Forks of that world.")
    var forks = 5

    @Option(help: "Seconds to let the server settle before each memory reading.")
    var settleSeconds = 2

    @Option(help: "Revisions of a simulation then forked at its last but one while another client reads (0: skip).")
    var pastRevisions = 2000

    func validate() throws {
        try requirePositive(["count": self.count])
        // The server runs with --max-simulations count + 3, which is at most 1,000,000.
        guard self.count <= 999_997 else { throw ValidationError("--count must be at most 999997, not \(self.count)") }
    }

    func run() async throws {
        let directory = try BenchChildren.makeDirectory("sims")
        defer { BenchChildren.removeDirectory(directory) }
        let server = try ServerProcess.launch(extraArguments: [
            "--db", directory + "/islet.sqlite", "--demo", "off", "--max-simulations", String(self.count + 3),
        ])
        defer { server.stop() }
        try await Task.sleep(for: .seconds(self.settleSeconds))
        let before = try residentKiB(of: server.pid)
        var latencies: [Double] = []
        let clock = ContinuousClock()
        for index in 0..<self.count {
            let started = clock.now
            let reply = try await HTTPClient.request(
                host: "127.0.0.1", port: server.port, method: "POST", path: "/v1/simulations",
                headers: [("Content-Type", "application/json")], body: Array(#"{"id":"bench-\#(index)"}"#.utf8))
            latencies.append(seconds(started.duration(to: clock.now)))
            guard reply.status == 201 else {
                throw ValidationError("create \(index): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
            }
        }
        try await Task.sleep(for: .seconds(self.settleSeconds))
        let after = try residentKiB(of: server.pid)
        let past = self.pastRevisions > 0 ? try await pastFork(port: server.port, revisions: self.pastRevisions) : nil
        let store = (try? FileManager.default.attributesOfItem(atPath: directory + "/islet.simulations.sqlite"))?[.size] as? Int
        let sorted = latencies.sorted()
        print(
            """
            islet bench simulations
              create (POST /v1/simulations over HTTP/1.1, a new connection each, into the world store):
                \(self.count) simulations: p50 \(ms(sorted[sorted.count / 2])), p99 \(ms(sorted[sorted.count * 99 / 100])), \
            max \(ms(sorted.last!)), mean \(ms(latencies.reduce(0, +) / Double(latencies.count)))
              server VmRSS before: \(before) KiB, with \(self.count) idle simulations: \(after) KiB \
            (\(Int(Double(after - before) / Double(self.count))) KiB each), world store: \((store ?? 0) / 1024) KiB
            """)
        if let past {
            let reads = past.reads.sorted()
            print(
                """
                  fork at revision \(self.pastRevisions - 1) of a simulation of \(self.pastRevisions) revisions (its \
                records replayed from the genesis snapshot), while another client reads GET /v1/simulations/past/clock:
                    fork \(ms(past.fork)); \(reads.count) reads meanwhile: p50 \(ms(reads[reads.count / 2])), \
                max \(ms(reads.last!))
                """)
        }
        server.stop()
        let fork = try SimulationBenchmark.fork(
            activities: self.activities, widgets: self.widgets, runs: self.forks, directory: directory + "/fork")
        print(
            """
              fork of \(self.activities) activities and \(self.widgets) widgets (in process; world built in \
            \(String(format: "%.1f", fork.build)) s, genesis snapshot \(fork.snapshotBytes / 1024) KiB):
                engine copy: \(fork.copies.map(ms).joined(separator: ", "))
                until acknowledged (its row and reference to the source): \(fork.stores.map(ms).joined(separator: ", "))
                then, off the loop, its genesis snapshot encoded and written: \(fork.genesisWrites.map(ms).joined(separator: ", "))
            """)
    }
}

/// Creates simulation `past` with `revisions` revisions, then forks it at the one before its last
/// (its genesis snapshot and every record but one, replayed: snapshots come every 10,000) while a
/// second client reads from the server one request after another: how long the fork takes, and
/// how long each read took meanwhile (a server that replays on its loop answers none).
private func pastFork(port: Int, revisions: Int) async throws -> (fork: Double, reads: [Double]) {
    @Sendable func send(_ method: String, _ path: String, _ body: String = "") async throws -> HTTPClient.Reply {
        try await HTTPClient.request(
            host: "127.0.0.1", port: port, method: method, path: path,
            headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }
    func expect(_ reply: HTTPClient.Reply, _ status: Int, _ what: String) throws {
        guard reply.status == status else {
            throw ValidationError("\(what): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
    }
    try expect(try await send("POST", "/v1/simulations", #"{"id":"past"}"#), 201, "create past")
    let setup = #"""
        {"commands":[{"type":"device.upsert","id":"d1","model":"iphone-15-pro"},
        {"type":"app.upsert","id":"coffee","foreground":true},
        {"type":"activity.request","id":"a1","app":"coffee","attributesType":"CoffeeDeliveryAttributes",
        "attributes":{"orderNumber":"A-1"},"content":{"state":{"status":"received","eta":5}}}]}
        """#
    try expect(try await send("POST", "/v1/simulations/past/commands", setup), 200, "setup")
    for index in 1..<revisions {
        let update = #"{"commands":[{"type":"activity.update","id":"a1","content":{"state":{"status":"s\#(index)","eta":3}}}]}"#
        try expect(try await send("POST", "/v1/simulations/past/commands", update), 200, "update \(index)")
    }
    let clock = ContinuousClock()
    // Told to stop by a flag: a cancelled URLSession request may never return on Linux.
    let forked = Atomic<Bool>(false)
    let reader = Task {
        var reads: [Double] = []
        while !forked.load(ordering: .acquiring) {
            let started = clock.now
            _ = try? await send("GET", "/v1/simulations/past/clock")
            reads.append(seconds(started.duration(to: clock.now)))
        }
        return reads
    }
    let started = clock.now
    let fork = #"{"id":"past-fork","from":{"simulation":"past","rev":\#(revisions - 1)}}"#
    let reply = try await send("POST", "/v1/simulations", fork)
    let elapsed = seconds(started.duration(to: clock.now))
    forked.store(true, ordering: .releasing)
    let reads = await reader.value
    try expect(reply, 201, "fork")
    return (elapsed, reads)
}

private func seconds(_ duration: Duration) -> Double {
    let (whole, attoseconds) = duration.components
    return Double(whole) + Double(attoseconds) / 1e18
}

private func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1000) }
