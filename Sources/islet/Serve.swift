import Foundation
import ArgumentParser
import IsletServer
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `islet serve`: runs the server until SIGINT or SIGTERM.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the API, the stream and the dashboard.",
        discussion: """
            Every option can also be set with an environment variable (the option wins):
            ISLET_HOST, ISLET_PORT, ISLET_PUBLIC_DIR, ISLET_LOG_LEVEL, ISLET_ADMIN_TOKEN,
            ISLET_VIEWER_TOKEN, ISLET_ALLOWED_ORIGINS (comma-separated), ISLET_TLS_CERT, ISLET_TLS_KEY,
            ISLET_TLS_PORT, ISLET_TLS_HANDSHAKE_TIMEOUT, ISLET_HISTORY_REVISIONS, ISLET_HISTORY_BYTES,
            ISLET_SLOW_CONSUMER_TIMEOUT, ISLET_RATE_LIMIT, ISLET_RATE_BURST, ISLET_VIRTUAL_CLOCK, ISLET_DEMO,
            ISLET_DB, ISLET_DURABILITY, ISLET_SNAPSHOT_EVERY, ISLET_SNAPSHOT_INTERVAL, ISLET_STORE_WRITER,
            ISLET_WS_COMPRESSION (1 or true), ISLET_WS_WRITE_DELAY, ISLET_APNS_STRICT (1 or true), ISLET_MAX_SIMULATIONS,
            ISLET_MAX_CONNECTIONS, ISLET_ALLOWED_HOSTS (comma-separated).
            Once listening, one line "listening on http://HOST:PORT" goes to standard output.
            A database that cannot be used (corrupt, another program's, newer, locked by another
            islet) or whose log does not replay is refused with exit code 2; it is never replaced. So
            is an address that cannot be listened on (in use, not this machine's) and TLS files that
            do not load.
            """)

    @Option(help: "Address to listen on (ISLET_HOST). Default: 127.0.0.1.")
    var host: String?

    @Option(help: "TCP port; 0 picks a free port (ISLET_PORT). Default: 8080.")
    var port: Int?

    @Option(help: "Directory of the dashboard's static files (ISLET_PUBLIC_DIR). Default: the package's Public/.")
    var publicDir: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical (ISLET_LOG_LEVEL). Default: info.")
    var logLevel: String?

    @Option(help: "Token that authorises mutations; required off loopback (ISLET_ADMIN_TOKEN).")
    var adminToken: String?

    @Option(help: "Token that authorises reads and subscriptions only (ISLET_VIEWER_TOKEN).")
    var viewerToken: String?

    @Option(
        help: "A host name the server is reached by besides its address and localhost (a proxy's, a DNS name); repeat for several (ISLET_ALLOWED_HOSTS, comma-separated). Requests naming another Host are refused.")
    var allowedHost: [String] = []

    @Option(
        help: "An Origin whose pages may open the stream and send changes, e.g. https://dash.example; repeatable (ISLET_ALLOWED_ORIGINS). Default: this server's own pages only.")
    var allowedOrigin: [String] = []

    @Option(help: "PEM certificate chain: serve HTTP/2 over TLS on --tls-port too (ISLET_TLS_CERT).")
    var tlsCert: String?

    @Option(help: "PEM private key of --tls-cert (ISLET_TLS_KEY).")
    var tlsKey: String?

    @Option(help: "Port of the TLS listener; 0 picks a free one (ISLET_TLS_PORT). Default: 8443.")
    var tlsPort: Int?

    @Option(
        help: "Seconds a TLS connection may take to finish its handshake (ISLET_TLS_HANDSHAKE_TIMEOUT). Default: 10.")
    var tlsHandshakeTimeout: Double?

    @Option(help: "Revisions kept for resuming subscriptions (ISLET_HISTORY_REVISIONS). Default: 1024.")
    var historyRevisions: Int?

    @Option(help: "Bytes of patches kept for resuming (ISLET_HISTORY_BYTES). Default: 8388608.")
    var historyBytes: Int?

    @Option(
        help: "Seconds a stream may stay over its outbound cap before 1013 (ISLET_SLOW_CONSUMER_TIMEOUT). Default: 30.")
    var slowConsumerTimeout: Double?

    @Option(help: "Seconds of silence after which a WebSocket is pinged (ISLET_WS_PING). Default: 30.")
    var wsPing: Int?

    @Option(
        help: "Milliseconds a patch may wait so that a connection's patches within it leave in one send; 0: off (ISLET_WS_WRITE_DELAY). Default: 0.")
    var wsWriteDelay: Int?

    @Option(
        help: "Seconds of silence (no PONG to the ping; for HTTP/2, no frame) after which any connection is closed; 0: never (ISLET_IDLE_TIMEOUT). Default: 60.")
    var idleTimeout: Int?

    @Option(help: "Commands per second per token; 0 turns the limit off (ISLET_RATE_LIMIT). Default: 50000.")
    var rateLimit: Double?

    @Option(help: "Commands a token may send at once (ISLET_RATE_BURST). Default: 50000.")
    var rateBurst: Double?

    @Option(help: "Start a fresh simulation on a paused virtual clock at this RFC 3339 instant (ISLET_VIRTUAL_CLOCK).")
    var virtualClock: String?

    @Option(
        help: "Demo scenario: if-empty (load into a fresh simulation), always, or off (ISLET_DEMO). Default: if-empty.")
    var demo: String?

    @Option(help: "SQLite command log; :memory: for a throwaway run (ISLET_DB). Default: ./islet.sqlite.")
    var db: String?

    @Option(help: "Simulations that may exist at once, default included (ISLET_MAX_SIMULATIONS). Default: 1000.")
    var maxSimulations: Int?

    @Option(
        help: "Connections served at once, HTTP and WebSocket together; one more is answered 503 (ISLET_MAX_CONNECTIONS). Default: 10000.")
    var maxConnections: Int?

    @Option(
        help: "Run as a node of a cluster whose log is on Redis Streams, redis://HOST[:PORT][/DB] (ISLET_CLUSTER). Default: none (SQLite).")
    var cluster: String?

    @Option(help: "This node's unique name in the cluster (ISLET_NODE_ID). Default: the host name and process id.")
    var nodeId: String?

    @Option(help: "Milliseconds a cluster clock lease lasts unrenewed (ISLET_CLUSTER_LEASE_MS). Default: 3000.")
    var clusterLeaseMs: Int?

    @Option(help: "Snapshot each world to Redis every N log entries (ISLET_CLUSTER_SNAPSHOT_EVERY). Default: 1000.")
    var clusterSnapshotEvery: Int?

    @Option(
        help: "normal survives a killed process; full also survives power loss (ISLET_DURABILITY). Default: normal.")
    var durability: String?

    @Option(help: "Snapshot the state every N revisions (ISLET_SNAPSHOT_EVERY). Default: 10000.")
    var snapshotEvery: Int?

    @Option(help: "…or every N seconds when revisions were committed (ISLET_SNAPSHOT_INTERVAL). Default: 300.")
    var snapshotInterval: Double?

    @Option(help: "Where log appends run: thread (a writer thread) or loop (ISLET_STORE_WRITER). Default: thread.")
    var storeWriter: String?

    @Option(
        help: ArgumentHelp(
            "Replay a scenario file (islet store export) into a new store on the virtual clock, then serve.",
            discussion: "The store is :memory: unless --db names one, which must hold no revision yet."))
    var replay: String?

    @Flag(
        help: """
            Negotiate permessage-deflate with WebSocket clients that offer it (ISLET_WS_COMPRESSION). \
            Off by default: it costs server CPU per message and per connection.
            """)
    var wsCompression = false

    @Flag(
        help: """
            Answer pushes the device would ignore with Islet's explicit 400 reasons instead of APNs' 200 \
            and an ignored delivery, for debugging a provider (ISLET_APNS_STRICT, 1 or true).
            """)
    var apnsStrict = false

    @Flag(help: "Mount the /v1/echo WebSocket for conformance testing (Autobahn). Loopback hosts only.")
    var conformanceEcho = false

    @Flag(help: "Print the effective configuration and exit.")
    var printConfig = false

    func run() async throws {
        let environment = Environment.current
        let level = try Self.logLevel(self.logLevel ?? environment["ISLET_LOG_LEVEL"] ?? "info")
        let logger = makeLogger(level: level)
        let configuration = try self.configuration(environment)
        // Each simulation's log holds a few files open (database, WAL, shared memory, lock).
        _ = raiseOpenFileLimit()
        if self.printConfig {
            print(describe(configuration))
            return
        }
        do {
            try configuration.validate()
        } catch {
            printError("islet serve: \(error)")
            throw ExitCode(2)
        }
        let server: RunningServer
        let log = configuration.store.path
        let logExisted = log == ":memory:" || FileManager.default.fileExists(atPath: log)
        do {
            server = try await RunningServer.start(configuration: configuration, logger: logger, handleSignals: true)
        } catch {
            // A refused start (a port in use, another log's world store) leaves no new log
            // behind: the next start would take its epoch and its --virtual-clock instead of the
            // ones it is given. A log another start holds (made meanwhile) is that start's.
            if !logExisted, !CommandLogFile.isHeldElsewhere(error, path: log) {
                // Not its `-lock`: removing a lock file another process may hold lets two writers in.
                for file in [log, log + "-wal", log + "-shm"] { try? FileManager.default.removeItem(atPath: file) }
            }
            switch error {
            case let error as ScenarioError:
                printError("islet serve: --replay \(self.replay ?? ""): \(error)")
                throw ExitCode(2)
            case is ConfigurationError,
                _ where CommandLogFile.isOperatorError(error) || RunningServer.isUnusableSetting(error):
                printError("islet serve: \(error)")
                throw ExitCode(2)
            default:
                printError("islet serve: \(error)")
                throw ExitCode(1)
            }
        }
        printListening(host: configuration.host, port: server.port, securePort: server.securePort)
        let termination = await server.terminated()
        logger.info("stopped", metadata: ["islet.loop.clean": "\(termination.isClean)"])
    }

    private func configuration(_ environment: Environment) throws -> IsletConfiguration {
        var configuration = IsletConfiguration()
        configuration.host = self.host ?? environment["ISLET_HOST"] ?? configuration.host
        if let port = self.port {
            configuration.port = port
        } else if let text = environment["ISLET_PORT"] {
            guard let port = Int(text) else { throw ValidationError("ISLET_PORT must be a number, not \(text)") }
            configuration.port = port
        }
        configuration.publicDirectory = self.publicDir ?? environment["ISLET_PUBLIC_DIR"] ?? defaultPublicDirectory()
        configuration.adminToken = self.adminToken ?? environment["ISLET_ADMIN_TOKEN"]
        configuration.viewerToken = self.viewerToken ?? environment["ISLET_VIEWER_TOKEN"]
        configuration.allowedOrigins =
            self.allowedOrigin.isEmpty
            ? (environment["ISLET_ALLOWED_ORIGINS"]?.split(separator: ",").map { $0.trimmed } ?? [])
            : self.allowedOrigin
        configuration.allowedHosts =
            self.allowedHost.isEmpty
            ? (environment["ISLET_ALLOWED_HOSTS"]?.split(separator: ",").map { $0.trimmed } ?? [])
            : self.allowedHost
        let certificate = self.tlsCert ?? environment["ISLET_TLS_CERT"]
        let key = self.tlsKey ?? environment["ISLET_TLS_KEY"]
        if certificate != nil || key != nil {
            configuration.tls = IsletConfiguration.TLS(
                certificatePath: certificate ?? "", keyPath: key ?? "",
                port: try self.tlsPort ?? environment.number("ISLET_TLS_PORT") ?? 8443)
            if let seconds: Double = try self.tlsHandshakeTimeout ?? environment.number("ISLET_TLS_HANDSHAKE_TIMEOUT") {
                guard (0.001...3600).contains(seconds) else {
                    throw ValidationError("--tls-handshake-timeout must be from 0.001 to 3600 seconds")
                }
                configuration.tls?.handshakeTimeout = .milliseconds(Int64((seconds * 1000).rounded(.up)))
            }
        }
        if let value = try self.historyRevisions ?? environment.number("ISLET_HISTORY_REVISIONS") {
            configuration.stream.historyRevisions = value
        }
        if let value = try self.historyBytes ?? environment.number("ISLET_HISTORY_BYTES") {
            configuration.stream.historyBytes = value
        }
        if let seconds = try self.slowConsumerTimeout ?? environment.number("ISLET_SLOW_CONSUMER_TIMEOUT") {
            configuration.stream.slowConsumerTimeout = .milliseconds(Int64(seconds * 1000))
        }
        if let seconds: Int = try self.wsPing ?? environment.number("ISLET_WS_PING") {
            configuration.stream.pingSeconds = seconds
        }
        if let milliseconds: Int = try self.wsWriteDelay ?? environment.number("ISLET_WS_WRITE_DELAY") {
            configuration.stream.writeDelayMilliseconds = milliseconds
        }
        if let seconds: Int = try self.idleTimeout ?? environment.number("ISLET_IDLE_TIMEOUT") {
            configuration.stream.idleTimeoutSeconds = seconds
        }
        if let rate = try self.rateLimit ?? environment.number("ISLET_RATE_LIMIT") {
            configuration.rateLimit.commandsPerSecond = rate
        }
        if let burst = try self.rateBurst ?? environment.number("ISLET_RATE_BURST") {
            configuration.rateLimit.burst = burst
        }
        let demo = self.demo ?? environment["ISLET_DEMO"] ?? IsletConfiguration.DemoPolicy.ifEmpty.rawValue
        guard let policy = IsletConfiguration.DemoPolicy(rawValue: demo) else {
            throw ValidationError("--demo must be if-empty, always or off, not \(demo)")
        }
        configuration.demo = policy
        configuration.store = try self.store(environment)
        if let text = self.virtualClock ?? environment["ISLET_VIRTUAL_CLOCK"] {
            do {
                try configuration.setVirtualClockStart(rfc3339: text)
            } catch {
                throw ValidationError("--virtual-clock must be an RFC 3339 date such as 2026-11-22T08:00:00Z: \(error)")
            }
        }
        configuration.webSocketCompression = try self.wsCompression || environment.flag("ISLET_WS_COMPRESSION") == true
        configuration.conformanceEcho = self.conformanceEcho
        configuration.apnsStrict = try self.apnsStrict || environment.flag("ISLET_APNS_STRICT") == true
        if let max: Int = try self.maxSimulations ?? environment.number("ISLET_MAX_SIMULATIONS") {
            configuration.maxSimulations = max
        }
        if let max: Int = try self.maxConnections ?? environment.number("ISLET_MAX_CONNECTIONS") {
            configuration.limits.connections = max
        }
        if let url = self.cluster ?? environment["ISLET_CLUSTER"] {
            let node = self.nodeId ?? environment["ISLET_NODE_ID"] ?? Self.defaultNodeID()
            do {
                configuration.cluster = try IsletConfiguration.Cluster(url: url, nodeID: node)
            } catch {
                throw ValidationError("--\(error)")
            }
            if let lease: Int = try self.clusterLeaseMs ?? environment.number("ISLET_CLUSTER_LEASE_MS") {
                configuration.cluster?.leaseMilliseconds = lease
            }
            if let every: Int = try self.clusterSnapshotEvery ?? environment.number("ISLET_CLUSTER_SNAPSHOT_EVERY") {
                configuration.cluster?.snapshotEveryEntries = every
            }
        }
        return configuration
    }

    /// `<host name>-<process id>`: unique among the nodes of one machine and, as a rule, of a cluster.
    private static func defaultNodeID() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "node"
        let safe = String(host.prefix(40).map { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") ? $0 : "-" })
        return "\(safe)-\(getpid())"
    }

    private func store(_ environment: Environment) throws -> IsletConfiguration.Store {
        var store = IsletConfiguration.Store()
        store.replayPath = self.replay
        // A replay starts a new store: a throwaway one unless a file is named.
        store.path = self.db ?? (self.replay == nil ? environment["ISLET_DB"] ?? "./islet.sqlite" : ":memory:")
        if let text = self.durability ?? environment["ISLET_DURABILITY"] {
            guard store.setDurability(named: text) else {
                throw ValidationError("--durability must be normal or full, not \(text)")
            }
        }
        if let value = try self.snapshotEvery ?? environment.number("ISLET_SNAPSHOT_EVERY") {
            store.snapshotEveryRevisions = value
        }
        if let value = try self.snapshotInterval ?? environment.number("ISLET_SNAPSHOT_INTERVAL") {
            store.snapshotEverySeconds = value
        }
        if let text = self.storeWriter ?? environment["ISLET_STORE_WRITER"] {
            guard let writer = IsletConfiguration.StoreWriter(rawValue: text) else {
                throw ValidationError("--store-writer must be thread or loop, not \(text)")
            }
            store.writer = writer
        }
        return store
    }

    private static func logLevel(_ text: String) throws -> Logger.Level {
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw ValidationError(
                "unknown log level \(text); use trace, debug, info, notice, warning, error or critical")
        }
        return level
    }
}

/// The package's `Public/` when running from a checkout, else `./Public`.
func defaultPublicDirectory() -> String {
    let source = "\(#filePath)"  // <package>/Sources/islet/Serve.swift
    var parts = source.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    let packagePublic = parts.joined(separator: "/") + "/Public"
    return access(packagePublic + "/index.html", R_OK) == 0 ? packagePublic : "Public"
}

/// Writes the one machine-readable line scripts wait for, and flushes it.
func printListening(host: String, port: Int, securePort: Int? = nil) {
    let shown = host.contains(":") ? "[\(host)]" : host
    print("listening on http://\(shown):\(port)")
    if let securePort { print("listening on https://\(shown):\(securePort) (HTTP/2)") }
    fflush(nil)
}

private func describe(_ configuration: IsletConfiguration) -> String {
    """
    host: \(configuration.host)
    port: \(configuration.port)
    public-dir: \(configuration.publicDirectory ?? "(none)")
    admin-token: \(configuration.adminToken == nil ? "(none)" : "(set)")
    viewer-token: \(configuration.viewerToken == nil ? "(none)" : "(set)")
    allowed-origins: \(configuration.allowedOrigins.isEmpty ? "(this server's own pages)" : configuration.allowedOrigins.joined(separator: ", "))
    allowed-hosts: \(configuration.allowedHosts.isEmpty ? "(its address and localhost)" : configuration.allowedHosts.joined(separator: ", "))
    tls: \(configuration.tls.map { "cert \($0.certificatePath), key \($0.keyPath), port \($0.port), handshake timeout \($0.handshakeTimeout)" } ?? "(none)")
    stream.historyRevisions: \(configuration.stream.historyRevisions)
    stream.historyBytes: \(configuration.stream.historyBytes)
    stream.slowConsumerTimeout: \(configuration.stream.slowConsumerTimeout)
    ws-ping: \(configuration.stream.pingSeconds)
    idle-timeout: \(configuration.stream.idleTimeoutSeconds)
    ws-write-delay: \(configuration.stream.writeDelayMilliseconds)
    rateLimit.commandsPerSecond: \(configuration.rateLimit.commandsPerSecond)
    rateLimit.burst: \(configuration.rateLimit.burst)
    limits.httpBodyBytes: \(configuration.limits.httpBodyBytes)
    limits.webSocketMessageBytes: \(configuration.limits.webSocketMessageBytes)
    limits.outboundBytes: \(configuration.limits.outboundBytes)
    limits.streamMessageBytes: \(configuration.limits.streamMessageBytes)
    limits.subscriptionsPerConnection: \(configuration.limits.subscriptionsPerConnection)
    limits.apnsPayloadBytes: \(configuration.limits.apnsPayloadBytes)
    shutdownGracePeriod: \(configuration.shutdownGracePeriod)
    db: \(configuration.store.path)
    durability: \(configuration.store.durabilityName)
    snapshot-every: \(configuration.store.snapshotEveryRevisions)
    snapshot-interval: \(configuration.store.snapshotEverySeconds)
    store-writer: \(configuration.store.writer.rawValue)
    replay: \(configuration.store.replayPath ?? "(none)")
    virtual-clock: \(configuration.virtualClockStartRFC3339 ?? "(wall clock)")
    demo: \(configuration.demo.rawValue)
    ws-compression: \(configuration.webSocketCompression)
    conformance-echo: \(configuration.conformanceEcho)
    apns-strict: \(configuration.apnsStrict)
    max-simulations: \(configuration.maxSimulations)
    max-connections: \(configuration.limits.connections)
    cluster: \(configuration.cluster.map { "redis://\($0.host):\($0.port)/\($0.database) as \($0.nodeID)" } ?? "(none)")
    """
}
