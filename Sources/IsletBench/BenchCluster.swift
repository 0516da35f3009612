import ArgumentParser
import Foundation
import IsletClient
import IsletServer
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `islet bench cluster`: what the shared log costs. Command → ack latency (the ack waits for
/// the node's own replica to apply the entry it read back from Redis) through a cluster of
/// `--nodes` on one `redis-server`, under each `appendfsync` asked for, beside a single node on
/// its SQLite log, at the same open-loop rate.
struct BenchCluster: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Measure command → ack latency through Redis Streams against a single node.",
        discussion: """
            For each setting: starts redis-server (Debian's, AOF on with the given appendfsync) on a
            free port in a temporary directory, --nodes `islet serve --cluster` children (this binary),
            waits for each /healthz to say ok, creates a device, an app and --keys activities, then
            sends --rate single-command batches per second (open loop, stream `command` messages over
            --clients connections to the first node) for --warmup + --seconds. The other nodes replay
            the same log meanwhile (on the same cores). `single` is one `islet serve` on a SQLite file
            (durability normal, writer thread): the baseline. Use a release build.
            """)

    @Option(help: "Comma-separated: single, always, everysec (appendfsync of the cluster's Redis).")
    var settings = "single,always,everysec"

    @Option(help: "Cluster nodes.")
    var nodes = 3

    @Option(help: "Batches per second in all (open loop).")
    var rate = 1000.0

    @Option(help: "Stream connections sending commands.")
    var clients = 8

    @Option(help: "Cap on batches in flight per connection.")
    var window = 64

    @Option(help: "Activities the updates go to.")
    var keys = 8

    @Option(help: "Seconds measured.")
    var seconds = 10

    @Option(help: "Seconds sent before measuring.")
    var warmup = 2

    func run() async throws {
        print("| setting | nodes | rate/s | commands/s | p50 ms | p99 ms | max ms | errors | held back |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for setting in self.settings.split(separator: ",").map(String.init) {
            print(try await self.measure(setting))
        }
    }

    private func measure(_ setting: String) async throws -> String {
        let common = ["--rate-limit", "0", "--demo", "off", "--virtual-clock", "2026-11-22T08:00:00Z"]
        let cluster: BenchClusterProcesses
        if setting == "single" {
            cluster = try await BenchClusterProcesses.single(common)
        } else {
            cluster = try await BenchClusterProcesses.start(nodes: self.nodes, appendfsync: setting, extra: common)
        }
        defer { cluster.stop() }
        let servers = cluster.servers
        let target = servers[0].port
        try await createWorld(port: target, keys: self.keys)
        var logger = Logger(label: "islet.bench")
        logger.logLevel = .error
        let generator = try await CommandLoadGenerator.start(logger: logger)
        let connected = try await generator.connect(count: self.clients, host: "127.0.0.1", port: target)
        guard connected.connections == self.clients else {
            _ = await generator.stop()
            throw ValidationError("only \(connected.connections) of \(self.clients) connected: \(connected.firstFailure ?? "-")")
        }
        let measured = try await generator.run(
            command: #"{"type":"activity.update","id":"a{k}","content":{"state":{"status":"s{n}","eta":5},"relevanceScore":50}}"#,
            keys: self.keys, window: self.window, rate: self.rate, warmup: .seconds(self.warmup),
            duration: .seconds(self.seconds))
        _ = await generator.stop()
        if let error = measured.firstError { printError("first error: \(error)") }
        let latencies = Latencies(nanoseconds: measured.latenciesNanoseconds)
        let cells = [
            setting == "single" ? "single node, SQLite" : "cluster, appendfsync \(setting)",
            "\(servers.count)", String(format: "%.0f", self.rate),
            String(format: "%.0f", Double(measured.acked) / measured.windowSeconds), latencies.milliseconds(0.5),
            latencies.milliseconds(0.99), latencies.maximum, "\(measured.errors)", "\(measured.heldBack)",
        ]
        return "| " + cells.joined(separator: " | ") + " |"
    }
}

/// The processes of a benchmark's cluster: redis-server (AOF on, with the given `appendfsync`)
/// in a temporary directory, `islet serve --cluster` children, and optionally HAProxy in front;
/// or one `islet serve` on a SQLite file, the baseline.
final class BenchClusterProcesses {
    let directory: String
    private(set) var servers: [ServerProcess] = []
    private var redis: Process?
    private var haproxy: Process?
    /// The balancer's port, once `balance()` started it.
    private(set) var balancerPort: Int?

    private init(directory: String) { self.directory = directory }

    static func single(_ extra: [String]) async throws -> BenchClusterProcesses {
        let processes = try BenchClusterProcesses(directory: Self.makeDirectory("single"))
        processes.servers.append(try ServerProcess.launch(extraArguments: extra + ["--db", processes.directory + "/single.sqlite"]))
        return processes
    }

    static func start(nodes: Int, appendfsync: String, extra: [String]) async throws -> BenchClusterProcesses {
        guard ["always", "everysec", "no"].contains(appendfsync) else {
            throw ValidationError("appendfsync is always, everysec or no, not \(appendfsync)")
        }
        let processes = try BenchClusterProcesses(directory: Self.makeDirectory(appendfsync))
        do {
            let port = try freePort()
            let redis = Process()
            redis.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
            redis.arguments = [
                "--bind", "127.0.0.1", "--port", String(port), "--dir", processes.directory, "--save", "",
                "--appendonly", "yes", "--appendfsync", appendfsync, "--logfile", processes.directory + "/redis.log",
            ]
            try BenchChildren.run(redis)
            processes.redis = redis
            try await waitFor("redis-server on \(port)") { canConnect(port: port) }
            for index in 0..<nodes {
                let server = try ServerProcess.launch(
                    extraArguments: extra + ["--cluster", "redis://127.0.0.1:\(port)", "--node-id", "bench-\(index)"])
                processes.servers.append(server)
                try await waitFor("node \(index) joined") {
                    let reply = try? await HTTPClient.request(
                        host: "127.0.0.1", port: server.port, method: "GET", path: "/healthz")
                    return reply.map { String(decoding: $0.body, as: UTF8.self).contains(#""cluster":"ok""#) } ?? false
                }
            }
        } catch {
            processes.stop()
            throw error
        }
        return processes
    }

    /// Starts HAProxy (Debian's) in front of the nodes, round robin, health-checked on `/healthz`.
    func balance() async throws -> Int {
        let port = try freePort()
        let servers = self.servers.enumerated().map { "  server n\($0.offset) 127.0.0.1:\($0.element.port) check" }
        let configuration = """
            global
              maxconn 9000
            defaults
              mode http
              timeout connect 2s
              timeout client 60s
              timeout server 60s
              timeout tunnel 1h
            frontend islet
              bind 127.0.0.1:\(port)
              maxconn 9000
              default_backend nodes
            backend nodes
              balance roundrobin
              option httpchk GET /healthz
            \(servers.joined(separator: "\n"))

            """
        let path = self.directory + "/haproxy.cfg"
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        let haproxy = Process()
        haproxy.executableURL = URL(fileURLWithPath: "/usr/sbin/haproxy")
        haproxy.arguments = ["-f", path, "-db", "-q"]
        try BenchChildren.run(haproxy)
        self.haproxy = haproxy
        try await waitFor("haproxy on \(port)") {
            (try? await HTTPClient.request(host: "127.0.0.1", port: port, method: "GET", path: "/healthz"))?.status == 200
        }
        self.balancerPort = port
        return port
    }

    /// The pid of HAProxy, when running.
    var balancerPID: Int32? { self.haproxy?.processIdentifier }

    func stop() {
        for server in self.servers { server.stop() }
        for process in [self.haproxy, self.redis].compactMap({ $0 }) {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            BenchChildren.release(process.processIdentifier)
        }
        self.servers = []
        self.haproxy = nil
        self.redis = nil
        BenchChildren.removeDirectory(self.directory)
    }

    private static func makeDirectory(_ name: String) throws -> String {
        try BenchChildren.makeDirectory("cluster-\(name)")
    }
}

/// A device, an app and `keys` coffee activities `a0…`, created in one batch.
func createWorld(port: Int, keys: Int) async throws {
    var commands = [
        #"{"type":"device.upsert","id":"d1","model":"iphone-15-pro"}"#,
        #"{"type":"config.set","values":{"maxActivitiesPerApp":100}}"#,
        #"{"type":"app.upsert","id":"coffee","foreground":true}"#,
    ]
    for key in 0..<keys {
        commands.append(
            #"{"type":"activity.request","id":"a\#(key)","app":"coffee","attributesType":"CoffeeDeliveryAttributes","attributes":{"orderNumber":"A-\#(key)"},"content":{"state":{"status":"received","eta":5}}}"#
        )
    }
    let body = "{\"commands\":[" + commands.joined(separator: ",") + "]}"
    let reply = try await HTTPClient.request(
        host: "127.0.0.1", port: port, method: "POST", path: "/v1/commands",
        headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    guard reply.status == 200 else {
        throw ValidationError("creating the world failed: \(String(decoding: reply.body, as: UTF8.self))")
    }
}

/// A free port on 127.0.0.1 (bound, read back, released).
private func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let rc = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 ? getsockname(fd, $0, &length) : -1 }
    }
    guard rc == 0 else { throw ValidationError("no free port: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

private func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// Polls `condition` every 20 ms for up to 15 s.
private func waitFor(_ what: String, _ condition: () async throws -> Bool) async throws {
    for _ in 0..<750 {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw ValidationError("timed out waiting for \(what)")
}
