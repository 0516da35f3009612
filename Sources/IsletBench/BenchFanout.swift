import ArgumentParser
import Foundation
import IsletClient
import IsletServer
import Logging

/// `islet bench fanout`: N subscribers on 127.0.0.1, K changes per second; change→receive
/// latency, loss, server CPU per delivered frame and server memory (DESIGN.md fan-out budget).
struct BenchFanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Measure stream fan-out: latency, loss, CPU per frame and memory at N subscribers.",
        discussion: """
            Starts `islet serve` (this binary) as a child process, creates one device, one app and one
            activity, opens N subscribers to --path from this process (libwebsockets client mode,
            one loop thread), then a driver connection sends K activity updates per second as stream
            `command` messages for --seconds. Latency is from sending a command to each subscriber
            receiving the patch of its revision (acks name the revision), on one monotonic clock.
            Server CPU is utime+stime of the server process over the window, divided by the frames
            delivered. Use a release build.
            """)

    @Option(help: "Subscribers; a comma-separated list runs each in turn (a new server each).")
    var subscribers = "1000,5000,10000"

    @Option(help: "Changes per second.")
    var rate = 10.0

    @Option(help: "Seconds of the measured window.")
    var seconds = 20

    @Option(help: "The path each subscriber subscribes to.")
    var path = "/activities/a1"

    @Option(help: "Seconds between runs (lets TIME_WAIT sockets expire).")
    var pause = 5

    @Option(
        help: "Cluster nodes on a redis-server (appendfsync always) behind HAProxy; subscribers and the driver connect through the balancer (0: one node, no cluster). Server CPU and RSS are summed over the nodes.")
    var cluster = 0

    func run() async throws {
        let counts = self.subscribers.split(separator: ",").compactMap { Int($0) }
        let limit = raiseOpenFileLimit()
        guard let largest = counts.max(), limit > largest + 64 else {
            throw ValidationError("open-file limit \(limit) is too low for \(counts.max() ?? 0) subscribers")
        }
        print(
            "| subscribers | changes/s | frames | frames/s | p50 ms | p99 ms | max ms | lost | resyncs | server CPU µs/frame | server RSS start → end (max) MiB | generator CPU µs/frame | patch bytes |"
        )
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
        for (index, count) in counts.enumerated() {
            if index > 0 { try await Task.sleep(for: .seconds(self.pause)) }
            print(try await self.measure(subscribers: count))
        }
    }

    private func measure(subscribers count: Int) async throws -> String {
        var logger = Logger(label: "islet.bench")
        logger.logLevel = .error
        let processes =
            self.cluster > 0
            ? try await BenchClusterProcesses.start(nodes: self.cluster, appendfsync: "always", extra: ["--demo", "off"])
            : nil
        let single = processes == nil ? try ServerProcess.launch() : nil
        defer {
            single?.stop()
            processes?.stop()
        }
        let port = try await processes?.balance() ?? single!.port
        let pids = processes?.servers.map(\.pid) ?? [single!.pid]
        let cpuOfNodes = { try pids.reduce(0.0) { $0 + (try cpuSeconds(of: $1)) } }
        let rssOfNodes = { try pids.reduce(0) { $0 + (try residentKiB(of: $1)) } }
        let world = #"""
            {"commands":[{"type":"device.upsert","id":"d1","model":"iphone-15-pro"},
            {"type":"app.upsert","id":"coffee","foreground":true},
            {"type":"activity.request","id":"a1","app":"coffee","attributesType":"CoffeeDeliveryAttributes",
             "attributes":{"orderNumber":"A-1"},"content":{"state":{"status":"received","eta":5}}}]}
            """#
        _ = try await HTTPClient.request(
            host: "127.0.0.1", port: port, method: "POST", path: "/v1/commands",
            headers: [("Content-Type", "application/json")], body: Array(world.utf8))
        let generator = try await FanoutLoadGenerator.start(logger: logger)
        let opened = try await generator.connect(count: count, host: "127.0.0.1", port: port, path: self.path)
        guard opened.subscribed == count else {
            _ = await generator.stop()
            throw ValidationError(
                "only \(opened.subscribed) of \(count) subscribed (\(opened.failed) failed: \(opened.firstFailure ?? "-"))"
            )
        }
        try await Task.sleep(for: .seconds(2))
        let rssStart = try rssOfNodes()
        let cpuStart = try cpuOfNodes()
        let ownStart = try cpuSeconds(of: getpid())
        let sampler = Task { @Sendable in
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, pids.reduce(0) { $0 + ((try? residentKiB(of: $1)) ?? 0) })
                try? await Task.sleep(for: .milliseconds(500))
            }
            return peak
        }
        let command = #"{"type":"activity.update","id":"a1","content":{"state":{"status":"step {n}","eta":{n}}}}"#
        let result = try await generator.drive(
            command: command, rate: self.rate, duration: .seconds(self.seconds), drain: .seconds(2))
        let cpu = try cpuOfNodes() - cpuStart
        let own = try cpuSeconds(of: getpid()) - ownStart
        let rssEnd = try rssOfNodes()
        sampler.cancel()
        let rssPeak = max(await sampler.value, rssEnd)
        _ = await generator.stop()
        let latencies = Latencies(nanoseconds: result.latenciesNanoseconds)
        let frames = result.framesReceived
        let seconds = Double(self.seconds)
        let perFrame = frames > 0 ? cpu * 1e6 / Double(frames) : 0
        let ownPerFrame = frames > 0 ? own * 1e6 / Double(frames) : 0
        let mib = { (kib: Int) in String(format: "%.1f", Double(kib) / 1024) }
        return "| \(count) | \(Int(self.rate)) | \(frames) | \(Int(Double(frames) / seconds)) | \(latencies.milliseconds(0.5)) | "
            + "\(latencies.milliseconds(0.99)) | \(latencies.maximum) | "
            + "\(result.lost) | \(result.resyncs) | \(String(format: "%.2f", perFrame)) | "
            + "\(mib(rssStart)) → \(mib(rssEnd)) (\(mib(rssPeak))) | \(String(format: "%.2f", ownPerFrame)) | \(result.patchBytes) |"
    }
}
