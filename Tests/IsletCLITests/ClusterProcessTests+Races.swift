import Foundation
import IsletCore
import IsletTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The cluster at its edges: refused batches, races between nodes, a graceful stop, Redis
/// losing its data.
extension ClusterProcessTests {
    @Test("an empty batch is refused by a cluster node as by a single one (400 at /commands), and the node goes on answering reads of that world")
    func emptyBatch() throws {
        try withCluster(["a", "b"]) { _, nodes, _ in
            let body = Array(#"{"commands":[]}"#.utf8)
            let refused = try TestHTTP.request(
                port: nodes[1].port, "POST", "/v1/commands", headers: [("Content-Type", "application/json")], body: body)
            #expect(refused.status == 400)
            #expect(try refused.json()["error"]?["field"] == "/commands")
            #expect(try TestHTTP.state(port: nodes[1].port, path: "/clock").status == 200)
            #expect(try TestHTTP.commands(port: nodes[1].port, [["type": "device.upsert", "id": "d1"]]).status == 200)
        }
    }

    @Test("a node stopped with SIGTERM gives up its clock leases, so another node takes each world's clock at once, not when the lease expires")
    func leaseGivenUp() throws {
        try withCluster(["a", "b"], ["--cluster-lease-ms", "20000"]) { _, nodes, _ in
            var holder: ClusterNodeProcess?
            try waitUntil(timeout: .seconds(10), "a node holds default's clock") {
                holder = try nodes.first { try $0.cluster()["clockLeases"]?.arrayValue?.contains("default") == true }
                return holder != nil
            }
            let stopped = try #require(holder)
            let other = try #require(nodes.first { $0.node != stopped.node })
            let stoppedAt = ContinuousClock.now
            stopped.stop()
            // The other node sweeps every lease/3 (6.7 s): well before the 20 s the lease had left.
            try waitUntil(timeout: .seconds(12), "\(other.node) takes default's clock") {
                try other.cluster()["clockLeases"]?.arrayValue?.contains("default") == true
            }
            #expect(ContinuousClock.now - stoppedAt < .seconds(15))
        }
    }

    @Test("creations of one id racing on three nodes leave one world and its keys only; commands racing a deletion never bring the deleted world's keys back")
    func racesLeaveNoKeys() throws {
        try withCluster(["a", "b", "c"]) { redis, nodes, _ in
            let ports = nodes.map(\.port)
            for round in 0..<5 {
                let statuses = Mutex<[Int]>([])
                onThreads(3) { index in
                    let status = (try? TestHTTP.createSimulation(port: ports[index], ["id": .string("race\(round)")]).status) ?? 0
                    statuses.withLock { $0.append(status) }
                }
                #expect(statuses.withLock { $0.sorted() } == [201, 409, 409])
            }
            var doomed: [String] = []
            for round in 0..<10 {
                let id = "doomed\(round)"
                let created = try TestHTTP.createSimulation(port: ports[0], ["id": .string(id)])
                #expect(created.status == 201)
                doomed.append(try #require(try created.json()["epoch"]?.stringValue))
                onThreads(2) { index in
                    if index == 0 {
                        _ = try? TestHTTP.request(port: ports[2], "DELETE", "/v1/simulations/\(id)")
                        return
                    }
                    for step in 0..<20 {
                        let command: JSONValue = ["type": "device.upsert", "id": .string("d\(step)")]
                        guard let reply = try? TestHTTP.commands(port: ports[1], [command], simulation: id),
                            reply.status == 200
                        else { return }
                    }
                }
            }
            // Six worlds (default and one per creation race), each with its snapshot and no more.
            try waitUntil(timeout: .seconds(5), "only the living worlds' snapshots are left") {
                try redis.count("islet:snap:*") - redis.count("islet:snap:*:prev") == 6
            }
            for epoch in doomed {
                try waitUntil(timeout: .seconds(5), "no key of deleted world \(epoch) is left") {
                    try redis.count("islet:*\(epoch)*") == 0
                }
            }
            let listed = try TestHTTP.request(port: ports[0], "/v1/simulations").json()["simulations"]?.arrayValue ?? []
            #expect(listed.count == 6)
        }
    }

    @Test("a push on one node to a token another node made a moment ago reaches its activity, never BadDeviceToken")
    func pushToFreshToken() throws {
        try withCluster(["a", "b"]) { _, nodes, _ in
            let (a, b) = (nodes[0], nodes[1])
            let setUp: [JSONValue] = [
                ["type": "device.upsert", "id": "d1", "model": "iphone-15-pro"],
                ["type": "app.upsert", "id": "coffee", "foreground": true],
            ]
            #expect(try TestHTTP.commands(port: a.port, setUp).status == 200)
            let headers = [("apns-push-type", "liveactivity"), ("apns-topic", "coffee.push-type.liveactivity")]
            for index in 0..<40 {
                let request: JSONValue = [
                    "type": "activity.request", "id": .string("a\(index)"), "app": "coffee",
                    "attributesType": "CoffeeDeliveryAttributes", "content": ["state": ["status": "received"]],
                    "pushType": "token",
                ]
                let created = try TestHTTP.commands(port: a.port, [request]).json()
                let token = try #require(created["results"]?.arrayValue?.first?["pushToken"]?.stringValue)
                let body = #"{"aps":{"timestamp":\#(1_795_766_500 + index),"event":"update","content-state":{"status":"brewing"}}}"#
                let push = try TestHTTP.request(port: b.port, "POST", "/3/device/\(token)", headers: headers, body: Array(body.utf8))
                #expect(push.status == 200, "push \(index): \(push.text)")
                // Ended, it no longer counts against the app's limit (LA-4).
                let end: JSONValue = ["type": "activity.end", "id": .string("a\(index)"), "dismissalPolicy": "immediate"]
                #expect(try TestHTTP.commands(port: a.port, [end]).status == 200)
            }
        }
    }

    @Test("Redis losing its data (FLUSHALL): commands answer 503 naming the lost log instead of hanging, creations are refused, and reads keep the last state")
    func redisLosesItsData() throws {
        try withCluster(["a", "b"]) { redis, nodes, _ in
            let (a, b) = (nodes[0], nodes[1])
            #expect(try TestHTTP.createSimulation(port: a.port, ["id": "before"]).status == 201)
            #expect(try TestHTTP.commands(port: a.port, [["type": "device.upsert", "id": "d1"]]).status == 200)
            let rev = try b.rev()
            try redis.command(["FLUSHALL"])
            for node in nodes {
                let refused = try TestHTTP.commands(port: node.port, [["type": "device.upsert", "id": "d2"]])
                #expect(refused.status == 503, "\(node.node): \(refused.text)")
                #expect(refused.text.contains("no longer in the cluster's log"))
            }
            let created = try TestHTTP.createSimulation(port: b.port, ["id": "after"])
            #expect(created.status == 503, "\(created.text)")
            #expect(try TestHTTP.createSimulation(port: a.port, ["id": "after2"]).status == 503)
            #expect(try b.rev() == rev)
            for node in nodes {
                #expect(try TestHTTP.request(port: node.port, "/healthz").status == 200, "the node itself is well")
            }
            #expect(try TestHTTP.state(port: b.port, path: "/devices/d1/id").json()["value"] == "d1")
        }
    }
}

extension RedisServer {
    /// How many keys match `pattern` (`KEYS`: a test's database is small).
    func count(_ pattern: String) throws -> Int {
        let reply = try self.command(["KEYS", pattern])
        guard reply.hasPrefix("*"), let count = Int(reply.dropFirst()) else { throw TestClientError("not an array: \(reply)") }
        return count
    }
}
