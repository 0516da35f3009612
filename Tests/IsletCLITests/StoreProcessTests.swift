import Foundation
import IsletCore
import IsletStore
import IsletTestSupport
import Logging
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `islet serve --db`, `--replay` and the `islet store` commands as processes.
@Suite("The command log of islet serve, and islet store")
struct StoreProcessTests {
    /// A server on `db` that has applied random batches (on the paused test clock); its state.
    func record(db: String, seed: UInt64, batches: Int = 60) throws -> (ServeProcess, JSONValue) {
        let server = try ServeProcess.start(db: db)
        var random = RandomCommands(seed: seed)
        _ = try TestHTTP.commands(port: server.port, random.setUp())
        for _ in 0..<batches { _ = try TestHTTP.commands(port: server.port, random.batch(now: TestServer.start)) }
        return (server, try server.state())
    }

    @Test("a restart after SIGTERM serves the same state, revision and epoch")
    func gracefulRestart() throws {
        try withTemporaryDirectory { dir in
            let db = dir.file("islet.sqlite")
            let (server, before) = try self.record(db: db, seed: 5)
            #expect(try server.stop() == 0)
            #expect(!FileManager.default.fileExists(atPath: db + "-wal"), "the log was closed cleanly")
            let restarted = try ServeProcess.start(db: db)
            defer { _ = try? restarted.stop() }
            #expect(try TestHTTP.state(port: restarted.port).body == before.encoded)
        }
    }

    @Test(
        "an unusable database is refused with exit code 2 and a message naming it, and is left unchanged",
        arguments: ["garbage", "foreign", "locked"])
    func refusedDatabase(kind: String) throws {
        try withTemporaryDirectory { dir in
            let db = dir.file("islet.sqlite")
            var holder: ServeProcess?
            switch kind {
            case "garbage":
                try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 13) }).write(to: URL(fileURLWithPath: db))
            case "foreign":
                try Data("SQLite format 3\u{0}".utf8 + [UInt8](repeating: 0, count: 4080)).write(
                    to: URL(fileURLWithPath: db))
            default:
                holder = try ServeProcess.start(db: db)
            }
            defer { _ = try? holder?.stop() }
            let before = try Data(contentsOf: URL(fileURLWithPath: db))
            let process = try IsletProcess(arguments: ["serve", "--port", "0", "--db", db] + TestServer.serveArguments)
            #expect(try process.waitForExit() == 2)
            let message = process.standardError()
            #expect(message.contains(db), "\(message)")
            #expect(message.contains("move it aside") || message.contains("stop it first"), "\(message)")
            #expect(try process.readLine() == nil, "it never listened")
            #expect(try Data(contentsOf: URL(fileURLWithPath: db)) == before)
        }
    }

    @Test("export from a running server, then serve --replay and store import give the same state, byte for byte")
    func goldenReplay() throws {
        try withTemporaryDirectory { dir in
            let (source, state) = try self.record(db: dir.file("source.sqlite"), seed: 9)
            defer { _ = try? source.stop() }
            let scenario = dir.file("scenario.jsonl")
            let onItself = try runIslet(["store", "export", "--db", dir.file("source.sqlite"), "--out", dir.file("source.sqlite")])
            #expect(onItself.status == 2 && onItself.errors.contains("is the log itself"), "\(onItself.errors)")
            let export = try runIslet(["store", "export", "--db", dir.file("source.sqlite"), "--out", scenario])
            #expect(export.status == 0, "\(export.errors)")
            let lines = try String(contentsOfFile: scenario, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == Int(state["rev"]?.numberValue ?? 0))
            #expect(lines.first?.hasPrefix(#"{"at":"2026-11-22T08:00:00Z","commands":["#) == true)

            let replay = try IsletProcess(arguments: ["serve", "--port", "0", "--demo", "off", "--replay", scenario])
            let replayed = try TestHTTP.state(port: try replay.waitForListening()).json()
            replay.send(signal: SIGTERM)
            #expect(replayed["rev"] == state["rev"])
            #expect(replayed["value"]?.encoded == state["value"]?.encoded)

            let imported = dir.file("imported.sqlite")
            let result = try runIslet(["store", "import", scenario, "--db", imported])
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.contains("imported \(lines.count) lines"))
            let server = try ServeProcess.start(db: imported)
            defer { _ = try? server.stop() }
            #expect(try server.state()["value"]?.encoded == state["value"]?.encoded)
            #expect(try runIslet(["store", "import", scenario, "--db", imported]).status == 2, "in use, and not empty")
        }
    }

    @Test("export --simulation writes a simulation's log as the same scenario lines its commands make in default, from a running server; a fork and an unknown simulation are refused")
    func exportSimulation() throws {
        try withTemporaryDirectory { dir in
            let db = dir.file("islet.sqlite")
            let server = try ServeProcess.start(db: db)
            defer { _ = try? server.stop() }
            #expect(try TestHTTP.createSimulation(port: server.port, ["id": "harness"]).status == 201)
            for simulation in [nil, "harness"] {
                var random = RandomCommands(seed: 31)
                _ = try TestHTTP.commands(port: server.port, random.setUp(), simulation: simulation)
                for _ in 0..<30 {
                    _ = try TestHTTP.commands(port: server.port, random.batch(now: TestServer.start), simulation: simulation)
                }
            }
            let fork = try TestHTTP.createSimulation(port: server.port, ["id": "branch", "from": ["simulation": "harness"]])
            #expect(fork.status == 201)

            #expect(try runIslet(["store", "export", "--db", db, "--out", dir.file("default.jsonl")]).status == 0)
            let export = try runIslet(["store", "export", "--db", db, "--simulation", "harness", "--out", dir.file("harness.jsonl")])
            #expect(export.status == 0, "\(export.errors)")
            #expect(export.errors.contains("lines of simulation harness"), "\(export.errors)")
            let lines = try String(contentsOfFile: dir.file("harness.jsonl"), encoding: .utf8)
            #expect(lines == (try String(contentsOfFile: dir.file("default.jsonl"), encoding: .utf8)))
            let harness = try TestHTTP.state(port: server.port, simulation: "harness").json()
            #expect(lines.split(separator: "\n").count == Int(harness["rev"]?.numberValue ?? 0))

            let forked = try runIslet(["store", "export", "--db", db, "--simulation", "branch", "--out", dir.file("branch.jsonl")])
            #expect(forked.status == 2)
            #expect(forked.errors.contains("simulation branch is a fork of harness at revision"), "\(forked.errors)")
            let unknown = try runIslet(["store", "export", "--db", db, "--simulation", "nosuch", "--out", dir.file("nosuch.jsonl")])
            #expect(unknown.status == 2)
            #expect(unknown.errors.contains(#"holds no simulation "nosuch""#), "\(unknown.errors)")
            for refused in ["branch.jsonl", "nosuch.jsonl"] {
                #expect(!FileManager.default.fileExists(atPath: dir.file(refused)), "a refused export writes nothing")
            }
            let onWorlds = try runIslet(["store", "export", "--db", db, "--out", dir.file("islet.simulations.sqlite")])
            #expect(onWorlds.status == 2 && onWorlds.errors.contains("is the log itself"), "\(onWorlds.errors)")
        }
    }

    @Test("an empty scenario imports as a log with no revisions, and says so")
    func emptyImport() throws {
        try withTemporaryDirectory { dir in
            let scenario = dir.file("empty.jsonl")
            try "".write(toFile: scenario, atomically: true, encoding: .utf8)
            let result = try runIslet(["store", "import", scenario, "--db", dir.file("empty.sqlite")])
            #expect(result.status == 0, "\(result.errors)")
            #expect(result.output.contains(": no revisions, 0 clock advances added"), "\(result.output)")
        }
    }

    @Test("a scenario that does not replay, or is missing, is refused before any log is created")
    func refusedImportLeavesNothing() throws {
        try withTemporaryDirectory { dir in
            let scenario = dir.file("bad.jsonl")
            let good =
                #"{"at":"2026-11-22T08:00:00Z","commands":[{"type":"device.upsert","id":"d1","model":"iphone-15-pro"}]}"#
            let refused = #"{"at":"2026-11-22T08:01:00Z","commands":[{"type":"nope"}]}"#
            try (good + "\n" + refused + "\n").write(toFile: scenario, atomically: true, encoding: .utf8)
            let db = dir.file("new.sqlite")
            let result = try runIslet(["store", "import", scenario, "--db", db])
            #expect(result.status == 2)
            #expect(result.errors.contains("line 2"), "\(result.errors)")
            #expect(!FileManager.default.fileExists(atPath: db), "no log is created for a refused scenario")
            #expect(try runIslet(["store", "import", dir.file("missing.jsonl"), "--db", db]).status == 2)
            #expect(!FileManager.default.fileExists(atPath: db))
            let serve = try runIslet(["serve", "--port", "0", "--replay", scenario, "--db", db])
            #expect(serve.status == 2)
            #expect(!FileManager.default.fileExists(atPath: db))
        }
    }

    @Test("compact refuses while a fork of default has no genesis snapshot yet (it needs the records); after a start wrote it, compact runs and the fork is intact")
    func compactKeepsWhatAForkNeeds() throws {
        try withTemporaryDirectory { dir in
            let db = dir.file("islet.sqlite")
            let (server, _) = try self.record(db: db, seed: 21, batches: 20)
            #expect(try server.stop() == 0)
            // What a server killed right after acknowledging a fork of default at revision 5 leaves.
            do {
                let store = try WorldStore(path: dir.file("islet.simulations.sqlite"), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
                _ = try store.create(
                    "fk", instant: TestServer.start.millisecondsSinceEpoch, genesis: nil,
                    values: ["fork.source": "default", "fork.rev": "5", "fork.salt": "77"])
            }
            let refused = try runIslet(["store", "compact", "--db", db])
            #expect(refused.status == 2, "\(refused.output)")
            #expect(refused.errors.contains("fk is a fork of default at revision 5"), "\(refused.errors)")
            let started = try ServeProcess.start(db: db)
            let fork = try TestHTTP.state(port: started.port, simulation: "fk").text
            #expect(try started.stop() == 0)
            let compact = try runIslet(["store", "compact", "--db", db])
            #expect(compact.status == 0, "\(compact.errors)")
            #expect(compact.output.contains("removed"), "\(compact.output)")
            let again = try ServeProcess.start(db: db)
            defer { _ = try? again.stop() }
            #expect(try TestHTTP.state(port: again.port, simulation: "fk").text == fork)
        }
    }

    @Test("compact keeps what startup and resuming need; info describes the log; a compacted log cannot be exported")
    func compactAndInfo() throws {
        try withTemporaryDirectory { dir in
            let db = dir.file("islet.sqlite")
            let (server, before) = try self.record(db: db, seed: 13, batches: 40)
            let since = try #require(before["rev"]?.numberValue.map { UInt64($0) })
            let epoch = try #require(before["epoch"]?.stringValue)
            _ = try TestHTTP.commands(port: server.port, [["type": "device.upsert", "id": "d1", "locked": true]])
            #expect(try runIslet(["store", "compact", "--db", db]).status == 2, "the server holds the log")
            #expect(try server.stop() == 0)

            let compact = try runIslet(["store", "compact", "--db", db, "--keep", "5"])
            #expect(compact.status == 0, "\(compact.errors)")
            let info = try runIslet(["store", "info", "--db", db]).output
            #expect(info.contains("epoch: \(epoch)"))
            #expect(info.contains("last revision: \(since + 1)"))
            #expect(info.contains("records: 5"))
            #expect(try runIslet(["store", "export", "--db", db]).status == 2)
            // A mistyped --db is refused, not created; a directory is said to be one.
            for command in ["compact", "repair", "info", "export"] {
                let typo = dir.file("typo-\(command).sqlite")
                let refused = try runIslet(["store", command, "--db", typo])
                #expect(refused.status == 2 && refused.errors.contains("there is no command log"), "\(refused.errors)")
                #expect(!FileManager.default.fileExists(atPath: typo))
                let directory = try runIslet(["store", command, "--db", dir.path])
                #expect(directory.status == 2 && directory.errors.contains("is a directory"), "\(directory.errors)")
            }
            // A refused export over an earlier scenario file leaves the file as it was.
            let earlier = dir.file("earlier.jsonl")
            let kept = #"{"at":"2026-03-02T08:00:00Z","commands":[]}"# + "\n"
            try kept.write(toFile: earlier, atomically: false, encoding: .utf8)
            #expect(try runIslet(["store", "export", "--db", db, "--out", earlier]).status == 2)
            #expect(try String(contentsOfFile: earlier, encoding: .utf8) == kept)
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.contains(".partial") } == [])

            let restarted = try ServeProcess.start(db: db)
            defer { _ = try? restarted.stop() }
            let client = try TestWebSocketClient.connect(port: restarted.port)
            _ = try client.readJSON()
            try client.subscribe("d", path: "/devices/d1/locked", since: (epoch, since))
            #expect(try client.readJSON()["type"] == "subscribed")
            let patch = try client.readJSON()
            #expect(patch["rev"] == .number(Double(since + 1)))
            #expect(patch["ops"] == [["op": "replace", "path": "/devices/d1/locked", "value": true]])
        }
    }

    @Test(
        "a record that does not replay stops serve with its number and the remedy; store repair keeps a copy, cuts the log back to the record before, and serve starts there"
    )
    func repair() throws {
        try withTemporaryDirectory { dir in
            let db = dir.file("islet.sqlite")
            let (server, _) = try self.record(db: db, seed: 9, batches: 12)
            #expect(try server.stop() == 0)
            // A record this islet cannot replay (as a newer islet, or a damaged file, may leave):
            // an update of an activity that does not exist, then a good record after it.
            let bad: UInt64
            let epochBefore: JSONValue
            do {
                let log = try CommandLog(path: db, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
                bad = log.lastSequence + 1
                epochBefore = .string(log.epoch)
                let refused = Array(#"[{"type":"activity.update","id":"nobody","content":{"state":{}}}]"#.utf8)
                let fine = Array(#"[{"type":"clock.advance","seconds":1}]"#.utf8)
                try log.append([
                    LogRecord(sequence: bad, instant: TestServer.start.millisecondsSinceEpoch, kind: .batch, payload: refused),
                    LogRecord(sequence: bad + 1, instant: TestServer.start.millisecondsSinceEpoch, kind: .batch, payload: fine),
                ])
            }
            let refused = try IsletProcess(arguments: ["serve", "--port", "0", "--db", db] + TestServer.serveArguments)
            #expect(try refused.waitForExit() == 2)
            let message = refused.standardError()
            #expect(message.contains("record \(bad) does not replay"), "\(message)")
            #expect(message.contains("islet store repair --db \(db)"), "\(message)")

            // A --copy that exists is refused, the file and the log left as they were.
            let precious = dir.file("precious.txt")
            try "keep me".write(toFile: precious, atomically: false, encoding: .utf8)
            let taken = try runIslet(["store", "repair", "--db", db, "--copy", precious])
            #expect(taken.status == 2 && taken.errors.contains("\(precious) exists"), "\(taken.errors)")
            #expect(try String(contentsOfFile: precious, encoding: .utf8) == "keep me")

            let copy = dir.file("before-repair.sqlite")
            let repaired = try runIslet(["store", "repair", "--db", db, "--copy", copy])
            #expect(repaired.status == 0, "\(repaired.errors)")
            #expect(repaired.output.contains("record \(bad) did not replay; removed 2 records"), "\(repaired.output)")
            #expect(repaired.output.contains("now ends at revision \(bad - 1)"), "\(repaired.output)")
            let kept = try runIslet(["store", "info", "--db", copy])
            #expect(kept.output.contains("last revision: \(bad + 1)"), "the copy is the file as it was: \(kept.output)")

            let restarted = try ServeProcess.start(db: db)
            let state = try restarted.state()
            #expect(state["rev"] == .number(Double(bad - 1)))
            #expect(state["epoch"] != nil && state["epoch"] != epochBefore, "another history: a new epoch")
            #expect(try restarted.stop() == 0)
            let again = try runIslet(["store", "repair", "--db", db])
            #expect(again.status == 0)
            #expect(again.output.contains("nothing to repair"), "\(again.output)")
        }
    }

    @Test("serve --db, --durability and snapshot settings appear in --print-config; bad values are refused")
    func flags() throws {
        let printed = try runIslet(
            ["serve", "--print-config", "--db", "/tmp/x.sqlite", "--durability", "full", "--snapshot-every", "7"])
        #expect(printed.output.contains("db: /tmp/x.sqlite"))
        #expect(printed.output.contains("durability: full"))
        #expect(printed.output.contains("snapshot-every: 7"))
        let replay = try runIslet(
            ["serve", "--print-config", "--replay", "s.jsonl"], environment: ["ISLET_DB": "/tmp/kept.sqlite"])
        #expect(replay.output.contains("db: :memory:"), "a replay never writes into ISLET_DB's log")
        #expect(try runIslet(["serve", "--port", "0", "--snapshot-interval", "inf"]).status == 2)
        #expect(try runIslet(["serve", "--port", "0", "--durability", "sometimes"]).status != 0)
        #expect(try runIslet(["serve", "--port", "0", "--snapshot-every", "0"]).status == 2)
        // An address in use (by another islet) is refused like any other that cannot be used.
        let first = try IsletProcess(arguments: ["serve", "--port", "0"] + TestServer.serveArguments)
        let port = try first.waitForListening()
        defer { first.send(signal: SIGTERM) }
        let inUse = try runIslet(["serve", "--port", String(port), "--db", ":memory:"])
        #expect(inUse.status == 2 && inUse.errors.contains("cannot listen on"), "\(inUse.errors)")
        // A switch set to anything but 1/true/0/false is refused, not quietly off.
        let yes = try runIslet(["serve", "--print-config"], environment: ["ISLET_WS_COMPRESSION": "yes"])
        #expect(yes.status == 64 && yes.errors.contains("ISLET_WS_COMPRESSION must be 1 or true"), "\(yes.errors)")
        let on = try runIslet(["serve", "--print-config"], environment: ["ISLET_APNS_STRICT": "TRUE"])
        #expect(on.status == 0 && on.output.contains("apns-strict: true"), "\(on.output)")
    }
}
