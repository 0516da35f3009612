import ArgumentParser
import IsletClient
import IsletServer
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `islet tail`: subscribes to the stream and prints one JSON line per message.
struct Tail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the stream: one JSON line per message (pipe it into jq).",
        discussion: """
            Connects to /v1/stream, prints the hello, subscribes to each --path (default: the whole
            document) and prints every message as it arrives, until the server closes the stream,
            --limit messages were printed, or SIGINT. With --since REV the subscriptions resume after
            that revision of the hello's epoch (or --epoch) when the server still holds it.
            Environment: ISLET_URL, ISLET_TOKEN (or ISLET_ADMIN_TOKEN).
            Exit status: 0 when the server closed normally (1000/1001) or the limit was reached, else 1
            (also when the server refused every subscription).
            """)

    @Option(help: "The server or stream URL, ws:// or http:// (ISLET_URL). Default: ws://127.0.0.1:8080/v1/stream.")
    var url: String?

    @Option(name: .customLong("path"), help: "A JSON Pointer to subscribe to; repeat for several. Default: \"\".")
    var paths: [String] = []

    @Option(help: "Resume after this revision.")
    var since: UInt64?

    @Option(help: "The epoch --since refers to (default: the one the hello names).")
    var epoch: String?

    @Option(help: "A token for the stream, sent as ?token= (ISLET_TOKEN, else ISLET_ADMIN_TOKEN).")
    var token: String?

    @Option(help: "Stop after this many messages (the hello included).")
    var limit: Int?

    @Option(help: "The simulation to subscribe in (default: default). With --since and no --epoch, its epoch is read first.")
    var simulation: String?

    func validate() throws {
        if let limit = self.limit, limit < 1 { throw ValidationError("--limit must be at least 1, not \(limit)") }
    }

    func run() async throws {
        let environment = Environment.current
        let target = try StreamURL(self.url ?? environment["ISLET_URL"] ?? "ws://127.0.0.1:8080/v1/stream")
        var path = target.path == "/" || target.path.isEmpty ? "/v1/stream" : target.path
        if let token = self.token ?? environment["ISLET_TOKEN"] ?? environment["ISLET_ADMIN_TOKEN"] {
            path += (path.contains("?") ? "&" : "?") + "token=" + queryEncoded(token)
        }
        var logger = Logger(label: "islet.tail")
        logger.logLevel = .critical
        var epoch = self.epoch
        if let simulation = self.simulation, self.since != nil, epoch == nil {
            epoch = try await Self.epoch(of: simulation, host: target.host, port: target.port)
        }
        let options = StreamTail.Options(
            host: target.host, port: target.port, path: path, paths: self.paths.isEmpty ? [""] : self.paths,
            since: self.since, epoch: epoch, limit: self.limit, simulation: self.simulation)
        let end = try await StreamTail.run(options, logger: logger) { line in
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        }
        switch end {
        case .limitReached, .closed(1000), .closed(1001): return
        case .closed(let code):
            printError("islet tail: the server closed the stream with \(code.map(String.init) ?? "no code")")
            throw ExitCode(1)
        case .failed(let reason):
            printError("islet tail: \(reason)")
            throw ExitCode(1)
        case .refused:
            printError("islet tail: the server refused every subscription (its error is the last line printed)")
            throw ExitCode(1)
        }
    }

    /// The epoch of `simulation`, from `GET /v1/simulations/{id}`.
    private static func epoch(of simulation: String, host: String, port: Int) async throws -> String {
        let reply = try await HTTPClient.request(
            host: host, port: port, method: "GET", path: "/v1/simulations/\(queryEncoded(simulation))", headers: [],
            body: [])
        guard reply.status == 200, let epoch = SimulationRequests.epoch(reply.body) else {
            // The server's answer, not a usage error: exit 1 as for any refusal.
            printError("islet tail: \(reply.status) \(SimulationRequests.errorMessage(reply.body))")
            throw ExitCode(1)
        }
        return epoch
    }
}

/// `ws://host:port/path`, `http://…` (the same server), without TLS.
struct StreamURL {
    var host: String
    var port: Int
    var path: String

    init(_ text: String) throws {
        var rest = Substring(text)
        var defaultPort = 80
        if rest.hasPrefix("ws://") {
            rest = rest.dropFirst(5)
        } else if rest.hasPrefix("http://") {
            rest = rest.dropFirst(7)
        } else if rest.hasPrefix("wss://") || rest.hasPrefix("https://") {
            throw ValidationError("TLS URLs are not supported here: use the plain HTTP/1.1 port (ws:// or http://)")
        } else if rest.contains("://") {
            throw ValidationError("unsupported URL \(text): use ws:// or http://")
        } else {
            defaultPort = 8080
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        self.path = String(rest[slash...])
        if let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) {
            self.host = String(authority[..<colon])
            self.port = port
        } else {
            self.host = String(authority)
            self.port = defaultPort
        }
        if self.host == "localhost" { self.host = "127.0.0.1" }
        guard !self.host.isEmpty else { throw ValidationError("no host in \(text)") }
    }
}

/// Percent-encodes a query value.
func queryEncoded(_ text: String) -> String {
    var out = ""
    for byte in text.utf8 {
        if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
        {
            out.append(Character(UnicodeScalar(byte)))
        } else {
            out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
    }
    return out
}
