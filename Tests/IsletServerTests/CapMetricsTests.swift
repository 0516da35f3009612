import IsletCore
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletServer

/// Issue 18: `/metrics` counts refusals by each cap and what the engine let go of to stay
/// within its bounds (in-memory transport).
@Suite("Metrics of the caps (in-memory transport)")
struct CapMetricsTests {
    static let json: HTTPHeaders = ["content-type": "application/json"]

    /// Submits a batch and completes the turn; returns the reply's status.
    @discardableResult
    static func commands(_ commands: [JSONValue], _ server: IsletServer, _ transport: InMemoryTransport) -> Int? {
        let body = JSONValue.object(["commands": .array(commands)]).encoded
        let before = Set(transport.responses.keys)
        transport.request(.POST, "/v1/commands", headers: Self.json, body: body)
        server.flush()
        return transport.responses.first { !before.contains($0.key) }?.value.status
    }

    /// The `/metrics` sample of `series` (name and labels as printed), if present.
    static func sample(_ series: String, _ transport: InMemoryTransport) throws -> Double? {
        let text = String(decoding: try #require(transport.request(.GET, "/metrics")).body, as: UTF8.self)
        return text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap {
            Double($0.split(separator: " ").last ?? "")
        }
    }

    @Test("refusals are counted by cap: every cap is shown from the start, an engine limit and a server limit count")
    func limitRefusals() throws {
        var configuration = IsletConfiguration.testing(virtualClockStart: nil)
        configuration.maxSimulations = 1
        let (server, transport) = try makeServer(configuration)
        for limit in ServerMetrics.limits {
            #expect(try Self.sample(#"islet_limit_refusals_total{limit="\#(limit)"}"#, transport) == 0, "\(limit)")
        }
        let templates: [JSONValue] = (0...EngineLimits.templatesPerApp).map {
            [
                "type": "template.put", "app": "coffee", "target": .string("activity:T\($0)"), "slot": "minimal",
                "html": "x",
            ]
        }
        Self.commands([["type": "app.upsert", "id": "coffee"]] + templates.dropLast(), server, transport)
        #expect(Self.commands([templates.last!], server, transport) == 422)
        let simulation = transport.request(
            .POST, "/v1/simulations", headers: Self.json, body: Array(#"{"id":"two"}"#.utf8))
        #expect(simulation?.status == 422)
        // A fork is refused after its source's pipeline is idle, not by the route itself: counted too.
        let fork = transport.request(
            .POST, "/v1/simulations", headers: Self.json, body: Array(#"{"id":"three","from":{"simulation":"default"}}"#.utf8))
        server.flush()
        #expect(fork?.status == 422)
        #expect(try Self.sample(#"islet_limit_refusals_total{limit="templates"}"#, transport) == 1)
        #expect(try Self.sample(#"islet_limit_refusals_total{limit="simulations"}"#, transport) == 2)
        #expect(try Self.sample(#"islet_limit_refusals_total{limit="apps"}"#, transport) == 0)
        _ = server
    }

    @Test("AP-9 coalesced and dropped throttled pushes are counted once their revision is committed")
    func heldPushes() throws {
        let (server, transport) = try makeServer()
        Self.commands(
            [
                ["type": "device.upsert", "id": "d1"],
                ["type": "app.upsert", "id": "coffee", "foreground": true],
                ["type": "config.set", "values": ["pushBudgetPerHour": 1]],
                [
                    "type": "activity.request", "id": "a1", "app": "coffee", "attributesType": "T",
                    "attributes": [:], "content": ["state": [:]],
                ],
            ], server, transport)
        let push: JSONValue = [
            "type": "activity.update", "id": "a1", "content": ["state": ["n": 1]], "delivery": ["source": "push"],
        ]
        for _ in 0..<3 { #expect(Self.commands([push], server, transport) == 200) }
        #expect(try Self.sample("islet_pushes_coalesced_total", transport) == 1)
        #expect(try Self.sample(#"islet_held_pushes_dropped_total{queue="throttled"}"#, transport) == 0)
        #expect(try Self.sample("islet_retired_tokens_evicted_total", transport) == 0)
        _ = server
    }
}
