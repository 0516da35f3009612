import ArgumentParser
import Foundation
import IsletServer
import Logging

/// `islet bench compression`: the server CPU and wire bytes that `--ws-compression`
/// (permessage-deflate) costs per message. The server is a separate process (this binary's
/// `serve --conformance-echo`, with and without `--ws-compression`); clients in this process
/// send patch-like JSON messages to `/v1/echo` and wait for each echo, so every message is
/// inflated once and deflated once by the server when compression is on.
struct BenchCompression: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compression",
        abstract: "Measure the server CPU and bytes per message with and without permessage-deflate.",
        discussion: "Use a release build: swift build -c release && .build/release/islet bench compression")

    @Option(help: "Messages measured per row (after as many again to warm up).")
    var messages = 50_000

    @Option(help: "WebSocket connections the messages are spread over.")
    var connections = 4

    @Option(help: "Messages each connection keeps unanswered.")
    var window = 8

    @Option(help: "Message sizes in bytes, comma-separated (patch-like JSON of about that size).")
    var sizes = "300,4096"

    @Option(help: "Connections that each exchange one message, to measure server memory per connection (0: skip).")
    var memoryConnections = 500

    func validate() throws {
        try requirePositive(["messages": self.messages, "connections": self.connections, "window": self.window])
    }

    func run() async throws {
        var logger = Logger(label: "islet.bench")
        logger.logLevel = .warning
        let sizes = self.sizes.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        print("islet bench compression: \(self.messages) messages per row over \(self.connections) connections")
        print(
            "| permessage-deflate | message | server CPU µs/message | bytes on the wire/message, server → client | messages/s |"
        )
        print("| --- | ---: | ---: | ---: | ---: |")
        var memory: [(Bool, Int)] = []
        for compression in [false, true] {
            let server = try ServerProcess.launch(
                extraArguments: ["--conformance-echo"] + (compression ? ["--ws-compression"] : []))
            defer { server.stop() }
            let generator = try await EchoLoadGenerator.start(compression: compression, logger: logger)
            for size in sizes {
                let payloads = (0..<256).map { patchLikeJSON(bytes: size, variant: $0) }
                let row = try await self.measure(server: server, generator: generator, payloads: payloads)
                let average = payloads.reduce(0) { $0 + $1.count } / payloads.count
                print(
                    "| \(compression ? "on" : "off") | \(average) B | \(format(row.cpuMicroseconds)) "
                        + "| \(format(row.bytesWritten)) | \(Int(row.rate)) |")
            }
            if !(await generator.stop()) {
                printError("islet bench compression: the client loop did not close cleanly")
            }
            if self.memoryConnections > 0 {
                memory.append(
                    (compression, try await self.memoryPerConnection(server: server, compression: compression)))
            }
        }
        for (compression, bytes) in memory {
            print(
                "server memory per connection after one echoed message, \(compression ? "with" : "without") "
                    + "compression: \(bytes) bytes (VmRSS, \(self.memoryConnections) connections)")
        }
    }

    /// VmRSS growth of the server, per connection, once `memoryConnections` connections have each
    /// had one 262-byte message echoed.
    private func memoryPerConnection(server: ServerProcess, compression: Bool) async throws -> Int {
        var logger = Logger(label: "islet.bench")
        logger.logLevel = .warning
        let before = try residentKiB(of: server.pid)
        let clients = try await EchoLoadGenerator.start(compression: compression, logger: logger)
        _ = try await clients.run(
            host: "127.0.0.1", port: server.port, connections: self.memoryConnections,
            messages: self.memoryConnections, payloads: [patchLikeJSON(bytes: 300, variant: 0)], window: 1)
        try await Task.sleep(for: .seconds(1))
        let after = try residentKiB(of: server.pid)
        _ = await clients.stop()
        return (after - before) * 1024 / self.memoryConnections
    }

    private struct Row {
        var cpuMicroseconds: Double
        var bytesWritten: Double
        var rate: Double
    }

    private func measure(
        server: ServerProcess, generator: EchoLoadGenerator, payloads: [[UInt8]]
    ) async throws
        -> Row
    {
        _ = try await self.send(generator, server, payloads, count: self.messages)  // warm-up
        let cpuBefore = try cpuNanoseconds(of: server.pid)
        let writtenBefore = try bytesSent(fromPort: server.port)
        let started = ContinuousClock.now
        _ = try await self.send(generator, server, payloads, count: self.messages)
        let elapsed = ContinuousClock.now - started
        let cpu = Double(try cpuNanoseconds(of: server.pid) - cpuBefore) / 1000
        let written = Double(try bytesSent(fromPort: server.port) - writtenBefore)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let count = Double(self.messages)
        return Row(cpuMicroseconds: cpu / count, bytesWritten: written / count, rate: count / seconds)
    }

    private func send(
        _ generator: EchoLoadGenerator, _ server: ServerProcess, _ payloads: [[UInt8]], count: Int
    )
        async throws -> EchoLoadGenerator.Report
    {
        let report = try await generator.run(
            host: "127.0.0.1", port: server.port, connections: self.connections, messages: count, payloads: payloads,
            window: self.window)
        guard report.echoed == count, report.mismatched == 0 else {
            throw ValidationError(
                "echoed \(report.echoed) of \(count), \(report.mismatched) mismatched, "
                    + "failure: \(report.firstFailure ?? "none")")
        }
        return report
    }
}

/// A `patch` stream message of about `bytes` bytes: replace operations on an activity's content
/// state and its rendered HTML slots, the shape of Islet's patches (docs/API.md). `variant`
/// changes the revision, the activity, the times, the progress and the texts, so consecutive
/// messages differ as a stream's patches do.
func patchLikeJSON(bytes: Int, variant: Int) -> [UInt8] {
    let statuses = ["Preparing", "On the way", "Arriving", "Delivered", "Delayed by traffic"]
    let couriers = ["Sam", "Ana", "Kenji", "Priya", "Lukas", "Mei"]
    let activity = "coffee-\(String(variant * 7919 % 65536, radix: 16))"
    let minutes = 10 + variant % 50
    let progress = Double(variant % 100) / 100
    let status = statuses[variant % statuses.count]
    var text = #"{"type":"patch","rev":\#(48213 + variant),"ops":["#
    text += #"{"op":"replace","path":"/activities/\#(activity)/content/state","#
    text += #""value":{"courier":"\#(couriers[variant % couriers.count])","eta":"2026-11-22T08:\#(minutes):00Z","#
    text += #""progress":\#(progress),"status":"\#(status)"}}"#
    let slots = ["compactLeading", "compactTrailing", "minimal", "lockScreen", "expanded/center", "expanded/bottom"]
    var index = 0
    while text.utf8.count < bytes - 120 {
        let slot = slots[index % slots.count]
        text += #",{"op":"replace","path":"/activities/\#(activity)/render/\#(slot)","value":"#
        text +=
            #""<div class=\"la coffee\"><img src=\"/assets/cup.svg\" alt=\"\"><span class=\"eta\">8:\#(minutes)</span>"#
        text += #"<span class=\"status\">\#(status)</span><progress value=\"\#(progress)\"></progress></div>"}"#
        index += 1
    }
    text +=
        #",{"op":"replace","path":"/clock/now","value":"2026-11-22T08:\#(10 + variant % 49):\#(10 + variant % 47)Z"}]}"#
    return Array(text.utf8)
}

private func format(_ value: Double) -> String { String(format: "%.1f", value) }

/// CPU time of every thread of a process, in nanoseconds (first field of each thread's
/// /proc/<pid>/task/<tid>/schedstat: time spent running).
func cpuNanoseconds(of pid: Int32) throws -> UInt64 {
    let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
    var total: UInt64 = 0
    for task in tasks {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
            let running = stat.split(separator: " ").first.flatMap({ UInt64($0) })
        else { continue }
        total += running
    }
    return total
}

/// TCP payload bytes sent so far by the open connections whose local port is `port` (the sum
/// of `bytes_sent` that `ss -ti` reports): what the server put on the wire, frames included.
func bytesSent(fromPort port: Int) throws -> UInt64 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ss")
    process.arguments = ["-tinH", "sport = :\(port)"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    var total: UInt64 = 0
    for field in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
    where field.hasPrefix("bytes_sent:") {
        total += UInt64(field.dropFirst("bytes_sent:".count)) ?? 0
    }
    return total
}
