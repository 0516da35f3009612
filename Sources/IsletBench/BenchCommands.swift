import ArgumentParser
import Foundation
import IsletClient
import IsletServer
import Logging

/// `islet bench commands`: the command path's budget (DESIGN.md: ≥ 20,000 commands/s accepted,
/// persisted and acknowledged with group commit; p99 ack ≤ 5 ms).
struct BenchCommands: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "commands",
        abstract: "Measure commands/s and ack latency through the server, with the log on disk.",
        discussion: """
            Starts `islet serve` (this binary) as a child process on a database file in --dir, for each
            durability and store writer asked for; creates a device, an app and --keys coffee
            activities; then --clients stream connections each keep --window single-command batches
            in flight (`command` messages: an activity.update whose status changes every time; the
            next is sent as each ack arrives) for --warmup + --seconds. Latency is send → ack on one
            monotonic clock, for batches sent in the measured window. The rate limit is off. Server
            CPU is the child's utime+stime over the run divided by the commands acked. Use a release
            build.
            """)

    @Option(help: "Comma-separated: normal, full, memory (a :memory: log: the cost without a file).")
    var durability = "normal,full"

    @Option(help: "Comma-separated store writers: thread, loop.")
    var writer = "thread,loop"

    @Option(help: "Stream connections sending commands.")
    var clients = 32

    @Option(help: "Batches in flight per connection.")
    var window = 4

    @Option(help: "Open loop: batches per second in all, paced every millisecond (default: closed loop).")
    var rate: Double?

    @Option(help: "Activities the updates go to (connection index modulo this).")
    var keys = 8

    @Option(help: "Seconds measured.")
    var seconds = 10

    @Option(help: "Seconds sent before measuring.")
    var warmup = 2

    @Option(help: "Directory for the database files (default: a new temporary one, removed afterwards).")
    var dir: String?

    @Option(help: "The command object; {n} is the batch number, {k} the activity index.")
    var command =
        #"{"type":"activity.update","id":"a{k}","content":{"state":{"status":"s{n}","eta":5},"relevanceScore":50}}"#

    func validate() throws {
        try requirePositive(["clients": self.clients, "window": self.window, "keys": self.keys, "seconds": self.seconds])
    }

    func run() async throws {
        let (directory, isTemporary) = try BenchChildren.directory(given: self.dir, else: "commands")
        defer { if isTemporary { BenchChildren.removeDirectory(directory) } }
        let load = self.rate.map { String(format: "paced %.0f/s, clients × cap", $0) } ?? "clients × window"
        print(
            "| durability | writer | \(load) | commands/s | p50 ms | p99 ms | max ms | errors | held back | server CPU µs/command | log MiB |"
        )
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for durability in self.durability.split(separator: ",").map(String.init) {
            for writer in self.writer.split(separator: ",").map(String.init) {
                print(try await self.measure(durability: durability, writer: writer, directory: directory))
            }
        }
    }

    private func measure(durability: String, writer: String, directory: String) async throws -> String {
        let db = durability == "memory" ? ":memory:" : "\(directory)/bench-\(durability)-\(writer).sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: db + suffix) }
        let server = try ServerProcess.launch(extraArguments: [
            "--db", db, "--durability", durability == "memory" ? "normal" : durability, "--store-writer", writer,
            "--rate-limit", "0", "--demo", "off", "--virtual-clock", "2026-11-22T08:00:00Z",
        ])
        defer { server.stop() }
        try await createWorld(port: server.port, keys: self.keys)
        var logger = Logger(label: "islet.bench")
        logger.logLevel = .error
        let generator = try await CommandLoadGenerator.start(logger: logger)
        let connected = try await generator.connect(count: self.clients, host: "127.0.0.1", port: server.port)
        guard connected.connections == self.clients else {
            _ = await generator.stop()
            throw ValidationError(
                "only \(connected.connections) of \(self.clients) connected: \(connected.firstFailure ?? "-")")
        }
        let cpuStart = try cpuSeconds(of: server.pid)
        let measured = try await generator.run(
            command: self.command, keys: self.keys, window: self.window, rate: self.rate, warmup: .seconds(self.warmup),
            duration: .seconds(self.seconds))
        let cpu = try cpuSeconds(of: server.pid) - cpuStart
        _ = await generator.stop()
        if let error = measured.firstError { printError("first error: \(error)") }
        let latencies = Latencies(nanoseconds: measured.latenciesNanoseconds)
        // The server ran for warmup + window + drain; its CPU is spread over every command it acked.
        let total = Double(measured.acked) * Double(self.warmup + self.seconds) / Double(self.seconds)
        let cells = [
            durability, writer, "\(self.clients) × \(self.window)",
            String(format: "%.0f", Double(measured.acked) / measured.windowSeconds), latencies.milliseconds(0.5),
            latencies.milliseconds(0.99), latencies.maximum, "\(measured.errors)",
            "\(measured.heldBack)",
            String(format: "%.1f", cpu * 1e6 / max(total, 1)),
            durability == "memory"
                ? "-" : String(format: "%.1f", Double(fileBytes(db) + fileBytes(db + "-wal")) / 1_048_576),
        ]
        return "| " + cells.joined(separator: " | ") + " |"
    }
}

private func fileBytes(_ path: String) -> Int {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
}
