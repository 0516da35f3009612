import IsletCore
import IsletServer
import IsletTestSupport
import Testing

@Suite("The forecast route and the demo scenario on a real server")
struct LiveForecastDemoTests {
    static let json = [("Content-Type", "application/json")]

    /// A stack of two widgets whose timelines make w1 win the first hour and w2 the second.
    static let stackWorld: [JSONValue] = [
        ["type": "device.upsert", "id": "d1", "model": "iphone-15-pro"],
        ["type": "app.upsert", "id": "weather", "name": "Weather"],
        ["type": "app.upsert", "id": "news", "name": "News"],
        ["type": "widget.upsert", "id": "w1", "app": "weather", "kind": "weather", "family": "systemSmall", "device": "d1"],
        ["type": "widget.upsert", "id": "w2", "app": "news", "kind": "news", "family": "systemSmall", "device": "d1"],
        [
            "type": "widget.setTimeline", "id": "w1",
            "entries": [
                ["date": "2026-11-22T08:00:00Z", "content": ["t": 1], "relevance": ["score": 1, "duration": 3600]],
                ["date": "2026-11-22T09:00:00Z", "content": ["t": 2], "relevance": ["score": 0.1, "duration": 3600]],
            ],
        ],
        [
            "type": "widget.setTimeline", "id": "w2",
            "entries": [
                ["date": "2026-11-22T08:00:00Z", "content": ["h": 1], "relevance": ["score": 0.1, "duration": 3600]],
                ["date": "2026-11-22T09:00:00Z", "content": ["h": 2], "relevance": ["score": 1, "duration": 3600]],
            ],
        ],
        ["type": "stack.upsert", "id": "s1", "device": "d1", "family": "systemSmall", "widgets": ["w1", "w2"]],
    ]

    static func request(_ port: Int, _ method: String, _ path: String, _ body: String? = nil) throws
        -> TestHTTPResponse
    {
        try TestHTTP.request(
            port: port, method, path, headers: body == nil ? [] : Self.json, body: body.map { Array($0.utf8) })
    }

    @Test("GET /v1/stacks/{id}/forecast steps a copy of the engine and leaves the live state and rev untouched")
    func forecastIsARead() async throws {
        try await withRunningServer { server in
            let port = server.port
            let setUp = try TestHTTP.commands(port: port, Self.stackWorld).json()
            let rev = try #require(setUp["rev"]?.numberValue)
            let before = try Self.request(port, "GET", "/v1/state").json()

            let reply = try Self.request(port, "GET", "/v1/stacks/s1/forecast?hours=3&step=30m")
            #expect(reply.status == 200, "\(reply.text)")
            let body = try reply.json()
            #expect(body["rev"]?.numberValue == rev)
            let points = try #require(body["result"]?["points"]?.arrayValue)
            #expect(points.count == 6)
            #expect(points.first?["top"] == "w1")
            #expect(points.contains { $0["top"] == "w2" }, "the second hour belongs to w2")

            let after = try Self.request(port, "GET", "/v1/state").json()
            #expect(after == before, "a forecast changes nothing")
        }
    }

    @Test("trial weights come from the query or a POST body; bad parameters and unknown stacks are errors")
    func trialsAndErrors() async throws {
        try await withRunningServer { server in
            let port = server.port
            _ = try TestHTTP.commands(port: port, Self.stackWorld)
            let query = try Self.request(port, "GET", "/v1/stacks/s1/forecast?hours=1&weights.timeline=0").json()
            #expect(query["result"]?["trial"] == true)
            #expect(query["result"]?["weights"]?["timeline"] == 0)
            let body = try Self.request(
                port, "POST", "/v1/stacks/s1/forecast", #"{"hours":1,"weights":{"habit":2}}"#
            ).json()
            #expect(body["result"]?["weights"]?["habit"] == 2)

            let badStep = try Self.request(port, "GET", "/v1/stacks/s1/forecast?step=1s")
            #expect(badStep.status == 400)
            #expect(try badStep.json()["error"]?["field"] == "/step")
            let unknown = try Self.request(port, "GET", "/v1/stacks/nope/forecast")
            #expect(unknown.status == 404)
            #expect(try unknown.json()["error"]?["code"] == "not_found")
        }
    }

    @Test("demo if-empty loads the three iPhones, their Smart Stacks and activities into a fresh simulation")
    func demoLoads() async throws {
        var configuration = IsletConfiguration.testing()
        configuration.demo = .ifEmpty
        try await withRunningServer(configuration) { server in
            let port = server.port
            let devices = try Self.request(port, "GET", "/v1/state?path=/devices").json()["value"]
            let ids = devices?.objectValue?.keys ?? []
            #expect(ids.count == DemoScenario.devices.count)
            for device in DemoScenario.devices {
                #expect(ids.contains(device.id))
                let stack = try Self.request(port, "GET", "/v1/stacks/\(device.id).home").json()["value"]
                #expect(stack?["top"]?.stringValue != nil, "the demo stack of \(device.id) has a top widget")
            }
            let activities = try Self.request(port, "GET", "/v1/state?path=/activities").json()["value"]
            #expect((activities?.objectValue?.count ?? 0) > 0)
            let isLoaded = try await server.withServer { DemoScenario.isLoaded(in: $0.engine) }
            #expect(isLoaded)
        }
    }

    @Test("demo off leaves the simulation empty; the driver does nothing without the demo")
    func demoOff() async throws {
        try await withRunningServer { server in
            let rev = try await server.withServer { server -> UInt64 in
                server.driveDemo()
                return server.engine.rev
            }
            #expect(rev == 0)
            let devices = try Self.request(server.port, "GET", "/v1/state?path=/devices").json()["value"]
            #expect(devices?.objectValue?.isEmpty == true)
        }
    }
}
