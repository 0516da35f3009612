import IsletCore
import IsletStore
import IsletTestSupport
import IsletTransport

@testable import IsletServer

/// A server on the in-memory transport whose commit stage is the command log at `path`, doing
/// everything on the test's thread (`StoreCommitStage.Threads.caller`), started the way
/// `RunningServer` starts one: the log's state recovered first.
struct DurableServer {
    let server: IsletServer
    let transport: InMemoryTransport
    let recovered: RecoveredState

    static let json: HTTPHeaders = ["content-type": "application/json"]

    init(
        path: String, configuration: IsletConfiguration = .testing(virtualClockStart: nil),
        time: SettableTimeSource = SettableTimeSource(now: Instant(millisecondsSinceEpoch: 1_795_766_400_000))
    ) throws {
        var configuration = configuration
        configuration.store.path = path
        let (state, stage) = try StorePersistence.open(
            configuration, loop: nil, wall: time.now, logger: makeTestLogger())
        self.transport = InMemoryTransport(outboundCapBytes: configuration.limits.outboundBytes)
        self.server = try IsletServer(
            configuration: configuration, transport: self.transport, logger: makeTestLogger(), timeSource: time,
            commitStage: stage, recovered: state)
        self.transport.delegate = self.server
        self.recovered = state
    }

    /// Posts one batch and ends the loop turn; returns the reply.
    @discardableResult
    func post(_ commands: [JSONValue]) -> HTTPResponse? {
        let body = JSONValue.object(["commands": .array(commands)]).encoded
        let before = Set(self.transport.responses.keys)
        let immediate = self.transport.request(.POST, "/v1/commands", headers: Self.json, body: body)
        self.server.flush()
        return immediate ?? self.transport.responses.first { !before.contains($0.key) }?.value
    }

    /// Posts one batch, ends the turn and returns the revision it produced.
    func commit(_ commands: [JSONValue]) throws -> UInt64 {
        let before = self.server.position.revision
        self.post(commands)
        let after = self.server.position.revision
        guard after > before else { throw TestClientError("the batch was refused: \(commands)") }
        return after
    }

    /// Shuts down gracefully: replies drain, a last snapshot is written, the log closes.
    func shutdown() {
        var done = false
        self.server.shutdown { done = true }
        precondition(done, "the in-memory shutdown completes at once")
    }

    /// What a restart must reproduce: the document's bytes, the revision and the epoch.
    var image: (document: [UInt8], rev: UInt64, epoch: String) {
        (self.server.engine.documentBytes, self.server.position.revision, self.server.position.epoch)
    }
}

/// Reads a log that a server holds (read-only, without its lock).
func readLog(_ path: String) throws -> [LogRecord] {
    let log = try CommandLog(path: path, access: .readOnly, logger: makeTestLogger())
    var records: [LogRecord] = []
    try log.forEachRecord(after: 0) { records.append($0) }
    return records
}
