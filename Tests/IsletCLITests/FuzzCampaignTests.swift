import Foundation
import IsletCore
import IsletTestSupport
import IsletTransport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Over 100,000 generated inputs, seeded and bounded, against the real `islet serve` binary on a
/// file database (issue 18): mutated REST bodies on every kind of mutating route, mutated stream
/// messages, malformed WebSocket frames and raw HTTP/1.1 requests, and HTTP/2 frames
/// (`scripts/fuzz_h2.py`). After every batch: the process is alive, `/healthz` is 200, and the
/// revision moved by exactly the number of accepted requests (a refused input changed
/// nothing). At the end a `kill -9` and a restart on the same file give the same document.
/// The counts go to BENCHMARKS.md ("Reliability"); `ISLET_FUZZ_SEED` picks another seed.
@Suite("Fuzzing islet serve by the hundred thousand", .serialized)
struct FuzzCampaignTests {
    static let seed = ProcessInfo.processInfo.environment["ISLET_FUZZ_SEED"].flatMap(UInt64.init) ?? 2026
    static let restInputs = 50_000
    static let streamInputs = 30_000
    static let rawConnections = 5_000
    static let http2Frames = 15_000
    static let batch = 1_000
    /// The whole campaign takes about 100 s here; past this the server is killed, so that every
    /// wait fails at once and the error says where the campaign stood.
    static let deadline = Duration.seconds(600)
    /// `TestServer.serveArguments`' virtual clock.
    static let start = try! Instant(rfc3339: "2026-11-22T08:00:00Z")

    /// What one phase saw.
    struct Tally: CustomStringConvertible {
        var inputs = 0
        var accepted = 0
        var refused = 0
        var closed = 0
        /// Replies that came after the client's 5 s, within the minute more it then waits.
        var late: [Duration] = []
        /// The server's threads when the first reply was 5 s late (`IsletProcess.threadStates`).
        var threadsWhenLate: String?
        var description: String {
            "\(self.inputs) inputs: \(self.accepted) accepted, \(self.refused) refused, \(self.closed) connections closed by the server"
                + (self.late.isEmpty ? "" : ", \(self.late.count) replies late by up to \(self.late.max()!)")
                + (self.threadsWhenLate.map { " (the server's threads at the first: \($0))" } ?? "")
        }
    }

    /// Where the campaign is, so that an error which stops it (a reply that never came) names
    /// the phase and the input that preceded it.
    final class Progress: CustomStringConvertible {
        var phase = "set-up"
        var inputs = 0
        var last: [UInt8] = []
        /// What the phase was waiting for, when it has more than one wait per input.
        var step = ""

        func note(_ phase: String, input: Int, _ bytes: [UInt8]) {
            self.phase = phase
            self.inputs = input
            self.last = bytes
            self.step = ""
        }

        /// Says on standard error (unbuffered, so a CI log that is cut short still shows it) that
        /// a phase starts.
        func start(_ phase: String) {
            self.phase = phase
            let seconds = Double(self.started.duration(to: .now) / .milliseconds(1)) / 1000
            FileHandle.standardError.write(Data("fuzz campaign: \(phase) at \(String(format: "%.1f", seconds)) s\n".utf8))
        }

        let started = ContinuousClock.now

        var description: String {
            "\(self.phase), input \(self.inputs)\(self.step.isEmpty ? "" : " (\(self.step))"), after "
                + String(decoding: self.last.prefix(400), as: UTF8.self).debugDescription
        }
    }

    @Test(
        "100,000 generated inputs: the server stays up, refusals change nothing, and a kill -9 restart replays",
        .enabled(
            if: PythonTools.available || PythonTools.required,
            "needs .venv (scripts/bootstrap --test) for the HTTP/2 frames"))
    func campaign() throws {
        try withTemporaryDirectory { dir in
            let (cert, key) = try TestCertificate.files()
            let db = dir.file("islet.sqlite")
            let process = try IsletProcess(
                arguments: ["serve", "--port", "0", "--db", db, "--tls-cert", cert, "--tls-key", key, "--tls-port", "0"]
                    + TestServer.serveArguments)
            let port = try process.waitForListening()
            let tlsLine = try #require(try process.readLine())
            let tlsPort = try #require(tlsLine.split(separator: ":").last?.split(separator: " ").first.flatMap { Int($0) })
            var commands = RandomCommands(seed: Self.seed)
            let pushable: JSONValue = [
                "type": "activity.request", "id": "fz", "app": "coffee", "attributesType": "CoffeeDeliveryAttributes",
                "attributes": [:], "content": ["state": ["status": "x"]], "pushType": "token",
            ]
            let setUp = try TestHTTP.commands(port: port, commands.setUp() + [pushable])
            let results = try #require(try setUp.json()["results"]?.arrayValue)
            let tokens = results.compactMap { $0["pushToStartToken"]?.stringValue } + results.compactMap { $0["pushToken"]?.stringValue }

            let progress = Progress()
            let watchdog = Watchdog(after: Self.deadline, server: process)
            defer { watchdog.cancel() }
            let (rest, stream, raw): (Tally, Tally, Tally)
            do {
                rest = try Self.rest(port: port, commands: &commands, tokens: tokens, process: process, progress: progress)
                stream = try Self.stream(port: port, commands: &commands, process: process, progress: progress)
                raw = try Self.raw(port: port, process: process, progress: progress)
            } catch {
                // The server's counters while it still runs, then its output (read to its end).
                let metrics = (try? TestHTTP.request(port: port, "/metrics").text) ?? "no answer"
                let websocket = metrics.split(separator: "\n").filter { $0.hasPrefix("islet_websocket") }
                process.send(signal: SIGKILL)
                throw TestClientError(
                    "\(progress): \(error)\(watchdog.report ?? "")\nthe server's WebSocket counters: \(websocket.joined(separator: "; "))"
                        + "\nits last output: \(process.standardError().suffix(3000))")
            }
            progress.start("HTTP/2 frames")
            let (status, output) = try runProcess(
                PythonTools.python,
                [
                    PackagePaths.root + "/scripts/fuzz_h2.py", "--tls-port", String(tlsPort), "--http-port", String(port),
                    "--frames", String(Self.http2Frames), "--seed", String(Self.seed), "--deadline", "240",
                ], timeout: .seconds(300))
            #expect(status == 0, "\(output)\(watchdog.report ?? "")\nthe server's threads: \(process.threadStates())")
            #expect(process.isRunning)
            print("fuzz seed \(Self.seed): REST \(rest); stream \(stream); raw frames and requests \(raw); \(output)")
            #expect(rest.inputs + stream.inputs + raw.inputs + Self.http2Frames >= 100_000)

            // Kill -9, restart on the same file: the same revision and document, byte for byte.
            try Self.pause(port: port)
            let before = try TestHTTP.state(port: port)
            process.send(signal: SIGKILL)
            #expect(try process.waitForExit() == SIGKILL)
            let restarted = try IsletProcess(arguments: ["serve", "--port", "0", "--db", db] + TestServer.serveArguments)
            defer {
                restarted.send(signal: SIGTERM)
                _ = try? restarted.waitForExit()
            }
            let after = try TestHTTP.state(port: try restarted.waitForListening(timeout: .seconds(120)))
            #expect(after.rev == before.rev)
            #expect(after.body == before.body, "the restarted document differs")
        }
    }

    /// Mutated bodies on the mutating routes (REST, resource sugar, APNs), one keep-alive
    /// connection (a new one when the server closes it).
    static func rest(
        port: Int, commands: inout RandomCommands, tokens: [String], process: IsletProcess, progress: Progress
    ) throws -> Tally {
        var mutator = JSONMutator(random: SplitMix64(seed: Self.seed))
        progress.start("REST")
        var tally = Tally()
        var connection = try TestHTTPConnection(port: port)
        let json = [("Content-Type", "application/json")]
        let push = [("apns-push-type", "liveactivity"), ("apns-topic", "coffee.push-type.liveactivity")]
        let aps = Array(#"{"aps":{"timestamp":1795766500,"event":"update","content-state":{"status":"x"}}}"#.utf8)
        let resource = Array(
            #"{"content":{"state":{"status":"x"}},"model":"iphone-15-pro","app":"coffee","attributesType":"T","mode":"virtual","rate":0}"#
                .utf8)
        while tally.inputs < Self.restInputs {
            let revision = try Self.revision(port: port)
            var accepted = 0
            for index in 0..<Self.batch {
                // One input in four goes unmutated, so valid requests of every kind interleave.
                let mutate: ([UInt8]) -> [UInt8] = { bytes in index % 4 == 3 ? bytes : mutator.mutate(bytes) }
                let route = index % 8
                let (method, path, headers, body): (String, String, [(String, String)], [UInt8])
                switch route {
                case 0, 1, 2:
                    let valid = JSONValue.object(["commands": .array(commands.batch(now: Self.start))]).encoded
                    (method, path, headers, body) = ("POST", "/v1/commands", json, mutate(valid))
                case 3: (method, path, headers, body) = ("PATCH", "/v1/activities/x1", json, mutate(resource))
                case 4: (method, path, headers, body) = ("PUT", "/v1/devices/d1", json, mutate(resource))
                case 5: (method, path, headers, body) = ("PUT", "/v1/clock", json, mutate(resource))
                case 6:
                    let token = tokens.isEmpty ? "ab" : tokens[index % tokens.count]
                    (method, path, headers, body) = ("POST", "/3/device/\(token)", push, mutate(aps))
                default:
                    let create = Array(#"{"message-storage-policy":1,"push-type":"LiveActivity"}"#.utf8)
                    (method, path, headers, body) = ("POST", "/1/apps/coffee/channels", [], mutate(create))
                }
                tally.inputs += 1
                progress.note("REST \(method) \(path)", input: tally.inputs, body)
                let reply: TestHTTPResponse
                do {
                    reply = try connection.request(method, path, headers: headers, body: body)
                } catch {
                    tally.closed += 1
                    connection = try TestHTTPConnection(port: port)
                    continue
                }
                if reply.headers["connection"] == "close" { connection = try TestHTTPConnection(port: port) }
                if (200..<300).contains(reply.status) {
                    accepted += 1
                    continue
                }
                tally.refused += 1
                let structured = reply.errorCode != nil || (try? reply.json())?["reason"]?.stringValue != nil
                #expect(structured, "\(method) \(path): \(reply.status) \(reply.text.prefix(200))")
                #expect((400..<500).contains(reply.status), "\(method) \(path): \(reply.status) \(reply.text.prefix(200))")
            }
            tally.accepted += accepted
            try Self.checkBatch(port: port, process: process, from: revision, accepted: accepted)
        }
        return tally
    }

    /// Mutated stream messages, fenced every 20 messages (and before one that will close the
    /// connection) by an empty command batch: it is refused, changing nothing, and its error is
    /// ordered after the replies of every command sent before it, which wait for their commit
    /// (a ping's pong would not wait).
    static func stream(port: Int, commands: inout RandomCommands, process: IsletProcess, progress: Progress) throws -> Tally {
        progress.start("stream")
        var mutator = JSONMutator(random: SplitMix64(seed: Self.seed ^ 0x5EED))
        var tally = Tally()
        var client = try TestWebSocketClient.connect(port: port)
        _ = try client.readJSON()
        let templates: [JSONValue] = [
            ["op": "subscribe", "id": "s", "path": "/activities/x1", "since": ["epoch": "e", "rev": 3]],
            ["op": "unsubscribe", "id": "s"], ["op": "ping", "id": ["n": 1]],
        ]
        let fence = #"{"op":"command","id":"fence","commands":[]}"#
        while tally.inputs < Self.streamInputs {
            let revision = try Self.revision(port: port)
            var replies = Replies()
            /// Reads every reply up to the fence's.
            func drain() throws {
                progress.step = "reading the replies up to the fence"
                try client.send(text: fence)
                while true {
                    let reply: JSONValue
                    do { reply = try client.readJSON() } catch {
                        // Slow is not lost: on a loaded machine a reply may take longer than the
                        // client's 5 s. One that comes within a minute more is counted; one that
                        // does not fails the campaign. The minute is a deadline: the server's
                        // idle pings (every 30 s), answered meanwhile, must not extend it.
                        let waited = ContinuousClock.now
                        if tally.threadsWhenLate == nil { tally.threadsWhenLate = process.threadStates() }
                        client.timeout = .seconds(60)
                        defer { client.timeout = .seconds(5) }
                        guard let late = try? client.readJSON(deadline: waited + .seconds(60)) else {
                            progress.step += ", and nothing came in a minute more (the server's threads: \(process.threadStates()))"
                            throw error
                        }
                        tally.late.append(.seconds(5) + waited.duration(to: .now))
                        reply = late
                    }
                    if reply["type"] == "error", reply["id"] == "fence" { return }
                    replies.note(reply)
                }
            }
            for index in 0..<Self.batch {
                let message: JSONValue =
                    index % 2 == 0
                    ? ["op": "command", "id": .number(Double(index)), "commands": .array(commands.batch(now: Self.start))]
                    : templates[index % templates.count]
                tally.inputs += 1
                let bytes = index % 4 == 2 ? message.encoded : mutator.mutate(message.encoded)
                progress.note("stream", input: tally.inputs, bytes)
                // Invalid UTF-8 closes the connection (1007) at once: first every reply in flight
                // is read, then the connection is replaced.
                if String(validating: bytes, as: UTF8.self) == nil {
                    try drain()
                    progress.step = "sending invalid UTF-8"
                    try client.send(opcode: TestWebSocketClient.Frame.text, payload: bytes)
                    // RFC 6455 §8.1: the server fails the connection, with 1007 or without a close frame.
                    let code = try? client.readClose()
                    #expect(code == 1007 || code == nil, "closed with \(String(describing: code))")
                    tally.closed += 1
                    progress.step = "connecting again"
                    client = try TestWebSocketClient.connect(port: port)
                    progress.step = "reading the new connection's hello"
                    _ = try client.readJSON()
                    continue
                }
                try client.send(opcode: TestWebSocketClient.Frame.text, payload: bytes)
                if index % 20 == 19 { try drain() }
            }
            try drain()
            tally.accepted += replies.accepted
            tally.refused += replies.refused
            try Self.checkBatch(port: port, process: process, from: revision, accepted: replies.accepted)
        }
        return tally
    }

    /// Kills the server once the campaign outlives `after`, noting what its threads were doing.
    final class Watchdog: @unchecked Sendable {
        private let lock = NSLock()
        private var fired: String?
        private var work: DispatchWorkItem?

        init(after deadline: Duration, server: IsletProcess) {
            let work = DispatchWorkItem { [self] in
                let threads = server.threadStates()
                self.lock.withLock { self.fired = "\nthe campaign's \(deadline) passed; the server's threads then: \(threads)" }
                server.send(signal: SIGKILL)
            }
            self.work = work
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(Int(deadline.components.seconds)), execute: work)
        }

        /// What the watchdog saw when it fired; nil if it has not.
        var report: String? { self.lock.withLock { self.fired } }

        func cancel() {
            self.work?.cancel()
            self.work = nil
        }
    }

    /// What the stream answered: acks and structured errors.
    struct Replies {
        var accepted = 0
        var refused = 0

        mutating func note(_ reply: JSONValue) {
            if reply["type"] == "ack" {
                self.accepted += 1
            } else if reply["type"] == "error" {
                self.refused += 1
                #expect(reply["error"]?["code"]?.stringValue != nil, "\(reply)")
            }
        }
    }

    /// Malformed WebSocket frames and malformed HTTP/1.1 requests, each on a new connection.
    static func raw(port: Int, process: IsletProcess, progress: Progress) throws -> Tally {
        progress.start("raw frames and requests")
        var random = SplitMix64(seed: Self.seed ^ 0xF4A3E)
        var tally = Tally()
        let requests = [
            "GET /../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            "GET /%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            "POST /v1/commands HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999\r\n\r\n{",
            "POST /v1/commands HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n",
            "GARBAGE\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "\u{0}\u{1}\u{2}\r\n\r\n",
            "GET /v1/state HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + String(repeating: "y", count: 20000) + "\r\n\r\n",
            "GET /v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n",
            "POST /v1/commands HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
            // Pipelined: a request with a body behind another (lws 4.1 looped on it for ever).
            "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                + "POST /v1/commands HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
            String(
                repeating: "POST /v1/commands HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 15\r\n\r\n{\"commands\":[]}", count: 3),
        ]
        while tally.inputs < Self.rawConnections {
            let revision = try Self.revision(port: port)
            for index in 0..<(Self.batch / 2) {
                tally.inputs += 1
                progress.note(index % 2 == 0 ? "raw HTTP/1.1" : "raw WebSocket frames", input: tally.inputs, [])
                if index % 2 == 0 {
                    let connection = try TestHTTPConnection(port: port, timeout: .seconds(2))
                    defer { connection.socket.close() }
                    try? connection.sendRaw(requests[Int.random(in: 0..<requests.count, using: &random)])
                    if let reply = try? connection.readResponse() {
                        #expect((400..<500).contains(reply.status) || reply.status == 101 || reply.status == 200, "\(reply.status)")
                        tally.refused += 1
                    } else {
                        tally.closed += 1
                    }
                    continue
                }
                let abuser = try TestWebSocketClient.connect(port: port)
                _ = try abuser.readJSON()
                let ping = Array(#"{"op":"ping"}"#.utf8)
                switch Int.random(in: 0..<6, using: &random) {
                case 0:
                    let frame = TestWebSocketClient.encodeFrame(opcode: 1, payload: ping, fin: true, masked: true, rsv: 0)
                    try? abuser.connection.socket.write(Array(frame.prefix(frame.count / 2)))
                case 1: try? abuser.send(opcode: 1, payload: ping, masked: false)
                case 2: try? abuser.send(opcode: 1, payload: ping, rsv: 3)
                case 3: try? abuser.send(opcode: 0xB, payload: [1, 2, 3])
                case 4: try? abuser.send(opcode: 0x9, payload: Array(repeating: 7, count: 200))
                default: try? abuser.sendHeaderOnly(opcode: 1, announcedLength: Int.random(in: 1 << 20...1 << 40, using: &random))
                }
                abuser.drop()
                tally.closed += 1
            }
            try Self.checkBatch(port: port, process: process, from: revision, accepted: 0)
        }
        return tally
    }

    /// Alive, healthy, and the revisions made by commands moved by the accepted requests
    /// alone (`islet_revisions_total{cause="commands"}`; the clock's own revisions, when a
    /// mutated `clock.set` let it run or a command scheduled a transition already due, are
    /// counted apart).
    static func checkBatch(port: Int, process: IsletProcess, from revisions: UInt64, accepted: Int) throws {
        #expect(process.isRunning, "the server died: \(process.standardError().suffix(2000))")
        try #require(process.isRunning)
        #expect(try TestHTTP.request(port: port, "/healthz").status == 200)
        let now = try Self.revision(port: port)
        #expect(now == revisions + UInt64(accepted), "refused inputs changed the state: \(revisions) + \(accepted) ≠ \(now)")
    }

    static func pause(port: Int) throws {
        let reply = try TestHTTP.commands(port: port, [["type": "clock.set", "mode": "virtual", "rate": 0]])
        #expect(reply.status == 200, "\(reply.text)")
    }

    /// The revisions commands made so far, from `/metrics`.
    static func revision(port: Int) throws -> UInt64 {
        let metrics = try TestHTTP.request(port: port, "/metrics").text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix(#"islet_revisions_total{cause="commands"}"#) }
        return try #require(line?.split(separator: " ").last.flatMap { UInt64($0) }, "no command revisions in /metrics")
    }
}

extension TestHTTPResponse {
    /// The `rev` of a reply body.
    fileprivate var rev: UInt64? { (try? self.json())?["rev"]?.numberValue.map { UInt64($0) } }
}
