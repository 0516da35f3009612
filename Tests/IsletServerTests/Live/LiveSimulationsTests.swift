import Foundation
import Synchronization
import IsletCore
import IsletServer
import IsletStore
import IsletTestSupport
import Testing

/// Simulations on a real socket: isolated worlds created, forked and deleted over the API.
@Suite("Simulations: many isolated worlds in one server")
struct LiveSimulationsTests {
    /// A device, an app and an activity on a paused virtual clock at `now`.
    static func world(now: String, app: String = "coffee") -> [JSONValue] {
        [
            ["type": "clock.set", "mode": "virtual", "now": .string(now), "rate": 0],
            Fixture.device, ["type": "app.upsert", "id": .string(app), "name": "App", "foreground": true],
            [
                "type": "activity.request", "id": "a1", "app": .string(app),
                "attributesType": "CoffeeDeliveryAttributes", "attributes": ["orderNumber": "A-1"],
                "content": ["state": ["status": "received", "eta": 5]], "pushType": "token",
            ],
        ]
    }

    static func created(_ reply: TestHTTPResponse) throws -> (id: String, epoch: String) {
        #expect(reply.status == 201, "\(reply.text)")
        let body = try reply.json()
        return (try #require(body["id"]?.stringValue), try #require(body["epoch"]?.stringValue))
    }

    /// A server configuration with its store in `dir` and room for `maxSimulations` worlds.
    static func stored(in dir: TemporaryDirectory, maxSimulations: Int) -> IsletConfiguration {
        var configuration = IsletConfiguration.testing()
        configuration.store.path = dir.file("islet.sqlite")
        configuration.maxSimulations = maxSimulations
        return configuration
    }

    /// The `value` of `GET …/state`, canonically encoded, with its revision.
    static func document(_ port: Int, _ simulation: String?, path: String = "") throws -> (bytes: [UInt8], rev: UInt64) {
        let reply = try TestHTTP.state(port: port, path: path, simulation: simulation)
        #expect(reply.status == 200, "\(reply.text)")
        let body = try reply.json()
        return (try #require(body["value"]).encoded, UInt64(try #require(body["rev"]?.numberValue)))
    }

    @Test("two harnesses in parallel, each in its own simulation with its own virtual clock, never see each other's revisions")
    func parallelHarnesses() async throws {
        try await withRunningServer { server in
            let port = server.port
            let starts = ["2026-01-01T08:00:00Z", "2031-06-01T12:30:00Z"]
            let outcomes = Mutex<[Int: Result<[JSONValue], TestClientError>]>([:])
            DispatchQueue.concurrentPerform(iterations: 2) { index in
                do {
                    let id = "harness-\(index)"
                    let made = try Self.created(
                        try TestHTTP.createSimulation(
                            port: port,
                            ["id": .string(id), "clock": ["mode": "virtual", "now": .string(starts[index])]]))
                    let client = try TestWebSocketClient.connect(port: port)
                    _ = try client.readJSON()
                    try client.subscribe("all", path: "", simulation: id)
                    var received: [JSONValue] = [try client.read(until: "snapshot")]
                    try client.commit("w", Self.world(now: starts[index], app: "app\(index)"), simulation: id) {
                        received.append($0)
                    }
                    for n in 0..<20 {
                        try client.commit("u\(n)", [Fixture.update("a1", status: "s\(n)")], simulation: id) {
                            received.append($0)
                        }
                    }
                    while received.filter({ $0["type"] == "patch" }).count < 21 { received.append(try client.readJSON()) }
                    #expect(made.id == id)
                    outcomes.withLock { $0[index] = .success(received) }
                } catch {
                    outcomes.withLock { $0[index] = .failure(TestClientError("harness \(index): \(error)")) }
                }
            }
            for index in 0..<2 {
                let id = "harness-\(index)"
                let received = try #require(outcomes.withLock { $0[index] }).get()
                let snapshot = received[0]
                #expect(snapshot["simulation"] == .string(id))
                #expect(snapshot["rev"] == 0)
                let patches = received.filter { $0["type"] == "patch" }
                #expect(patches.allSatisfy { $0["simulation"] == .string(id) }, "only its own simulation's patches")
                #expect(patches.map { $0["rev"] } == (1...21).map { .number(Double($0)) }, "every revision, in order")
                let clock = try TestHTTP.state(port: port, path: "/clock/now", simulation: id).json()["value"]
                #expect(clock == .string(starts[index]), "its own clock")
                let apps = try TestHTTP.state(port: port, path: "/apps", simulation: id).json()["value"]
                #expect(apps?.objectValue?.keys.sorted() == ["app\(index)"], "none of the other world's apps")
            }
            #expect(try Self.document(port, nil).rev == 0, "default untouched")
        }
    }

    @Test("a subscription resumed in a simulation: its subscribed reply and the missed patches name that simulation")
    func resumeInSimulation() async throws {
        try await withRunningServer { server in
            let port = server.port
            let (id, epoch) = try Self.created(try TestHTTP.createSimulation(port: port, ["id": "harness"]))
            let client = try TestWebSocketClient.connect(port: port)
            _ = try client.readJSON()
            try client.commit("w", Self.world(now: "2026-11-22T08:00:00Z", app: "app"), simulation: id) { _ in }
            for n in 0..<2 { _ = try TestHTTP.commands(port: port, [Fixture.update("a1", status: "s\(n)")], simulation: id) }
            try client.subscribe("r", path: "", since: (epoch, 1), simulation: id)
            let subscribed = try client.read(until: "subscribed")
            #expect(subscribed == ["type": "subscribed", "sub": "r", "resumed": true, "rev": 1, "simulation": "harness"])
            for rev in 2...3 {
                let patch = try client.readJSON()
                #expect(patch["type"] == "patch" && patch["rev"] == .number(Double(rev)) && patch["simulation"] == "harness", "\(patch)")
            }
        }
    }

    @Test("a fork at rev equals the source at rev byte for byte, at revision 0 with a new epoch; the same commands keep them equal")
    func forkEquality() async throws {
        try await withRunningServer { server in
            let port = server.port
            _ = try Self.created(try TestHTTP.createSimulation(port: port, ["id": "src"]))
            _ = try TestHTTP.commands(port: port, Self.world(now: "2027-03-01T09:00:00Z"), simulation: "src")
            let atOne = try Self.document(port, "src")
            #expect(atOne.rev == 1)
            for n in 0..<3 {
                _ = try TestHTTP.commands(port: port, [Fixture.update("a1", status: "s\(n)")], simulation: "src")
            }
            let latest = try Self.document(port, "src")
            let source = try TestHTTP.request(port: port, "/v1/simulations/src").json()

            let old = try Self.created(
                try TestHTTP.createSimulation(port: port, ["id": "old", "from": ["simulation": "src", "rev": 1]]))
            let now = try Self.created(try TestHTTP.createSimulation(port: port, ["id": "now", "from": ["simulation": "src"]]))
            #expect(old.epoch != source["epoch"]?.stringValue && now.epoch != old.epoch, "new epochs")
            let oldDocument = try Self.document(port, "old")
            let nowDocument = try Self.document(port, "now")
            #expect(oldDocument.rev == 0 && nowDocument.rev == 0)
            #expect(oldDocument.bytes == atOne.bytes, "the fork of rev 1 is the source at rev 1")
            #expect(nowDocument.bytes == latest.bytes, "the fork of the latest rev is the source now")
            #expect(try Self.document(port, "src").bytes == latest.bytes, "the source is untouched")

            // The source's next commands, on both: equal documents at every step.
            for n in 0..<4 {
                let batch: [JSONValue] = [
                    Fixture.update("a1", status: "next\(n)"), ["type": "clock.advance", "seconds": .number(Double(600 * n))],
                ]
                #expect(try TestHTTP.commands(port: port, batch, simulation: "src").rev == UInt64(5 + n))
                #expect(try TestHTTP.commands(port: port, batch, simulation: "now").rev == UInt64(1 + n))
                #expect(try Self.document(port, "now").bytes == Self.document(port, "src").bytes, "step \(n)")
            }
            // Tokens generated after the fork differ, so APNs ingress finds one world per token.
            let request: JSONValue = [
                "type": "activity.request", "id": "a2", "app": "coffee", "attributesType": "CoffeeDeliveryAttributes",
                "attributes": ["orderNumber": "B-2"], "content": ["state": ["status": "received", "eta": 5]],
                "pushType": "token",
            ]
            let sourceToken = try TestHTTP.commands(port: port, [request], simulation: "src").json()[pointer: "/results/0/pushToken"]
            let forkToken = try TestHTTP.commands(port: port, [request], simulation: "now").json()[pointer: "/results/0/pushToken"]
            #expect(sourceToken != nil && forkToken != nil && sourceToken != forkToken)
        }
    }

    @Test("a fork may start its clock before or after the source's; a later start is the source run forward (LA-7: its activity ended 8 hours after it started, and is gone)")
    func forkClock() async throws {
        try await withRunningServer { server in
            let port = server.port
            _ = try Self.created(try TestHTTP.createSimulation(port: port, ["id": "src"]))
            _ = try TestHTTP.commands(port: port, Self.world(now: "2027-03-01T09:00:00Z"), simulation: "src")
            for now in ["2025-01-01T00:00:00Z", "2027-03-01T18:00:00Z", "2028-01-01T00:00:00Z"] {
                let id = "f\(now.prefix(4))-\(now.dropFirst(11).prefix(2))"
                _ = try Self.created(
                    try TestHTTP.createSimulation(
                        port: port,
                        ["id": .string(id), "from": ["simulation": "src"], "clock": ["mode": "virtual", "now": .string(now)]]))
                #expect(try TestHTTP.state(port: port, path: "/clock/now", simulation: id).json()["value"] == .string(now))
                let activity = try TestHTTP.state(port: port, path: "/activities/a1", simulation: id)
                switch now.prefix(4) {
                case "2025": #expect(try activity.json()["value"]?["activityState"] == "active", "what happened stays")
                case "2027": #expect(try activity.json()["value"]?["endedAt"] == "2027-03-01T17:00:00Z", "ended at start + 8 h")
                default: #expect(activity.status == 404, "ended, dismissed and gone long before")
                }
            }
        }
    }

    @Test("deleting a simulation under live subscribers: resync (deleted), 1000 for streams with nothing else, others keep going")
    func deleteUnderSubscribers() async throws {
        try await withRunningServer { server in
            let port = server.port
            _ = try Self.created(try TestHTTP.createSimulation(port: port, ["id": "doomed"]))
            _ = try TestHTTP.commands(port: port, Self.world(now: "2027-03-01T09:00:00Z"), simulation: "doomed")
            let only = try TestWebSocketClient.connect(port: port)
            _ = try only.readJSON()
            try only.subscribe("d", path: "", simulation: "doomed")
            _ = try only.read(until: "snapshot")
            let both = try TestWebSocketClient.connect(port: port)
            _ = try both.readJSON()
            try both.subscribe("d", path: "", simulation: "doomed")
            _ = try both.read(until: "snapshot")
            try both.subscribe("main", path: "/clock")
            _ = try both.read(until: "snapshot")

            let reply = try TestHTTP.request(port: port, "DELETE", "/v1/simulations/doomed")
            #expect(reply.status == 200, "\(reply.text)")
            let resync = try only.read(until: "resync")
            #expect(resync["reason"] == "deleted" && resync["simulation"] == "doomed")
            #expect(try only.readClose() == 1000)
            #expect(try both.read(until: "resync")["simulation"] == "doomed")
            try both.send(json: ["op": "ping", "id": 7])
            #expect(try both.read(until: "pong")["id"] == 7, "a stream with subscriptions elsewhere stays open")
            #expect(try TestHTTP.state(port: port, simulation: "doomed").status == 404)
            #expect(try TestHTTP.request(port: port, "/v1/simulations/doomed").status == 404)
            try both.subscribe("again", path: "", simulation: "doomed")
            let refused = try both.read(until: "error")
            #expect(refused[pointer: "/error/code"] == "not_found")
            #expect(refused[pointer: "/error/field"] == "/simulation")
        }
    }

    @Test("requests that race a fork waiting for its source: a delete of the source, more forks than places; each is answered")
    func racingForks() async throws {
        try await withTemporaryDirectory { dir in
            let configuration = Self.stored(in: dir, maxSimulations: 3)
            try await withRunningServer(configuration) { server in
                let port = server.port
                _ = try Self.created(try TestHTTP.createSimulation(port: port, ["id": "src"]))
                let world = Self.world(now: "2027-05-01T10:00:00Z")
                // A command in flight makes the forks wait for the source's pipeline; the delete
                // and the forks then meet in the same turns.
                let statuses = Mutex<[String: Int]>([:])
                let names = ["command", "f1", "f2", "delete"]
                DispatchQueue.concurrentPerform(iterations: names.count) { index in
                    let reply: TestHTTPResponse? =
                        switch names[index] {
                        case "command": try? TestHTTP.commands(port: port, world, simulation: "src")
                        case "delete": try? TestHTTP.request(port: port, "DELETE", "/v1/simulations/src")
                        default:
                            try? TestHTTP.createSimulation(
                                port: port, ["id": .string(names[index]), "from": ["simulation": "src"]])
                        }
                    statuses.withLock { $0[names[index]] = reply?.status ?? -1 }
                }
                let answered = statuses.withLock { $0 }
                #expect(answered.values.allSatisfy { $0 > 0 }, "every request answered: \(answered)")
                let listing = try TestHTTP.request(port: port, "/v1/simulations").json()
                let listed = listing["simulations"]?.arrayValue ?? []
                #expect(listed.count <= 3, "\(listed)")
                #expect([answered["f1"], answered["f2"]].filter { $0 == 201 }.count <= 1, "one place left: \(answered)")
            }
            // Whatever the order, the store restores.
            try await withRunningServer(configuration) { server in
                let health = try TestHTTP.request(port: server.port, "/healthz")
                #expect(health.status == 200)
            }
        }
    }

    @Test("deleting a fork and its source at once: both answered, both gone; the source's delete waits for the fork's genesis")
    func deleteForkAndSource() async throws {
        try await withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.store.path = dir.file("islet.sqlite")
            try await withRunningServer(configuration) { server in
                let port = server.port
                for round in 0..<3 {
                    let (source, fork) = ("src\(round)", "frk\(round)")
                    _ = try Self.created(try TestHTTP.createSimulation(port: port, ["id": .string(source), "demo": true]))
                    _ = try Self.created(
                        try TestHTTP.createSimulation(port: port, ["id": .string(fork), "from": ["simulation": .string(source)]]))
                    let statuses = Mutex<[Int]>([])
                    DispatchQueue.concurrentPerform(iterations: 2) { index in
                        let status = (try? TestHTTP.request(port: port, "DELETE", "/v1/simulations/\(index == 0 ? source : fork)").status) ?? -1
                        statuses.withLock { $0.append(status) }
                    }
                    #expect(statuses.withLock { $0 } == [200, 200], "round \(round)")
                    #expect(try TestHTTP.request(port: port, "/v1/simulations/\(source)").status == 404)
                    #expect(try TestHTTP.request(port: port, "/v1/simulations/\(fork)").status == 404)
                }
            }
        }
    }

    @Test("bad input: each refusal is a structured error and creates nothing")
    func badInput() async throws {
        try await withTemporaryDirectory { dir in
            let configuration = Self.stored(in: dir, maxSimulations: 3)
            try await withRunningServer(configuration) { server in
                let port = server.port
                _ = try Self.created(try TestHTTP.createSimulation(port: port, ["id": "one"]))
                let refusals: [(body: String, status: Int, code: String, field: String?)] = [
                    (#"{"id":"one"}"#, 409, "conflict", "/id"),
                    (#"{"id":"default"}"#, 409, "conflict", "/id"),
                    (#"{"id":"Upper"}"#, 400, "invalid_argument", "/id"),
                    (#"{"id":""}"#, 400, "invalid_argument", "/id"),
                    (#"{"id":"\#(String(repeating: "a", count: 65))"}"#, 400, "invalid_argument", "/id"),
                    (#"{"id":"../x"}"#, 400, "invalid_argument", "/id"),
                    (#"{"id":7}"#, 400, "invalid_argument", "/id"),
                    (#"{"nope":1}"#, 400, "invalid_argument", "/nope"),
                    (#"{"clock":{"mode":"virtual","rate":-1}}"#, 400, "invalid_argument", "/clock/rate"),
                    (#"{"clock":{"mode":"virtual","now":"yesterday"}}"#, 400, "invalid_argument", "/clock/now"),
                    (#"{"clock":{"mode":"wall","now":"2026-01-01T00:00:00Z"}}"#, 400, "invalid_argument", "/clock"),
                    (#"{"demo":"yes"}"#, 400, "invalid_argument", "/demo"),
                    (#"{"demo":true,"from":{"simulation":"one"}}"#, 400, "invalid_argument", "/demo"),
                    (#"{"from":{"simulation":"ghost"}}"#, 404, "not_found", nil),
                    (#"{"from":{"simulation":"one","rev":5}}"#, 409, "conflict", "/from/rev"),
                    (#"{"from":{"simulation":"one","rev":-1}}"#, 400, "invalid_argument", "/from/rev"),
                    (#"{"from":{"simulation":"one","rev":1.5}}"#, 400, "invalid_argument", "/from/rev"),
                    (#"{"from":{"simulation":"one","rev":18446744073709551615}}"#, 409, "conflict", "/from/rev"),
                    (#"{"from":{"simulation":"one","rev":18446744073709551616}}"#, 400, "invalid_argument", "/from/rev"),
                    (#"[1]"#, 400, "invalid_argument", ""),
                    (#"{"id":"#, 400, "invalid_json", nil),
                ]
                for refusal in refusals {
                    let reply = try TestHTTP.postJSON(port: port, "/v1/simulations", refusal.body)
                    #expect(reply.status == refusal.status, "\(refusal.body): \(reply.text)")
                    #expect(reply.errorCode == refusal.code, "\(refusal.body)")
                    if let field = refusal.field {
                        #expect(try reply.json()[pointer: "/error/field"] == .string(field), "\(refusal.body)")
                    }
                }
                let outside = try TestHTTP.postJSON(port: port, "/v1/simulations", #"{"from":{"simulation":"one","rev":5}}"#)
                #expect(outside.text.contains("the earliest available is 0"), "\(outside.text)")
                _ = try Self.created(try TestHTTP.createSimulation(port: port, ["id": "two"]))
                let full = try TestHTTP.createSimulation(port: port, ["id": "three"])
                #expect(full.status == 422 && full.errorCode == "limit_exceeded", "\(full.text)")
                #expect(try TestHTTP.request(port: port, "DELETE", "/v1/simulations/default").status == 409)
                #expect(try TestHTTP.request(port: port, "DELETE", "/v1/simulations/ghost").status == 404)
                #expect(try TestHTTP.commands(port: port, [Fixture.device], simulation: "ghost").errorCode == "not_found")
                let listed = try TestHTTP.request(port: port, "/v1/simulations").json()["simulations"]?.arrayValue
                #expect(listed?.compactMap { $0["id"]?.stringValue } == ["default", "one", "two"])
                #expect(FileManager.default.fileExists(atPath: dir.file("islet.simulations.sqlite")), "one store for all worlds")
            }
        }
    }

    @Test("a restart restores every simulation: the same epochs, revisions and documents")
    func restartRestoresAll() async throws {
        try await withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.store.path = dir.file("islet.sqlite")
            let count = 50
            let before: [String: (epoch: String, document: [UInt8], rev: UInt64)] = try await withRunningServer(
                configuration
            ) { server in
                var images: [String: (String, [UInt8], UInt64)] = [:]
                for n in 0..<count {
                    let id = "world-\(n)"
                    let made = try Self.created(
                        try TestHTTP.createSimulation(
                            port: server.port, n.isMultiple(of: 7) ? ["id": .string(id), "demo": true] : ["id": .string(id)]))
                    if !n.isMultiple(of: 7) {
                        _ = try TestHTTP.commands(
                            port: server.port, Self.world(now: "2026-0\(1 + n % 9)-01T08:00:00Z"), simulation: id)
                    }
                    let document = try Self.document(server.port, id)
                    images[id] = (made.epoch, document.bytes, document.rev)
                }
                _ = try TestHTTP.request(port: server.port, "DELETE", "/v1/simulations/world-3")
                images["world-3"] = nil
                return images.mapValues { (epoch: $0.0, document: $0.1, rev: $0.2) }
            }
            try await withRunningServer(configuration) { server in
                let listed = try TestHTTP.request(port: server.port, "/v1/simulations").json()["simulations"]?.arrayValue ?? []
                #expect(listed.count == count, "default and the \(count - 1) left")
                for (id, image) in before {
                    let document = try Self.document(server.port, id)
                    #expect(document.bytes == image.document, "\(id)")
                    #expect(document.rev == image.rev, "\(id)")
                    #expect(try TestHTTP.request(port: server.port, "/v1/simulations/\(id)").json()["epoch"] == .string(image.epoch))
                }
                #expect(try TestHTTP.request(port: server.port, "/v1/simulations/world-3").status == 404)
            }
        }
    }

    @Test("after a restart the simulations are in creation order: a push to a token a fork copied still goes to the source")
    func creationOrderAcrossRestarts() async throws {
        try await withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.store.path = dir.file("islet.sqlite")
            let headers = [("apns-push-type", "liveactivity"), ("apns-topic", "coffee.push-type.liveactivity")]
            func push(_ port: Int, _ token: String, _ status: String, at timestamp: Int) throws {
                let body = #"{"aps":{"timestamp":\#(timestamp),"event":"update","content-state":{"status":"\#(status)"}}}"#
                let reply = try TestHTTP.request(port: port, "POST", "/3/device/\(token)", headers: headers, body: Array(body.utf8))
                #expect(reply.status == 200, "\(reply.text)")
            }
            func statuses(_ port: Int) throws -> [String?] {
                try ["zz", "aa"].map {
                    try TestHTTP.state(port: port, path: "/activities/a1/content/state/status", simulation: $0).json()["value"]?.stringValue
                }
            }
            // The fork's id sorts before its source's.
            let token = try await withRunningServer(configuration) { server in
                _ = try Self.created(try TestHTTP.createSimulation(port: server.port, ["id": "zz"]))
                let reply = try TestHTTP.commands(port: server.port, Self.world(now: "2026-11-22T08:00:00Z"), simulation: "zz")
                let token = try #require(try reply.json()[pointer: "/results/3/pushToken"]?.stringValue)
                _ = try Self.created(try TestHTTP.postJSON(port: server.port, "/v1/simulations", #"{"id":"aa","from":{"simulation":"zz"}}"#))
                try push(server.port, token, "brewing", at: 1_795_766_500)
                #expect(try statuses(server.port) == ["brewing", "received"])
                return token
            }
            try await withRunningServer(configuration) { server in
                try push(server.port, token, "ready", at: 1_795_766_600)
                #expect(try statuses(server.port) == ["ready", "received"])
            }
        }
    }

    @Test("APNs ingress finds the simulation that holds a token; a prefixed ingress pushes into one simulation only")
    func apnsAcrossSimulations() async throws {
        try await withRunningServer { server in
            let port = server.port
            var tokens: [String: String] = [:]
            for id in ["left", "right"] {
                _ = try Self.created(try TestHTTP.createSimulation(port: port, ["id": .string(id)]))
                let reply = try TestHTTP.commands(port: port, Self.world(now: "2026-11-22T08:00:00Z"), simulation: id)
                tokens[id] = try #require(try reply.json()[pointer: "/results/3/pushToken"]?.stringValue)
            }
            #expect(tokens["left"] != tokens["right"], "the same commands in two worlds give different tokens")
            let headers = [("apns-push-type", "liveactivity"), ("apns-topic", "coffee.push-type.liveactivity")]
            let push = #"{"aps":{"timestamp":1795766500,"event":"update","content-state":{"status":"brewing"}}}"#
            let reply = try TestHTTP.request(
                port: port, "POST", "/3/device/\(tokens["right"]!)", headers: headers, body: Array(push.utf8))
            #expect(reply.status == 200, "\(reply.text)")
            let status = "/activities/a1/content/state/status"
            #expect(try TestHTTP.state(port: port, path: status, simulation: "right").json()["value"] == "brewing")
            #expect(try TestHTTP.state(port: port, path: status, simulation: "left").json()["value"] == "received")
            let wrongWorld = try TestHTTP.request(
                port: port, "POST", "/v1/simulations/left/3/device/\(tokens["right"]!)", headers: headers,
                body: Array(push.utf8))
            #expect(wrongWorld.status == 400, "the token is not in that world")
            #expect(try wrongWorld.json()["reason"] == "BadDeviceToken")
        }
    }
}

/// Per-simulation tokens on a server that requires tokens.
@Suite("Simulations: per-simulation tokens")
struct LiveSimulationTokenTests {
    static let admin = "server-admin-token-0123456789"

    static func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }

    @Test("a simulation's own tokens reach that simulation only: routes, streams, APNs ingress; they survive a restart")
    func scopedTokens() async throws {
        try await withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.adminToken = Self.admin
            configuration.store.path = dir.file("islet.sqlite")
            let tokens: (admin: String, viewer: String, pushToken: String) = try await withRunningServer(configuration) {
                server in
                let port = server.port
                let reply = try TestHTTP.request(
                    port: port, "POST", "/v1/simulations", headers: Self.bearer(Self.admin) + [("Content-Type", "application/json")],
                    body: Array(#"{"id":"mine","tokens":true}"#.utf8))
                #expect(reply.status == 201, "\(reply.text)")
                let body = try reply.json()
                let admin = try #require(body[pointer: "/tokens/admin"]?.stringValue)
                let viewer = try #require(body[pointer: "/tokens/viewer"]?.stringValue)
                _ = try TestHTTP.request(
                    port: port, "POST", "/v1/simulations", headers: Self.bearer(Self.admin) + [("Content-Type", "application/json")],
                    body: Array(#"{"id":"theirs"}"#.utf8))
                let world = LiveSimulationsTests.world(now: "2027-01-01T08:00:00Z")
                let mine = try TestHTTP.commands(port: port, world, simulation: "mine", headers: Self.bearer(admin))
                #expect(mine.status == 200, "\(mine.text)")
                let pushToken = try #require(try mine.json()[pointer: "/results/3/pushToken"]?.stringValue)
                for simulation in [nil, "theirs"] as [String?] {
                    let elsewhere = try TestHTTP.commands(port: port, world, simulation: simulation, headers: Self.bearer(admin))
                    #expect(elsewhere.status == 403 && elsewhere.errorCode == "forbidden", "\(elsewhere.text)")
                }
                #expect(try TestHTTP.request(port: port, "/v1/simulations", headers: Self.bearer(admin)).status == 403)
                #expect(try TestHTTP.request(port: port, "/v1/simulations/mine", headers: Self.bearer(admin)).status == 200)
                #expect(try TestHTTP.state(port: port, simulation: "mine", headers: Self.bearer(viewer)).status == 200)
                let viewerWrite = try TestHTTP.commands(port: port, [Fixture.device], simulation: "mine", headers: Self.bearer(viewer))
                #expect(viewerWrite.status == 403)

                let stream = try TestWebSocketClient.connect(port: port, path: "/v1/stream?token=\(viewer)")
                _ = try stream.readJSON()
                try stream.subscribe("other", path: "", simulation: "theirs")
                #expect(try stream.read(until: "error")[pointer: "/error/code"] == "forbidden")
                try stream.subscribe("default", path: "")
                #expect(try stream.read(until: "error")[pointer: "/error/code"] == "forbidden")
                try stream.subscribe("own", path: "/apps", simulation: "mine")
                #expect(try stream.read(until: "snapshot")["simulation"] == "mine")

                let headers = [("apns-push-type", "liveactivity"), ("apns-topic", "coffee.push-type.liveactivity")]
                let push = Array(#"{"aps":{"timestamp":1795766500,"event":"update","content-state":{"status":"brewing"}}}"#.utf8)
                let intoOther = try TestHTTP.request(
                    port: port, "POST", "/v1/simulations/theirs/3/device/\(pushToken)", headers: headers + Self.bearer(admin),
                    body: push)
                #expect(intoOther.status == 403)
                let pushed = try TestHTTP.request(
                    port: port, "POST", "/3/device/\(pushToken)", headers: headers + Self.bearer(admin), body: push)
                #expect(pushed.status == 200, "\(pushed.text)")
                return (admin, viewer, pushToken)
            }
            try await withRunningServer(configuration) { server in
                let state = try TestHTTP.state(
                    port: server.port, path: "/activities/a1/content/state/status", simulation: "mine",
                    headers: Self.bearer(tokens.viewer))
                #expect(state.status == 200)
                #expect(try state.json()["value"] == "brewing")
                #expect(try TestHTTP.state(port: server.port, headers: Self.bearer(tokens.admin)).status == 403)
                _ = try TestHTTP.request(port: server.port, "DELETE", "/v1/simulations/mine", headers: Self.bearer(tokens.admin))
                #expect(try TestHTTP.state(port: server.port, simulation: "mine", headers: Self.bearer(tokens.admin)).status == 401)
            }
            // A stream opened with a simulation's own token closes when that simulation goes,
            // subscribed or not: a world re-created under the same name does not accept it.
            try await withRunningServer(configuration) { server in
                let port = server.port
                let reply = try TestHTTP.request(
                    port: port, "POST", "/v1/simulations", headers: Self.bearer(Self.admin) + [("Content-Type", "application/json")],
                    body: Array(#"{"id":"brief","tokens":true}"#.utf8))
                let admin = try #require(try reply.json()[pointer: "/tokens/admin"]?.stringValue)
                let stream = try TestWebSocketClient.connect(port: port, path: "/v1/stream?token=\(admin)")
                _ = try stream.readJSON()
                let deleted = try TestHTTP.request(port: port, "DELETE", "/v1/simulations/brief", headers: Self.bearer(Self.admin))
                #expect(deleted.status == 200)
                #expect(try stream.readClose() == 1000)
            }
        }
    }
}

/// A fork is acknowledged with a reference to its source; its genesis snapshot follows.
@Suite("Simulations: forks before their genesis snapshot is written")
struct LiveForkReferenceTests {
    @Test("a restart rebuilds a fork whose log holds only the reference to its source, then its records")
    func forkFromReference() async throws {
        try await withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.store.path = dir.file("islet.sqlite")
            let source: [UInt8] = try await withRunningServer(configuration) { server in
                _ = try TestHTTP.commands(port: server.port, LiveSimulationsTests.world(now: "2027-05-01T10:00:00Z"))
                let atOne = try LiveSimulationsTests.document(server.port, nil)
                _ = try TestHTTP.commands(port: server.port, [Fixture.update("a1", status: "later")])
                return atOne.bytes
            }
            // What a server killed right after acknowledging `POST /v1/simulations {"from": …}`
            // leaves: the fork's row and reference, one record, and no genesis snapshot.
            let update = JSONValue.array([Fixture.update("a1", status: "forked")])
            do {
                let store = try WorldStore(path: dir.file("islet.simulations.sqlite"), logger: makeTestLogger())
                let log = try store.create(
                    "pending", instant: TestServer.start.millisecondsSinceEpoch, genesis: nil,
                    values: ["fork.source": "default", "fork.rev": "1", "fork.salt": "77"])
                try log.append([
                    LogRecord(sequence: 1, instant: TestServer.start.millisecondsSinceEpoch, kind: .batch, payload: update.encoded)
                ])
            }
            var documents: [[UInt8]] = []
            for _ in 0..<2 {
                try await withRunningServer(configuration) { server in
                    let fork = try LiveSimulationsTests.document(server.port, "pending")
                    #expect(fork.rev == 1)
                    documents.append(fork.bytes)
                    let status = try TestHTTP.state(
                        port: server.port, path: "/activities/a1/content/state/status", simulation: "pending")
                    #expect(try status.json()["value"] == "forked")
                    let clock = try TestHTTP.state(port: server.port, path: "/clock", simulation: "pending").json()["value"]
                    #expect(clock == (try JSONParser().parse(source))["clock"], "the source's clock at revision 1")
                }
            }
            #expect(documents[0] == documents[1], "rebuilt from the reference, then from the genesis it wrote")
        }
    }

    @Test("deleting a source right after forking it waits for the fork's genesis; the fork survives a restart")
    func deleteSourceOfFreshFork() async throws {
        try await withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.store.path = dir.file("islet.sqlite")
            let before: [UInt8] = try await withRunningServer(configuration) { server in
                _ = try LiveSimulationsTests.created(try TestHTTP.createSimulation(port: server.port, ["id": "src"]))
                _ = try TestHTTP.commands(
                    port: server.port, LiveSimulationsTests.world(now: "2027-05-01T10:00:00Z"), simulation: "src")
                _ = try LiveSimulationsTests.created(
                    try TestHTTP.createSimulation(port: server.port, ["id": "copy", "from": ["simulation": "src"]]))
                #expect(try TestHTTP.request(port: server.port, "DELETE", "/v1/simulations/src").status == 200)
                return try LiveSimulationsTests.document(server.port, "copy").bytes
            }
            try await withRunningServer(configuration) { server in
                let copy = try LiveSimulationsTests.document(server.port, "copy")
                #expect(copy.bytes == before)
                let source = try TestHTTP.request(port: server.port, "/v1/simulations/src")
                #expect(source.status == 404)
            }
        }
    }
}
