import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

/// The OpenAPI document cannot drift from the router: every route is described, and every
/// described operation is a route.
@Suite("OpenAPI document")
struct OpenAPIRouteTests {
    @Test("every route is described and every described operation is a route")
    func matchesTheRouter() throws {
        let (server, _) = try makeServer()
        let routes = Set(server.router.routes.map { "\($0.method) \($0.pattern)" })
        let described = Set(OpenAPIDocument.operations.map { "\($0.method) \($0.path)" })
        #expect(routes.subtracting(described).sorted() == [], "routes missing from openapi.json")
        #expect(described.subtracting(routes).sorted() == [], "operations in openapi.json that no route serves")
        #expect(routes.count > 90)
    }

    @Test("the command types it names are the engine's")
    func commandTypes() throws {
        let types = OpenAPIDocument.value["components"]?["schemas"]?["Command"]?["properties"]?["type"]?["enum"]
        let named = (types?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(named.sorted() == Command.supportedTypes.sorted())
    }

    @Test("GET /v1/openapi.json serves it, per-simulation copies written out")
    func served() throws {
        let (server, transport) = try makeServer()
        let reply = try #require(transport.request(.GET, "/v1/openapi.json"))
        #expect(reply.status == 200)
        let document = try JSONParser().parse(reply.body)
        #expect(document["openapi"] == "3.1.0")
        let copy = try #require(document["paths"]?["/v1/simulations/{simulation}/state"]?["get"])
        #expect(copy["parameters"]?.arrayValue?.first?["name"] == "simulation")
        _ = server
    }

    @Test("GET /v1/clock names the next scheduled transition")
    func nextTransition() throws {
        let start = Instant(millisecondsSinceEpoch: 1_795_766_400_000)  // 2026-11-27T08:00:00Z
        let (server, transport) = try makeServer(.testing(virtualClockStart: start))
        let json: HTTPHeaders = ["content-type": "application/json"]
        let none = try JSONParser().parse(try #require(transport.request(.GET, "/v1/clock")).body)
        #expect(none["nextTransition"] == .null)
        let batch = #"""
            {"commands":[{"type":"app.upsert","id":"coffee","foreground":true},
            {"type":"activity.request","id":"a1","app":"coffee","attributesType":"T",
            "content":{"state":{},"staleDate":"2026-11-27T09:00:00Z"}}]}
            """#
        transport.request(.POST, "/v1/commands", headers: json, body: Array(batch.utf8))
        server.flush()
        let clock = try JSONParser().parse(try #require(transport.request(.GET, "/v1/clock")).body)
        #expect(clock["nextTransition"] == "2026-11-27T09:00:00Z")
        #expect(clock["result"]?["mode"] == "virtual")
    }

    @Test("GET /v1/clock names no transition past the last writable instant: the clock stops there, and no advance could name it")
    func nextTransitionPastTheEndOfTime() throws {
        let start = try Instant(rfc3339: "9999-12-31T23:00:00Z")
        let (server, transport) = try makeServer(.testing(virtualClockStart: start))
        let json: HTTPHeaders = ["content-type": "application/json"]
        let batch = #"""
            {"commands":[{"type":"app.upsert","id":"coffee","foreground":true},
            {"type":"activity.request","id":"a1","app":"coffee","attributesType":"T","content":{"state":{}}},
            {"type":"activity.request","id":"a2","app":"coffee","attributesType":"T",
            "content":{"state":{},"staleDate":"9999-12-31T23:30:00Z"}}]}
            """#
        transport.request(.POST, "/v1/commands", headers: json, body: Array(batch.utf8))
        server.flush()
        var clock = try JSONParser().parse(try #require(transport.request(.GET, "/v1/clock")).body)
        #expect(clock["nextTransition"] == "9999-12-31T23:30:00Z", "a deadline before the end is named")
        let advance = Array(#"{"to":"9999-12-31T23:30:00Z"}"#.utf8)
        transport.request(.POST, "/v1/clock/advance", headers: json, body: advance)
        server.flush()
        // What is left, the 8-hour ends (LA-7), lies past 9999-12-31T23:59:59.999Z.
        clock = try JSONParser().parse(try #require(transport.request(.GET, "/v1/clock")).body)
        #expect(clock["result"]?["now"] == "9999-12-31T23:30:00Z")
        #expect(clock["nextTransition"] == .null)
        let state = try JSONParser().parse(try #require(transport.request(.GET, "/v1/state", query: [QueryItem(name: "path", value: "/activities/a1")])).body)
        #expect(state["value"]?["activityState"] == "active", "its end is never reached")
    }
}
