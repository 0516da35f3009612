import Foundation
import IsletCore
import IsletTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A real `redis-server` (Debian's) on a port of its own, with its files in `directory`: AOF on
/// and fsynced at every write, so a restart keeps every acknowledged entry.
final class RedisServer {
    let port: Int
    let directory: String
    private var process: Process?

    init(directory: String) throws {
        self.directory = directory
        self.port = try TestSocket.unusedPort()
        try self.start()
    }

    /// Starts (or restarts) the server on the same port and files, and waits for `PING`.
    func start() throws {
        guard let path = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { throw TestClientError("redis-server is missing: scripts/bootstrap --test installs it") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [
            "--bind", "127.0.0.1", "--port", String(self.port), "--dir", self.directory, "--save", "",
            "--appendonly", "yes", "--appendfsync", "always", "--logfile", self.directory + "/redis.log",
        ]
        try process.run()
        self.process = process
        try waitUntil(timeout: .seconds(10), "redis-server answers PING") {
            (try? self.command(["PING"])) == "+PONG"
        }
    }

    /// Kills the server (SIGKILL: with `appendfsync always` every acknowledged write is on disk
    /// already; and a test process's children inherit a mask that blocks SIGTERM) and waits for it.
    func stop() {
        guard let process = self.process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    /// Sends one command over a fresh connection; returns the reply's first line (`+PONG`, `:12`…).
    @discardableResult
    func command(_ arguments: [String]) throws -> String {
        let socket = try TestSocket.connect(port: self.port)
        defer { socket.close() }
        var request = "*\(arguments.count)\r\n"
        for argument in arguments { request += "$\(argument.utf8.count)\r\n\(argument)\r\n" }
        try socket.write(Array(request.utf8))
        var reply: [UInt8] = []
        while !reply.contains(10) { reply += try socket.read() }
        return String(decoding: reply.prefix { $0 != 13 }, as: UTF8.self)
    }

    /// An integer reply (`XLEN`, `DBSIZE`…).
    func integer(_ arguments: [String]) throws -> Int {
        let reply = try self.command(arguments)
        guard reply.hasPrefix(":"), let value = Int(reply.dropFirst()) else { throw TestClientError("not an integer: \(reply)") }
        return value
    }

    deinit { self.stop() }
}

/// `islet serve --cluster` as a child process, on the test clock, without the demo.
struct ClusterNodeProcess {
    let process: IsletProcess
    let port: Int
    let node: String

    static func start(_ node: String, redis: RedisServer, _ extra: [String] = []) throws -> ClusterNodeProcess {
        let process = try IsletProcess(
            arguments: ["serve", "--port", "0", "--cluster", "redis://127.0.0.1:\(redis.port)", "--node-id", node]
                + TestServer.serveArguments + extra)
        let started = ClusterNodeProcess(process: process, port: try process.waitForListening(), node: node)
        try started.waitForHealth("ok")
        return started
    }

    /// Waits until `/healthz` reports this `cluster` status.
    func waitForHealth(_ status: String, timeout: Duration = .seconds(10)) throws {
        try waitUntil(timeout: timeout, "\(self.node) reports \(status)") {
            (try? TestHTTP.request(port: self.port, "/healthz").json()["cluster"]?.stringValue) == status
        }
    }

    /// The published revision of `simulation` here.
    func rev(_ simulation: String? = nil) throws -> UInt64 {
        UInt64(try TestHTTP.state(port: self.port, path: "/clock", simulation: simulation).json()["rev"]?.numberValue ?? -1)
    }

    /// `GET /v1/state` (the whole document) exactly as sent.
    func document(_ simulation: String? = nil) throws -> [UInt8] {
        try TestHTTP.state(port: self.port, simulation: simulation).body
    }

    /// `GET /v1/cluster`.
    func cluster() throws -> JSONValue { try TestHTTP.request(port: self.port, "/v1/cluster").json() }

    func kill() {
        self.process.send(signal: SIGKILL)
        _ = try? self.process.waitForExit()
    }

    func stop() {
        self.process.send(signal: SIGTERM)
        _ = try? self.process.waitForExit()
    }
}

/// A redis-server (in a temporary directory, also handed to `body`) and a node per name on it,
/// each started with `extra`; every node is stopped afterwards.
func withCluster(
    _ names: [String], _ extra: [String] = [],
    _ body: (RedisServer, [ClusterNodeProcess], TemporaryDirectory) throws -> Void
) throws {
    try withTemporaryDirectory { dir in
        let redis = try RedisServer(directory: dir.path)
        var nodes: [ClusterNodeProcess] = []
        defer { for node in nodes { node.stop() } }
        for name in names { nodes.append(try ClusterNodeProcess.start(name, redis: redis, extra)) }
        try body(redis, nodes, dir)
    }
}

/// Polls `condition` (every 10 ms) until it holds; throws naming `what` after `timeout`.
func waitUntil(timeout: Duration, _ what: String, _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return }
        usleep(10_000)
    }
    throw TestClientError("timed out after \(timeout) waiting until \(what)")
}

/// A real HAProxy (Debian's) in front of cluster nodes, as `docker/haproxy.cfg` configures it:
/// WebSocket-aware HTTP mode, health-checked on `/healthz`, a failed connect retried elsewhere.
final class HAProxyProcess {
    let port: Int
    private let process = Process()

    init(nodes: [ClusterNodeProcess], directory: String) throws {
        self.port = try TestSocket.unusedPort()
        let servers = nodes.map { "  server \($0.node) 127.0.0.1:\($0.port) check inter 200ms fall 1 rise 2" }
        let configuration = """
            defaults
              mode http
              timeout connect 1s
              timeout client 30s
              timeout server 30s
              timeout tunnel 1h
              retries 3
              option redispatch
            frontend islet
              bind 127.0.0.1:\(self.port)
              default_backend nodes
            backend nodes
              balance roundrobin
              option httpchk GET /healthz
              http-check expect status 200
            \(servers.joined(separator: "\n"))

            """
        let path = directory + "/haproxy.cfg"
        try configuration.write(toFile: path, atomically: true, encoding: .utf8)
        guard let haproxy = ["/usr/sbin/haproxy", "/usr/bin/haproxy"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { throw TestClientError("haproxy is missing: scripts/bootstrap --test installs it") }
        self.process.executableURL = URL(fileURLWithPath: haproxy)
        self.process.arguments = ["-f", path, "-db", "-q"]
        // Output inherited, not redirected to a FileHandle: Foundation's Process closes a
        // FileHandle given as a standard stream after launch, and the number is reused by
        // another thread's socket (the shared /dev/null handle then closed that socket).
        try self.process.run()
        try waitUntil(timeout: .seconds(10), "haproxy routes /healthz") {
            (try? TestHTTP.request(port: self.port, "/healthz").status) == 200
        }
    }

    deinit {
        kill(self.process.processIdentifier, SIGKILL)
        self.process.waitUntilExit()
    }
}
