import IsletCore
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletServer

/// Issue 18's stream limits: the largest message, and a slow reader that must not cost an
/// encoding of the document every loop turn.
@Suite("Stream limits on the in-memory transport")
struct StreamLimitsTests {
    private static let json: HTTPHeaders = ["content-type": "application/json"]

    private func devices(_ count: Int, on server: IsletServer, _ transport: InMemoryTransport) {
        let batch: [JSONValue] = (0..<count).map { ["type": "device.upsert", "id": .string("d\($0)")] }
        _ = transport.request(.POST, "/v1/commands", headers: Self.json, body: PipelineTests.body(batch))
        server.flush()
    }

    @Test("a snapshot over the largest stream message is refused with payload_too_large; a narrower path is served")
    func oversizeSnapshot() throws {
        var configuration = IsletConfiguration.testing()
        configuration.limits.streamMessageBytes = 4000
        let (server, transport) = try makeServer(configuration)
        self.devices(20, on: server, transport)
        let stream = try #require(transport.openWebSocket())
        transport.receive(text: #"{"op":"subscribe","id":"all","path":""}"#, from: stream)
        transport.receive(text: #"{"op":"subscribe","id":"one","path":"/devices/d1"}"#, from: stream)
        server.flush()
        transport.drain(stream)
        let messages = try transport.sentJSON(to: stream)
        let error = try #require(messages.first { $0["type"] == "error" })
        #expect(error["id"] == "all" && error["error"]?["code"] == "payload_too_large")
        #expect(error["error"]?["field"] == "/path")
        #expect(messages.contains { $0["type"] == "snapshot" && $0["sub"] == "one" })
        #expect(messages.allSatisfy { $0.encoded.count <= 4000 })
        // The refused subscription is gone: its id may be used again.
        transport.receive(text: #"{"op":"subscribe","id":"all","path":"/clock"}"#, from: stream)
        server.flush()
        transport.drain(stream)
        #expect(try transport.sentJSON(to: stream).contains { $0["type"] == "snapshot" && $0["sub"] == "all" })
    }

    @Test("a snapshot waiting for a slow reader's queue is encoded once, not at every loop turn")
    func slowReaderEncodesOnce() throws {
        var configuration = IsletConfiguration.testing()
        configuration.limits.outboundBytes = 30_000
        let (server, transport) = try makeServer(configuration)
        self.devices(20, on: server, transport)  // a document of about 18 KB: one fits under the cap, two do not
        let stream = try #require(transport.openWebSocket())
        // The first snapshot fills the queue (nothing is drained); the second must wait.
        transport.receive(text: #"{"op":"subscribe","id":"a","path":""}"#, from: stream)
        server.flush()
        transport.receive(text: #"{"op":"subscribe","id":"b","path":""}"#, from: stream)
        server.flush()
        let before = server.hub.counters.snapshots
        for _ in 0..<50 { server.flush() }
        #expect(server.hub.counters.snapshots - before <= 1)
        transport.drain(stream)
        server.flush()
        transport.drain(stream)
        let snapshots = try transport.sentJSON(to: stream).filter { $0["type"] == "snapshot" }
        #expect(snapshots.map { $0["sub"] } == ["a", "b"])
        #expect(snapshots[0]["value"] == snapshots[1]["value"])
    }

    @Test("a snapshot built while a slow reader's queue was full is dropped with its deleted world, not sent for a re-created one")
    func preparedSnapshotGoesWithItsWorld() throws {
        var configuration = IsletConfiguration.testing()
        configuration.limits.outboundBytes = 30_000
        let (server, transport) = try makeServer(configuration)
        let batch: [JSONValue] = (0..<20).map { ["type": "device.upsert", "id": .string("d\($0)")] }
        func create() throws -> JSONValue {
            let created = try #require(
                transport.request(.POST, "/v1/simulations", headers: Self.json, body: Array(#"{"id":"x1"}"#.utf8)))
            #expect(created.status == 201)
            _ = transport.request(.POST, "/v1/simulations/x1/commands", headers: Self.json, body: PipelineTests.body(batch))
            server.flush()
            return try JSONParser().parse(created.body)["epoch"] ?? nil
        }
        let first = try create()
        let stream = try #require(transport.openWebSocket())
        transport.receive(text: #"{"op":"subscribe","id":"main","path":"/clock"}"#, from: stream)
        server.flush()
        // About 18 KB each: "a" fills the queue, "b" waits with its snapshot built.
        transport.receive(text: #"{"op":"subscribe","id":"a","path":"","simulation":"x1"}"#, from: stream)
        server.flush()
        transport.receive(text: #"{"op":"subscribe","id":"b","path":"","simulation":"x1"}"#, from: stream)
        server.flush()
        #expect(transport.request(.DELETE, "/v1/simulations/x1")?.status == 200)
        let second = try create()
        #expect(first != second)
        transport.receive(text: #"{"op":"subscribe","id":"b","path":"","simulation":"x1"}"#, from: stream)
        for _ in 0..<3 {
            server.flush()
            transport.drain(stream)
        }
        let snapshots = try transport.sentJSON(to: stream).filter { $0["type"] == "snapshot" && $0["sub"] == "b" }
        #expect(snapshots.map { $0["epoch"] } == [second])
    }
}
