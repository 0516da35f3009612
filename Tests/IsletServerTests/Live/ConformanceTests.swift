import IsletCore
import IsletServer
import IsletTestSupport
import Testing

/// Many clients with different (and overlapping) subscriptions, random command batches, and at
/// random points every client's snapshot+patches state compared with `GET /v1/state?path=` at
/// the same revision.
@Suite("Stream conformance")
struct ConformanceTests {
    static let paths = [
        "", "/activities", "/activities/x1", "/activities/x2/render", "/activities/x3/content/state",
        "/activities/x4/alert", "/activities/x5/render/expanded", "/devices/d1/scene", "/devices/d2",
        "/devices/d3/scene/island/compact", "/apps/coffee", "/apps/ride/deliveries", "/clock", "/config",
        "/devices/d1/scene/lockScreen/activities", "/activities/x6/content", "/nothing/here",
    ]

    /// One client: its socket, its mirror, and the revision it was last synchronised at.
    final class Client {
        var socket: TestWebSocketClient
        var mirror = StreamMirror()
        var subscriptions: [(id: String, path: String)] = []
        var syncedRev: UInt64 = 0
        var pings = 0
        var extras = 0

        init(socket: TestWebSocketClient) { self.socket = socket }

        func subscribe(_ id: String, _ path: String, since: (String, UInt64)? = nil) throws {
            self.mirror.expect(id, path: try JSONPointer(parsing: path))
            self.subscriptions.append((id, path))
            try self.socket.subscribe(id, path: path, since: since)
        }

        /// Reads up to a pong sent now: every patch queued before it has been applied.
        func sync() throws {
            self.pings += 1
            try self.socket.send(json: ["op": "ping", "id": .number(Double(self.pings))])
            try self.socket.read(until: "pong", id: .number(Double(self.pings))) { try self.mirror.apply($0) }
        }
    }

    @Test("snapshot + patches equal GET /v1/state at every checkpoint", arguments: [1, 2, 3] as [UInt64])
    func conformance(seed: UInt64) async throws {
        try await withRunningServer { server in
            var random = SplitMix64(seed: seed)
            var commands = RandomCommands(seed: seed &* 7919)
            let port = server.port
            let setUp = try TestHTTP.commands(port: port, [Fixture.pauseClock] + commands.setUp())
            #expect(setUp.status == 200, "\(setUp.text)")
            var epoch = ""
            var clients: [Client] = []
            for index in 0..<10 {
                let client = Client(socket: try TestWebSocketClient.connect(port: port))
                epoch = try client.socket.readJSON()["epoch"]?.stringValue ?? ""
                for n in 0..<Int.random(in: 1...3, using: &random) {
                    try client.subscribe("c\(index)s\(n)", Self.paths.randomElement(using: &random)!)
                }
                clients.append(client)
            }
            var rev = setUp.rev ?? 0
            for step in 0..<120 {
                let reply = try TestHTTP.commands(port: port, commands.batch(now: Simulation.start))
                if reply.status == 200 { rev = reply.rev ?? rev }
                if Int.random(in: 0..<10, using: &random) == 0 || step == 119 {
                    try self.checkpoint(clients, port: port, rev: rev)
                }
                if Int.random(in: 0..<25, using: &random) == 0 {
                    let client = clients.randomElement(using: &random)!
                    try self.churn(client, port: port, epoch: epoch, rev: rev, random: &random) {
                        // Revisions the client misses while disconnected.
                        for _ in 0..<3 {
                            let reply = try TestHTTP.commands(port: port, commands.batch(now: Simulation.start))
                            if reply.status == 200 { rev = reply.rev ?? rev }
                        }
                    }
                }
            }
            for client in clients {
                #expect(client.mirror.patchRevs == client.mirror.patchRevs.sorted())
                #expect(Set(client.mirror.patchRevs).count == client.mirror.patchRevs.count, "one patch per revision")
            }
        }
    }

    /// Every client's every subscription equals the document at `rev`.
    private func checkpoint(_ clients: [Client], port: Int, rev: UInt64) throws {
        for client in clients {
            try client.sync()
            for (id, path) in client.subscriptions {
                let reply = try TestHTTP.state(port: port, path: path)
                #expect(reply.rev == rev || reply.status == 404)
                // A snapshot says null both for an absent value and for a null one.
                let expected = reply.status == 404 ? JSONValue.null : try reply.json()["value"] ?? .null
                #expect(client.mirror.value(of: id) ?? .null == expected, "subscription \(id) at \(path), rev \(rev)")
            }
            client.syncedRev = rev
        }
    }

    /// A client changes its subscriptions: adds one, drops one, or reconnects and resumes
    /// every subscription from the revision it was last checked at.
    private func churn(
        _ client: Client, port: Int, epoch: String, rev: UInt64, random: inout SplitMix64,
        whileAway: () throws -> Void
    ) throws {
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            client.extras += 1
            try client.subscribe("extra\(client.extras)", Self.paths.randomElement(using: &random)!)
        case 1 where client.subscriptions.count > 1:
            let (id, _) = client.subscriptions.removeFirst()
            try client.socket.send(json: ["op": "unsubscribe", "id": .string(id)])
            try client.socket.read(until: "unsubscribed", id: .string(id)) { try client.mirror.apply($0) }
        default:
            try client.sync()
            let previous = client.subscriptions
            let values = client.mirror
            client.socket.drop()
            try whileAway()
            client.socket = try TestWebSocketClient.connect(port: port)
            _ = try client.socket.readJSON()
            client.subscriptions = []
            client.mirror = StreamMirror()
            for (id, path) in previous {
                // A resumed subscription continues from the value it had at `rev`.
                client.mirror.resume(id, path: try JSONPointer(parsing: path), value: values.value(of: id))
                client.subscriptions.append((id, path))
                try client.socket.subscribe(id, path: path, since: (epoch, rev))
            }
        }
    }
}

enum Simulation {
    static let start = try! Instant(rfc3339: "2026-11-22T08:00:00Z")
}
