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
            ISLET_WS_COMPRESSION (1 or true).
            Once listening, one line "listening on http://HOST:PORT" goes to standard output.
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

    @Flag(
        help: """
            Negotiate permessage-deflate with WebSocket clients that offer it (ISLET_WS_COMPRESSION). \
            Off by default: it costs server CPU per message and per connection.
            """)
    var wsCompression = false

    @Flag(help: "Mount the /v1/echo WebSocket for conformance testing (Autobahn). Loopback hosts only.")
    var conformanceEcho = false

    @Flag(help: "Print the effective configuration and exit.")
    var printConfig = false

    func run() async throws {
        let environment = Environment.current
        let level = try Self.logLevel(self.logLevel ?? environment["ISLET_LOG_LEVEL"] ?? "info")
        let logger = makeLogger(level: level)
        let configuration = try self.configuration(environment)
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
        do {
            server = try await RunningServer.start(configuration: configuration, logger: logger, handleSignals: true)
        } catch let error as ConfigurationError {
            printError("islet serve: \(error)")
            throw ExitCode(2)
        } catch {
            printError("islet serve: \(error)")
            throw ExitCode(1)
        }
        printListening(host: configuration.host, port: server.port)
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
        configuration.webSocketCompression =
            self.wsCompression || ["1", "true"].contains(environment["ISLET_WS_COMPRESSION"]?.lowercased())
        configuration.conformanceEcho = self.conformanceEcho
        return configuration
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
func printListening(host: String, port: Int) {
    let shown = host.contains(":") ? "[\(host)]" : host
    print("listening on http://\(shown):\(port)")
    fflush(nil)
}

func printError(_ text: String) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

private func describe(_ configuration: IsletConfiguration) -> String {
    """
    host: \(configuration.host)
    port: \(configuration.port)
    public-dir: \(configuration.publicDirectory ?? "(none)")
    admin-token: \(configuration.adminToken == nil ? "(none)" : "(set)")
    limits.httpBodyBytes: \(configuration.limits.httpBodyBytes)
    limits.webSocketMessageBytes: \(configuration.limits.webSocketMessageBytes)
    limits.outboundBytes: \(configuration.limits.outboundBytes)
    limits.subscriptionsPerConnection: \(configuration.limits.subscriptionsPerConnection)
    limits.apnsPayloadBytes: \(configuration.limits.apnsPayloadBytes)
    shutdownGracePeriod: \(configuration.shutdownGracePeriod)
    ws-compression: \(configuration.webSocketCompression)
    conformance-echo: \(configuration.conformanceEcho)
    """
}
