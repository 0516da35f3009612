import Dispatch
import Foundation
import IsletCore
import IsletRender
import IsletStore
import IsletTestSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// `islet serve` on a database file, as a child process.
struct ServeProcess {
    let process: IsletProcess
    let port: Int

    /// Starts `islet serve --port 0 --db PATH` on the test clock, without the demo.
    static func start(db: String, _ extra: [String] = []) throws -> ServeProcess {
        let process = try IsletProcess(
            arguments: ["serve", "--port", "0", "--db", db] + TestServer.serveArguments + extra)
        return ServeProcess(process: process, port: try process.waitForListening())
    }

    /// SIGTERM, then the exit status.
    func stop() throws -> Int32 {
        self.process.send(signal: SIGTERM)
        return try self.process.waitForExit()
    }

    /// `GET /v1/state` parsed: epoch, rev, path, value.
    func state() throws -> JSONValue { try TestHTTP.state(port: self.port).json() }
}

/// Runs `islet` with `arguments` to its end; returns its status, standard output and error.
func runIslet(
    _ arguments: [String], environment: [String: String] = [:]
) throws -> (status: Int32, output: String, errors: String) {
    let process = try IsletProcess(arguments: arguments, environment: environment)
    var lines: [String] = []
    while let line = try process.readLine(timeout: .seconds(30)) { lines.append(line) }
    let status = try process.waitForExit(timeout: .seconds(30))
    return (status, lines.joined(separator: "\n"), process.standardError())
}

/// Every record of the log at `path`, read without its lock (a server may hold it).
func logRecords(_ path: String) throws -> [LogRecord] {
    let log = try CommandLog(path: path, access: .readOnly, logger: makeTestLogger())
    var records: [LogRecord] = []
    try log.forEachRecord(after: 0) { records.append($0) }
    return records
}

/// Replays log records into the engine a test server starts with (paused at `TestServer.start`),
/// independently of the server's own replay code.
func replayIndependently(_ records: [LogRecord]) throws -> Engine {
    let start = TestServer.start
    var engine = Engine(renderer: MustacheRenderer(), at: start, clock: .virtual(now: start, rate: 0, atWall: start))
    for record in records {
        let wall = Instant(millisecondsSinceEpoch: record.instant)
        let revision: Revision?
        switch record.kind {
        case .batch: revision = try engine.apply(try JSONParser().parse(record.payload).arrayValue ?? [], at: wall)
        case .tick: revision = engine.advance(to: wall)
        }
        guard revision?.rev == record.sequence else {
            throw TestClientError("record \(record.sequence) replayed as \(String(describing: revision?.rev))")
        }
    }
    return engine
}

/// What clients had acknowledged when the server was killed: each batch with its revision.
final class AckBook: Sendable {
    private struct State {
        var acked: [(batch: [JSONValue], rev: UInt64)] = []
        var signalled = false
    }

    private let state = Mutex(State())
    private let threshold: Int
    /// Signalled once `threshold` batches are acknowledged.
    let reached = DispatchSemaphore(value: 0)

    init(threshold: Int) { self.threshold = threshold }

    func acked(_ batch: [JSONValue], rev: UInt64) {
        let signal = self.state.withLock { state in
            state.acked.append((batch, rev))
            guard !state.signalled, state.acked.count >= self.threshold else { return false }
            state.signalled = true
            return true
        }
        if signal { self.reached.signal() }
    }

    var all: [(batch: [JSONValue], rev: UInt64)] { self.state.withLock { $0.acked } }
}

/// Runs `body` on `count` threads of its own (not the test's pool) and waits for all of them.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}
