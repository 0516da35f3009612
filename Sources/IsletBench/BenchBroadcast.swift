import ArgumentParser
import Foundation
import IsletClient
import IsletCore
import IsletServer
import Logging

/// `islet bench broadcast`: one APNs broadcast to a channel with many subscribed activities, on
/// an `islet serve` child process: the time from sending the push to its acknowledgement and to
/// the patch that carries every subscriber's update reaching a stream subscriber, the server's
/// CPU for it, and its memory with that many activities.
struct BenchBroadcast: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast",
        abstract: "Measure one broadcast push to a channel with many subscribed Live Activities.",
        discussion: "Use a release build: swift build -c release && .build/release/islet bench broadcast")

    @Option(help: "Activities subscribed to the channel.")
    var subscribers = 10_000

    @Option(help: "Broadcasts sent, one after the other (each waits for its patch).")
    var runs = 10

    func validate() throws {
        try requirePositive(["subscribers": self.subscribers, "runs": self.runs])
    }

    func run() async throws {
        let server = try ServerProcess.launch(extraArguments: ["--demo", "off"])
        defer { server.stop() }
        let empty = try residentKiB(of: server.pid)
        let channel = try await self.setUp(port: server.port)
        let populated = try residentKiB(of: server.pid)

        let patches = PatchArrivals()
        let options = StreamTail.Options(host: "127.0.0.1", port: server.port, path: "/v1/stream", paths: ["/activities"])
        let tail = Task {
            try await StreamTail.run(
                options,
                logger: Logger(label: "bench-broadcast")
            ) { line in patches.receive(line) }
        }
        try await patches.waitForSnapshot()
        var acknowledged: [UInt64] = []
        var delivered: [UInt64] = []
        var cpu: [Double] = []
        var patchBytes = 0
        for run in 0..<self.runs {
            let body = #"{"aps":{"timestamp":\#(1_795_766_400 + run),"event":"update","content-state":{"home":\#(run),"away":0,"status":"Goal!"}}}"#
            let cpuBefore = try cpuSeconds(of: server.pid)
            let started = ContinuousClock.now
            let reply = try await HTTPClient.request(
                host: "127.0.0.1", port: server.port, method: "POST", path: "/4/broadcasts/apps/bench",
                headers: [("apns-push-type", "liveactivity"), ("apns-channel-id", channel), ("apns-priority", "10")],
                body: Array(body.utf8))
            acknowledged.append(nanoseconds(started.duration(to: .now)))
            guard reply.status == 200 else { throw ValidationError("broadcast \(run): \(reply.status)") }
            let (arrived, bytes) = try await patches.next()
            delivered.append(nanoseconds(started.duration(to: arrived)))
            patchBytes = bytes
            cpu.append(try cpuSeconds(of: server.pid) - cpuBefore)
        }
        let afterBroadcasts = try residentKiB(of: server.pid)
        server.stop()
        _ = try? await tail.value
        let ack = Latencies(nanoseconds: acknowledged)
        let patch = Latencies(nanoseconds: delivered)
        let meanCPU = cpu.reduce(0, +) / Double(cpu.count)
        print(
            """
            islet bench broadcast (\(self.subscribers) activities subscribed to one channel, \(self.runs) broadcasts)
              push → 200 (committed, every subscriber updated): p50 \(ack.milliseconds(0.5)) ms, max \(ack.maximum) ms
              push → the patch at a /activities subscriber (\(patchBytes / 1024) KiB): p50 \(patch.milliseconds(0.5)) ms, \
            max \(patch.maximum) ms
              server CPU per broadcast (user + system, /proc; includes encoding the patch): \
            \(String(format: "%.0f", meanCPU * 1000)) ms
              server VmRSS: empty \(empty / 1024) MiB, with \(self.subscribers) activities \(populated / 1024) MiB, \
            after the broadcasts \(afterBroadcasts / 1024) MiB
            """)
    }

    /// A paused clock, one device, the app, limits raised, a channel, and the subscribers.
    private func setUp(port: Int) async throws -> String {
        let limits = self.subscribers + 10
        try await post(
            port, "/v1/commands",
            commands: [
                ["type": "clock.set", "mode": "virtual", "rate": 0],
                ["type": "device.upsert", "id": "d1", "model": "iphone-15-pro"],
                ["type": "app.upsert", "id": "bench", "name": "Scores", "foreground": true],
                [
                    "type": "config.set",
                    "values": [
                        "maxActivitiesPerApp": .number(Double(limits)), "maxActivitiesPerDevice": .number(Double(limits)),
                        "pushBudgetPerHour": 100_000,
                    ],
                ],
            ])
        let created = try await HTTPClient.request(
            host: "127.0.0.1", port: port, method: "POST", path: "/1/apps/bench/channels", headers: [],
            body: Array(#"{"message-storage-policy":0,"push-type":"LiveActivity"}"#.utf8))
        guard created.status == 201, let channel = created.headers["apns-channel-id"] else {
            throw ValidationError("channel: \(created.status)")
        }
        var index = 0
        while index < self.subscribers {
            let batch = (index..<min(index + 500, self.subscribers)).map { number -> JSONValue in
                [
                    "type": "activity.request", "id": .string("game-\(number)"), "app": "bench",
                    "attributesType": "MatchAttributes", "attributes": ["home": "Lions", "away": "Bears"],
                    "content": ["state": ["home": 0, "away": 0, "status": "Kick-off"]],
                    "pushType": ["channel": .string(channel)],
                ]
            }
            try await post(port, "/v1/commands", commands: batch)
            index += batch.count
        }
        return channel
    }

    private func post(_ port: Int, _ path: String, commands: [JSONValue]) async throws {
        let reply = try await HTTPClient.request(
            host: "127.0.0.1", port: port, method: "POST", path: path, headers: [("Content-Type", "application/json")],
            body: JSONValue.object(["commands": .array(commands)]).encoded)
        guard reply.status == 200 else {
            throw ValidationError("\(path): \(reply.status) \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
        }
    }
}

/// Patch messages as they arrive at the stream subscriber, handed to the benchmark one by one.
private final class PatchArrivals: @unchecked Sendable {
    private struct State {
        var snapshot = false
        var arrivals: [(ContinuousClock.Instant, Int)] = []
    }

    /// Guarded by `lock`.
    private var state = State()
    private let lock = NSLock()

    func receive(_ line: String) {
        let now = ContinuousClock.now
        // The type is near the end of `{"ops":…,"rev":n,"type":"patch"}`; no need to parse 10,000 ops.
        let tail = line.suffix(64)
        self.lock.withLock {
            if tail.contains(#""type":"patch""#) {
                self.state.arrivals.append((now, line.utf8.count))
            } else if line.contains(#""type":"snapshot""#) {
                self.state.snapshot = true
            }
        }
    }

    func waitForSnapshot() async throws {
        try await self.poll { state in state.snapshot ? () : nil }
    }

    func next() async throws -> (ContinuousClock.Instant, Int) {
        try await self.poll { state in state.arrivals.isEmpty ? nil : state.arrivals.removeFirst() }
    }

    /// Polls every millisecond (the benchmark's own thread; the server is another process) for
    /// up to 60 s.
    private func poll<T>(_ take: (inout State) -> T?) async throws -> T {
        let deadline = ContinuousClock.now.advanced(by: .seconds(60))
        while ContinuousClock.now < deadline {
            if let value = self.lock.withLock({ take(&self.state) }) { return value }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw ValidationError("no message from the stream within 60 s")
    }
}

private func nanoseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
}
