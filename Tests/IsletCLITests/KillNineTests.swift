import Foundation
import IsletCore
import IsletStore
import IsletTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `islet serve` binary killed with SIGKILL while clients send commands.
@Suite("kill -9 of islet serve loses nothing acknowledged")
struct KillNineTests {
    /// Two stream clients pipelining batches (four in flight each) and one HTTP client, all
    /// recording which batches were acknowledged and at which revision.
    static let streamClients = 2

    @Test(
        "every acknowledged batch is in the log at its revision, the restarted state is the log's replay, and a subscriber resumes across the kill",
        arguments: [101, 202, 303, 404] as [UInt64])
    func killNine(seed: UInt64) throws {
        try withTemporaryDirectory { dir in
            let db = dir.file("islet.sqlite")
            var random = RandomCommands(seed: seed)
            let killAfter = random.int(30...160)
            let server = try ServeProcess.start(db: db, ["--snapshot-every", "\(random.int(10...60))"])
            _ = try TestHTTP.commands(port: server.port, random.setUp())
            let watcher = try TestWebSocketClient.connect(port: server.port)
            let epoch = try #require(try watcher.readJSON()["epoch"]?.stringValue)
            try watcher.subscribe("all", path: "")
            let snapshot = try watcher.read(until: "snapshot")
            let since = try #require(snapshot["rev"]?.numberValue.map { UInt64($0) })

            let book = AckBook(threshold: killAfter)
            let watched = Watched(watcher)
            let port = server.port
            onThreads(Self.streamClients + 3) { index in
                switch index {
                case 0: Self.kill(server.process, when: book)
                case 1: watched.run()
                case 2: Self.sendOverHTTP(port: port, seed: seed &+ 1, book: book)
                default: Self.sendOverStream(port: port, seed: seed &+ UInt64(index), book: book)
                }
            }
            #expect(try server.process.waitForExit() == SIGKILL, "killed by the signal")

            let acked = book.all
            #expect(acked.count >= killAfter)
            let restarted = try ServeProcess.start(db: db)
            defer { _ = try? restarted.stop() }
            let state = try restarted.state()
            let rev = try #require(state["rev"]?.numberValue.map { UInt64($0) })
            #expect(state["epoch"] == .string(epoch))

            // acked ⊆ durable: each acknowledged batch is the record at its revision.
            let records = try logRecords(db)
            #expect(records.map(\.sequence) == Array(1...rev), "the log has no gap and ends at the state's revision")
            #expect(rev >= acked.map(\.rev).max() ?? 0)
            for (batch, ackedRev) in acked {
                #expect(records[Int(ackedRev) - 1].payload == JSONValue.array(batch).encoded, "revision \(ackedRev)")
            }
            // state = replay of the durable log (whatever was committed but not acknowledged too).
            let replayed = try replayIndependently(records)
            #expect(state["value"] == (try JSONParser().parse(replayed.documentBytes)))

            // A subscriber from before the kill resumes: exactly the revisions it missed, the
            // ones it had seen live byte for byte as then.
            let client = try TestWebSocketClient.connect(port: restarted.port)
            _ = try client.readJSON()
            var mirror = StreamMirror()
            mirror.resume("all", path: "", value: snapshot["value"])
            try client.subscribe("all", path: "", since: (epoch, since))
            _ = try client.read(until: "subscribed") { try mirror.apply($0) }
            var resumed: [JSONValue] = []
            for _ in since..<rev {
                let patch = try client.readJSON()
                try mirror.apply(patch)
                resumed.append(patch)
            }
            #expect(resumed.map { $0["rev"] } == (since + 1...rev).map { .number(Double($0)) })
            let live = watched.patches
            #expect(resumed.prefix(live.count).map { $0["ops"]?.encoded } == live.map { $0["ops"]?.encoded })
            #expect(mirror.value(of: "all") == state["value"])
        }
    }

    /// SIGKILL once `book` has reached its threshold (or after 60 s, which fails the test).
    static func kill(_ process: IsletProcess, when book: AckBook) {
        _ = book.reached.wait(timeout: .now() + .seconds(60))
        process.send(signal: SIGKILL)
    }

    /// Sends random batches over one stream, four in flight, until the connection fails.
    static func sendOverStream(port: Int, seed: UInt64, book: AckBook) {
        guard let client = try? TestWebSocketClient.connect(port: port), (try? client.readJSON()) != nil else { return }
        var random = RandomCommands(seed: seed)
        var outstanding: [String: [JSONValue]] = [:]
        var next = 0
        do {
            while true {
                while outstanding.count < 4 {
                    let batch = random.batch(now: TestServer.start)
                    let id = "c\(next)"
                    next += 1
                    try client.command(id, batch)
                    outstanding[id] = batch
                }
                let message = try client.readJSON()
                guard let id = message["id"]?.stringValue, let batch = outstanding.removeValue(forKey: id) else {
                    continue
                }
                if message["type"] == "ack", let rev = message["rev"]?.numberValue {
                    book.acked(batch, rev: UInt64(rev))
                }
            }
        } catch {
            return  // the server is gone
        }
    }

    /// Posts random batches one after the other until the server stops answering.
    static func sendOverHTTP(port: Int, seed: UInt64, book: AckBook) {
        var random = RandomCommands(seed: seed)
        while true {
            let batch = random.batch(now: TestServer.start)
            guard let response = try? TestHTTP.commands(port: port, batch) else { return }
            if response.status == 200, let rev = (try? response.json())?["rev"]?.numberValue {
                book.acked(batch, rev: UInt64(rev))
            }
        }
    }
}

/// The live patches a subscriber received until the server died. The client is read only by
/// `run()`, on one thread; `patches` is read after that thread ended.
final class Watched: @unchecked Sendable {
    private let client: TestWebSocketClient
    private let lock = NSLock()
    private var received: [JSONValue] = []

    init(_ client: TestWebSocketClient) { self.client = client }

    var patches: [JSONValue] { self.lock.withLock { self.received } }

    func run() {
        while let message = try? self.client.readJSON() {
            guard message["type"] == "patch" else { continue }
            self.lock.withLock { self.received.append(message) }
        }
    }
}
