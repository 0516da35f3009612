import IsletCore
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletServer

/// A world whose inputs a cluster's log orders, with a log that takes entries and never gives
/// them back: what is left waiting when the world goes.
@Suite("A world ordered by a shared log")
struct SharedOrderTests {
    /// Appends every entry and applies none (the entry is in Redis; this node never reads it back).
    final class HeldOrder: SharedOrder {
        var isAvailable: Bool { true }
        var holdsClock: Bool { false }
        var appended = 0
        func append(_ cause: RevisionRecord.Cause, wall: Instant, request: UInt64, completion: @escaping (APIError?) -> Void) {
            self.appended += 1
        }
    }

    @Test("a command waiting for the log is answered not_found when its simulation is deleted meanwhile, not left without a reply")
    func deletedWhileWaiting() throws {
        let (server, transport) = try makeServer()
        let json: HTTPHeaders = ["content-type": "application/json"]
        transport.request(.POST, "/v1/simulations", headers: json, body: Array(#"{"id":"team"}"#.utf8))
        server.flush()
        let order = HeldOrder()
        try #require(server.simulations["team"]).live.sharedOrder = order
        let before = transport.responses.count
        let batch = #"{"commands":[{"type":"device.upsert","id":"d1"}]}"#
        #expect(transport.request(.POST, "/v1/simulations/team/commands", headers: json, body: Array(batch.utf8)) == nil)
        server.flush()
        #expect(order.appended == 1 && transport.responses.count == before, "waiting for the log")
        server.detach("team")  // what applying a deletion from the log does
        #expect(transport.responses.count == before + 1)
        let reply = try #require(transport.responses.values.first { $0.status == 404 })
        #expect(String(decoding: reply.body, as: UTF8.self).contains(#"simulation \"team\" was deleted"#))
    }
}
