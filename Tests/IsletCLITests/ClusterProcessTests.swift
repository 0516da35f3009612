import Foundation
import IsletCore
import IsletTestSupport
import IsletTransport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Several real `islet serve --cluster` processes on one real `redis-server`: one order per
/// world, the same documents and patch bytes on every node, through kills and a Redis restart.
@Suite("A cluster of islet nodes on Redis Streams", .serialized)
struct ClusterProcessTests {
    @Test("commands sent to different nodes in a random interleaving leave every node with the same patches at every revision and the same document")
    func interleavedCommands() throws {
        try withCluster(["a", "b", "c"]) { _, nodes, _ in
            let watchers = try nodes.map { node in
                let watcher = try TestWebSocketClient.connect(port: node.port)
                _ = try watcher.readJSON()  // hello
                try watcher.subscribe("all", path: "")
                try watcher.read(until: "snapshot", id: "all")
                return watcher
            }
            let setup = RandomCommands(seed: 7)
            #expect(try TestHTTP.commands(port: nodes[0].port, setup.setUp()).status == 200)
            let ports = nodes.map(\.port)
            let highest = Mutex<UInt64>(0)
            onThreads(3) { index in
                var random = RandomCommands(seed: 100 + UInt64(index))
                for _ in 0..<40 {
                    let port = random.pick(ports)
                    guard let reply = try? TestHTTP.commands(port: port, random.batch(now: TestServer.start)),
                        reply.status == 200, let rev = try? reply.json()["rev"]?.numberValue
                    else { continue }
                    highest.withLock { $0 = max($0, UInt64(rev)) }
                }
            }
            let last = highest.withLock { $0 }
            #expect(last > 20)
            for node in nodes {
                try waitUntil(timeout: .seconds(10), "\(node.node) applied rev \(last)") { try node.rev() == last }
            }
            let documents = try nodes.map { try $0.document() }
            #expect(documents[1] == documents[0] && documents[2] == documents[0])
            // The patch frames themselves, rev by rev.
            var patches: [[UInt64: String]] = []
            for watcher in watchers {
                var byRev: [UInt64: String] = [:]
                var rev: UInt64 = 0
                while rev < last {
                    let text = try watcher.readText()
                    let message = try JSONParser.stored.parse(Array(text.utf8))
                    guard message["type"] == "patch", let value = message["rev"]?.numberValue else { continue }
                    rev = UInt64(value)
                    byRev[rev] = text
                }
                patches.append(byRev)
            }
            #expect(patches[0].count >= 20)
            #expect(patches[1] == patches[0] && patches[2] == patches[0])
        }
    }

    @Test("a subscriber on one node sees a command sent to another; creations, forks and deletions reach every node, and a world created on one node is usable on another at once")
    func acrossNodes() throws {
        try withCluster(["a", "b"]) { _, nodes, _ in
            let (a, b) = (nodes[0], nodes[1])
            let created = try TestHTTP.createSimulation(
                port: a.port, ["id": "team-b", "clock": ["mode": "virtual", "now": "2026-01-01T08:00:00Z"]])
            #expect(created.status == 201)
            let epoch = try created.json()["epoch"]?.stringValue
            // At once on the other node: it reads the creations to their end before answering 404.
            #expect(try TestHTTP.request(port: b.port, "/v1/simulations/team-b").status == 200)
            let watcher = try TestWebSocketClient.connect(port: b.port)
            _ = try watcher.readJSON()
            try watcher.subscribe("clock", path: "/clock", simulation: "team-b")
            let snapshot = try watcher.read(until: "snapshot", id: "clock")
            #expect(snapshot["epoch"]?.stringValue == epoch)
            let reply = try TestHTTP.commands(port: a.port, [["type": "clock.advance", "seconds": 90]], simulation: "team-b")
            #expect(reply.status == 200)
            let patch = try watcher.read(until: "patch")
            #expect(patch["rev"]?.numberValue == 1 && patch["simulation"] == "team-b")
            #expect(patch.encodedString.contains("2026-01-01T08:01:30"))
            // A fork made on b, of the revision both nodes hold, is the same world on a.
            let fork = try TestHTTP.createSimulation(port: b.port, ["id": "fork", "from": ["simulation": "team-b"]])
            #expect(fork.status == 201)
            #expect(try TestHTTP.request(port: a.port, "/v1/simulations/fork/state").status == 200)
            #expect(try a.document("fork") == b.document("fork"))
            // A duplicate id is refused wherever it is asked.
            #expect(try TestHTTP.createSimulation(port: b.port, ["id": "team-b"]).status == 409)
            // Deleting on a: b's subscriber is told, and the world is gone from both.
            #expect(try TestHTTP.request(port: a.port, "DELETE", "/v1/simulations/team-b").status == 200)
            let resync = try watcher.read(until: "resync")
            #expect(resync["reason"] == "deleted" && resync["simulation"] == "team-b")
            #expect(try TestHTTP.request(port: b.port, "/v1/simulations/team-b").status == 404)
            #expect(try TestHTTP.request(port: a.port, "/v1/simulations/team-b").status == 404)
            #expect(try TestHTTP.request(port: b.port, "/v1/simulations/never-made/state").status == 404)
        }
    }

    @Test("kill -9 of a node under command load: every acknowledged batch is on every survivor, its subscriber resumes on another node with exactly the missed patches, and its clock lease moves")
    func killANode() throws {
        try withCluster(["a", "b", "c"], ["--cluster-lease-ms", "600"]) { _, nodes, _ in
            let (a, b, c) = (nodes[0], nodes[1], nodes[2])
            // a took the clock of `default` first (it started first and sweeps at once).
            try waitUntil(timeout: .seconds(5), "a holds default's clock") {
                try a.cluster()["clockLeases"]?.arrayValue?.contains("default") == true
            }
            let setup = RandomCommands(seed: 11)
            #expect(try TestHTTP.commands(port: b.port, setup.setUp()).status == 200)
            let watcher = try TestWebSocketClient.connect(port: a.port)
            _ = try watcher.readJSON()
            try watcher.subscribe("all", path: "")
            let first = try watcher.read(until: "snapshot", id: "all")
            var mirror = StreamMirror()
            mirror.expect("all", path: "")
            try mirror.apply(first)
            let acked = AckBook(threshold: 15)
            let ports = [a.port, b.port, c.port]
            onThreads(3) { index in
                if index == 0 {
                    _ = acked.reached.wait(timeout: .now() + 30)
                    a.kill()
                    return
                }
                var random = RandomCommands(seed: 200 + UInt64(index))
                for _ in 0..<60 {
                    let batch = random.batch(now: TestServer.start)
                    guard let reply = try? TestHTTP.commands(port: random.pick(ports), batch),
                        reply.status == 200, let rev = try? reply.json()["rev"]?.numberValue
                    else { continue }
                    acked.acked(batch, rev: UInt64(rev))
                }
            }
            // What the subscriber on a saw before the kill.
            while let message = try? watcher.readJSON() { try mirror.apply(message) }
            let seen = mirror.rev
            let last = acked.all.map(\.rev).max() ?? 0
            for node in [b, c] {
                try waitUntil(timeout: .seconds(10), "\(node.node) applied rev \(last)") { try node.rev() >= last }
            }
            #expect(try b.document() == c.document())
            // Every acknowledged batch is in the survivors' history at its revision: replaying
            // the acknowledged revisions' patches through a resumed subscriber reaches their state.
            let resumed = try TestWebSocketClient.connect(port: c.port)
            let hello = try resumed.readJSON()
            try resumed.subscribe("all", path: "", since: (hello["epoch"]?.stringValue ?? "", seen))
            mirror.resume("all", path: "", value: mirror.value(of: "all"))
            var replayed: [UInt64] = []
            let target = try c.rev()
            try #require(seen < target, "the load went on after the kill")
            while (replayed.last ?? seen) < target {
                let message = try resumed.readJSON()
                #expect(message["type"] != "snapshot", "resumed, not re-sent: \(message)")
                if message["type"] == "patch", let rev = message["rev"]?.numberValue { replayed.append(UInt64(rev)) }
                try mirror.apply(message)
            }
            #expect(replayed == Array((seen + 1)...target))
            let state = try JSONParser.stored.parse(try TestHTTP.state(port: c.port).json()["value"]?.encoded ?? [])
            #expect(mirror.value(of: "all") == state)
            for (_, rev) in acked.all { #expect(rev <= target) }
            // The clock moved to a survivor within the lease.
            try waitUntil(timeout: .seconds(5), "a survivor holds default's clock") {
                try [b, c].contains { try $0.cluster()["clockLeases"]?.arrayValue?.contains("default") == true }
            }
        }
    }

    @Test("a node that joins late loads the latest snapshot and reads the stream's tail; the stream is trimmed below the snapshot before it")
    func lateJoiner() throws {
        let snapshots = ["--cluster-snapshot-every", "10"]
        try withCluster(["a"], snapshots) { redis, nodes, _ in
            let a = nodes[0]
            var random = RandomCommands(seed: 5)
            #expect(try TestHTTP.commands(port: a.port, random.setUp()).status == 200)
            for _ in 0..<80 { _ = try TestHTTP.commands(port: a.port, random.batch(now: TestServer.start)) }
            let epoch = try TestHTTP.request(port: a.port, "/v1/simulations/default").json()["epoch"]?.stringValue ?? ""
            try waitUntil(timeout: .seconds(5), "the stream is trimmed") {
                try redis.integer(["XLEN", "islet:log:\(epoch)"]) < 40
            }
            let late = try ClusterNodeProcess.start("late", redis: redis, snapshots)
            defer { late.stop() }
            try waitUntil(timeout: .seconds(5), "the late node applied a's revision") { try late.rev() == a.rev() }
            #expect(try late.document() == a.document())
            // And it keeps up from there.
            let reply = try TestHTTP.commands(port: late.port, [["type": "clock.advance", "seconds": 1]])
            #expect(reply.status == 200)
            try waitUntil(timeout: .seconds(5), "a applied the late node's batch") { try a.rev() == late.rev() }
            #expect(try late.document() == a.document())
        }
    }

    @Test("Redis stopped: commands answer 503 unavailable while reads keep serving; restarted (AOF always), the nodes reconnect and nothing acknowledged is lost")
    func redisRestart() throws {
        try withCluster(["a", "b"]) { redis, nodes, _ in
            let (a, b) = (nodes[0], nodes[1])
            let advance: [JSONValue] = [["type": "clock.advance", "seconds": 60]]
            for _ in 0..<5 { #expect(try TestHTTP.commands(port: a.port, advance).status == 200) }
            let before = try a.document()
            redis.stop()
            try a.waitForHealth("unavailable")
            let refused = try TestHTTP.commands(port: a.port, advance)
            #expect(refused.status == 503)
            #expect(try refused.json()["error"]?["code"] == "unavailable")
            #expect(try TestHTTP.request(port: b.port, "/healthz").status == 200, "reads stay served")
            #expect(try b.document() == before)
            // Redis stays down until two reconnects were refused: they must not end the retries
            // (a refused connect was swallowed, and the nodes never tried again).
            try waitUntil(timeout: .seconds(10), "a's reconnects were refused twice") {
                (try a.cluster()["reconnectAttempts"]?.numberValue ?? 0) >= 2
            }
            try redis.start()
            try a.waitForHealth("ok", timeout: .seconds(15))
            try b.waitForHealth("ok", timeout: .seconds(15))
            #expect(try a.cluster()["reconnectAttempts"] == 0)
            let reply = try TestHTTP.commands(port: b.port, advance)
            #expect(reply.status == 200)
            #expect(try reply.json()["rev"]?.numberValue == 6)
            try waitUntil(timeout: .seconds(5), "a applied rev 6") { try a.rev() == 6 }
            #expect(try a.document() == b.document())
        }
    }

    @Test("behind HAProxy: a subscriber whose node is killed reconnects through the balancer to another node and resumes with exactly the missed patches")
    func throughHAProxy() throws {
        try withCluster(["a", "b", "c"]) { _, nodes, dir in
            let proxy = try HAProxyProcess(nodes: nodes, directory: dir.path)
            let client = try TestWebSocketClient.connect(port: proxy.port)
            let hello = try client.readJSON()
            let victim = try #require(nodes.first { $0.node == hello["node"]?.stringValue }, "hello names its node")
            try client.subscribe("clock", path: "/clock")
            let snapshot = try client.read(until: "snapshot", id: "clock")
            var rev = UInt64(snapshot["rev"]?.numberValue ?? 0)
            let advance: [JSONValue] = [["type": "clock.advance", "seconds": 60]]
            for _ in 0..<3 { #expect(try TestHTTP.commands(port: proxy.port, advance).status == 200) }
            while rev < 3 { rev = UInt64(try client.read(until: "patch")["rev"]?.numberValue ?? 0) }
            victim.kill()
            // Commands through the balancer go on while the client is away.
            for _ in 0..<4 {
                try waitUntil(timeout: .seconds(5), "a command through the balancer is acknowledged") {
                    (try? TestHTTP.commands(port: proxy.port, advance).status) == 200
                }
            }
            let again = try TestWebSocketClient.connect(port: proxy.port)
            let second = try again.readJSON()
            #expect(second["node"]?.stringValue != victim.node)
            #expect(second["epoch"] == hello["epoch"], "the same history on every node")
            try again.subscribe("clock", path: "/clock", since: (hello["epoch"]?.stringValue ?? "", rev))
            #expect(try again.read(until: "subscribed", id: "clock")["resumed"] == true)
            var replayed: [UInt64] = []
            while replayed.count < 4 {
                let patch = try again.read(until: "patch")
                replayed.append(UInt64(patch["rev"]?.numberValue ?? 0))
            }
            #expect(replayed == [4, 5, 6, 7])
        }
    }

    @Test("a simulation's own tokens are cluster-wide: made on one node, they reach that simulation on another, and nothing else")
    func tokensAcrossNodes() throws {
        try withCluster(["a", "b"], ["--admin-token", "cluster-admin-0123456789"]) { _, nodes, _ in
            let (a, b) = (nodes[0], nodes[1])
            let created = try TestHTTP.request(
                port: a.port, "POST", "/v1/simulations",
                headers: [("Content-Type", "application/json"), ("Authorization", "Bearer cluster-admin-0123456789")],
                body: JSONValue.object(["id": "team", "tokens": true]).encoded)
            #expect(created.status == 201)
            let token = try #require(try created.json()["tokens"]?["admin"]?.stringValue)
            let bearer = [("Authorization", "Bearer \(token)")]
            #expect(try TestHTTP.state(port: b.port, simulation: "team", headers: bearer).status == 200)
            #expect(try TestHTTP.commands(port: b.port, [["type": "clock.advance", "seconds": 5]], simulation: "team", headers: bearer).status == 200)
            #expect(try TestHTTP.state(port: b.port, headers: bearer).status == 403, "not default")
            #expect(try TestHTTP.state(port: b.port, simulation: "team").status == 401, "not without a token")
        }
    }

    @Test("a request and a stream with a simulation's token, reaching a node before it has applied that simulation's creation, wait for it instead of being refused; messages sent meanwhile are kept, up to a limit")
    func tokenBeforeCreationIsApplied() throws {
        try withCluster(["a", "b"], ["--admin-token", "cluster-admin-0123456789"]) { redis, nodes, _ in
            let (a, b) = (nodes[0], nodes[1])
            // b is stopped while a creates the simulation, and the request waits in b's listening
            // socket; Redis then holds every client's commands for 2 s, so b, resumed, has read
            // the creation but cannot load the world, nor learn how far the log goes, until then.
            b.process.send(signal: SIGSTOP)
            var resumed = false
            defer { if !resumed { b.process.send(signal: SIGCONT) } }
            let created = try TestHTTP.request(
                port: a.port, "POST", "/v1/simulations",
                headers: [("Content-Type", "application/json"), ("Authorization", "Bearer cluster-admin-0123456789")],
                body: JSONValue.object(["id": "early", "tokens": true]).encoded)
            #expect(created.status == 201)
            let tokens = try #require(try created.json()["tokens"])
            let admin = try #require(tokens["admin"]?.stringValue)
            let viewer = try #require(tokens["viewer"]?.stringValue)
            let request = try TestHTTPConnection(port: b.port, timeout: .seconds(10))
            try request.send("GET", "/v1/simulations/early/state?path=/clock", headers: [("Authorization", "Bearer \(viewer)")])
            #expect(try redis.command(["CLIENT", "PAUSE", "2000", "ALL"]) == "+OK")
            b.process.send(signal: SIGCONT)
            resumed = true
            // A stream with the new token: open at once, its hello waits for the catch-up; a
            // message it sends meanwhile is kept and answered after the hello.
            let stream = try TestWebSocketClient.connect(
                port: b.port, headers: [("Authorization", "Bearer \(admin)")], timeout: .seconds(10))
            try stream.subscribe("clock", path: "/clock", simulation: "early")
            // A stream that sends more messages than that before its hello is closed with
            // limit_exceeded instead of being buffered on.
            let flood = try TestWebSocketClient.connect(
                port: b.port, headers: [("Authorization", "Bearer \(admin)")], timeout: .seconds(10))
            for id in 0...64 {  // one more than a stream may send before its hello
                try flood.send(json: ["op": "ping", "id": .number(Double(id))])
            }
            let refusal = try flood.readJSON()
            #expect(refusal["type"] == "error" && refusal["error"]?["code"] == "limit_exceeded", "\(refusal)")
            #expect(throws: TestClientError.self) { try flood.readJSON() }  // closed, no hello
            let reply = try request.readResponse()
            #expect(reply.status == 200, "\(reply.text)")
            #expect(try stream.readJSON()["type"] == "hello")
            let snapshot = try stream.readJSON()
            #expect(snapshot["type"] == "snapshot" && snapshot["sub"] == "clock")
            let epoch = try created.json()["epoch"]
            #expect(snapshot["epoch"] == epoch)
            // A token nobody made is still refused, after the catch-up.
            let unknown = [("Authorization", "Bearer not-a-token-of-anything")]
            #expect(try TestHTTP.state(port: b.port, simulation: "early", headers: unknown).status == 401)
        }
    }

    @Test("a stream's subscribe and command naming a simulation just created on another node wait for this node to apply the creation, instead of not_found")
    func streamBeforeCreationIsApplied() throws {
        try withCluster(["a", "b"]) { redis, nodes, _ in
            let (a, b) = (nodes[0], nodes[1])
            let stream = try TestWebSocketClient.connect(port: b.port, timeout: .seconds(10))
            #expect(try stream.readJSON()["type"] == "hello")
            // b is stopped while a creates the world; then Redis holds every command for 2 s, so b,
            // resumed, reads the creation and the stream's messages but cannot load the world yet.
            b.process.send(signal: SIGSTOP)
            var resumed = false
            defer { if !resumed { b.process.send(signal: SIGCONT) } }
            #expect(try TestHTTP.createSimulation(port: a.port, ["id": "fresh"]).status == 201)
            #expect(try redis.command(["CLIENT", "PAUSE", "2000", "ALL"]) == "+OK")
            try stream.subscribe("clock", path: "/clock", simulation: "fresh")
            try stream.command("c1", [["type": "device.upsert", "id": "d1"]], simulation: "fresh")
            b.process.send(signal: SIGCONT)
            resumed = true
            var seen: [String: JSONValue] = [:]
            while seen["snapshot"] == nil || seen["ack"] == nil {
                let message = try stream.readJSON()
                let type = message["type"]?.stringValue ?? ""
                #expect(type != "error", "\(message)")
                if type == "error" { break }
                seen[type] = message
            }
            #expect(seen["snapshot"]?["sub"] == "clock")
            #expect(seen["ack"]?["id"] == "c1" && seen["ack"]?["rev"] == 1)
        }
    }

    @Test("a node that has not yet read the log to its end answers the API 503 with Retry-After and refuses streams with 1013, not a placeholder world or a 404")
    func joiningNode() throws {
        try withCluster(["a"]) { redis, nodes, _ in
            #expect(try TestHTTP.createSimulation(port: nodes[0].port, ["id": "team"]).status == 201)
            // Redis holds every command for 2 s: c listens, but cannot read the log meanwhile.
            #expect(try redis.command(["CLIENT", "PAUSE", "2000", "ALL"]) == "+OK")
            let process = try IsletProcess(
                arguments: ["serve", "--port", "0", "--cluster", "redis://127.0.0.1:\(redis.port)", "--node-id", "c"]
                    + TestServer.serveArguments)
            let c = ClusterNodeProcess(process: process, port: try process.waitForListening(), node: "c")
            defer { c.stop() }
            for path in ["/v1/state", "/v1/simulations/team/state"] {
                let reply = try TestHTTP.request(port: c.port, path)
                #expect(reply.status == 503 && reply.headers["retry-after"] == "1", "\(path): \(reply.text)")
                #expect(try reply.json()["error"]?["code"] == "unavailable")
            }
            let stream = try TestWebSocketClient.connect(port: c.port)
            #expect(try stream.readJSON()["error"]?["code"] == "unavailable")
            #expect(try stream.readClose() == 1013)
            try c.waitForHealth("ok")
            #expect(try TestHTTP.request(port: c.port, "/v1/simulations/team/state").status == 200)
        }
    }

    @Test("a node restarted under its id answers its new requests, not with its old entries: a creation gets its own id and tokens, a command its own outcome and revision")
    func restartUnderTheSameID() throws {
        let extra = ["--admin-token", "cluster-admin-0123456789"]
        try withCluster(["a", "b"], extra) { redis, nodes, _ in
            let b = nodes[1]
            let admin = [("Authorization", "Bearer cluster-admin-0123456789")]
            let json = [("Content-Type", "application/json")] + admin
            func create(_ port: Int, _ id: String) throws -> TestHTTPResponse {
                try TestHTTP.request(
                    port: port, "POST", "/v1/simulations", headers: json,
                    body: JSONValue.object(["id": .string(id), "tokens": true]).encoded)
            }
            let first = try create(b.port, "first")
            #expect(first.status == 201)
            let refused = try TestHTTP.commands(port: b.port, [["type": "device.delete", "id": "nope"]], headers: admin)
            #expect(refused.status == 404)
            b.kill()
            // (Whether its old entries are read before or after its new requests is a race; the
            // unit test of ClusterLog pins the rule: another incarnation's entries are not mine.)
            let again = try ClusterNodeProcess.start("b", redis: redis, extra)
            defer { again.stop() }
            let second = try create(again.port, "second")
            #expect(second.status == 201)
            #expect(try second.json()["id"] == "second", "\(second.text)")
            #expect(try second.json()["tokens"] != first.json()["tokens"])
            let upsert = try TestHTTP.commands(port: again.port, [["type": "device.upsert", "id": "fresh"]], headers: admin)
            #expect(upsert.status == 200, "\(upsert.text)")
            let rev = try upsert.json()["rev"]?.numberValue
            let state = try TestHTTP.state(port: again.port, path: "/devices/fresh", headers: admin).json()
            #expect(state["value"] != nil && rev == state["rev"]?.numberValue, "acknowledged at the revision it is at: \(rev ?? -1)")
        }
    }

    @Test("a fork of a past revision in a cluster is rebuilt from the snapshots in Redis and the stream: the source's document at that revision; one trimmed away is 409 naming the earliest")
    func pastFork() throws {
        try withCluster(["a", "b"], ["--cluster-snapshot-every", "10"]) { _, nodes, _ in
            let (a, b) = (nodes[0], nodes[1])
            var random = RandomCommands(seed: 9)
            #expect(try TestHTTP.commands(port: a.port, random.setUp()).status == 200)
            var documents: [UInt64: JSONValue] = [:]
            for _ in 0..<40 {
                let reply = try TestHTTP.commands(port: a.port, random.batch(now: TestServer.start))
                guard reply.status == 200, let rev = try reply.json()["rev"]?.numberValue else { continue }
                documents[UInt64(rev)] = try TestHTTP.state(port: a.port).json()["value"]
            }
            let revs = documents.keys.sorted()
            try #require(revs.count > 10)
            let past = revs[revs.count - 3]
            let fork = try TestHTTP.createSimulation(port: b.port, ["id": "past", "from": ["simulation": "default", "rev": .number(Double(past))]])
            #expect(fork.status == 201, "\(String(decoding: fork.body, as: UTF8.self))")
            #expect(try TestHTTP.state(port: b.port, simulation: "past").json()["value"] == documents[past])
            #expect(try a.document("past") == b.document("past"))
            let gone = try TestHTTP.createSimulation(port: a.port, ["id": "gone", "from": ["simulation": "default", "rev": 1]])
            #expect(gone.status == 409)
            // A revision yet to come names the same earliest (not the latest).
            func earliest(_ reply: TestHTTPResponse) throws -> Substring? {
                let message = try reply.json()["error"]?["message"]?.stringValue ?? ""
                return message.firstRange(of: "the earliest available is ").map { message[$0.upperBound...].prefix { $0 != "," } }
            }
            let later = try TestHTTP.createSimulation(
                port: b.port, ["id": "later", "from": ["simulation": "default", "rev": .number(Double(revs.last! + 5))]])
            #expect(later.status == 409)
            #expect(try earliest(later) != nil && earliest(later) == earliest(gone), "\(later.text)")
        }
    }
}
