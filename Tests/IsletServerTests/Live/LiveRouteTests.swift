import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

@Suite("Resource routes, reads and error codes on a real socket")
struct LiveRouteTests {
    static let json = [("Content-Type", "application/json")]

    static func send(_ port: Int, _ method: String, _ path: String, _ body: String? = nil) throws -> TestHTTPResponse {
        try TestHTTP.request(
            port: port, method, path, headers: body == nil ? [] : Self.json, body: body.map { Array($0.utf8) })
    }

    @Test("every resource route is a single command replying {rev, result}")
    func resourceRoutes() async throws {
        try await withRunningServer { server in
            let port = server.port
            var rev: UInt64 = 0
            func expectOK(_ reply: TestHTTPResponse, _ what: String) throws -> JSONValue {
                #expect(reply.status == 200, "\(what): \(reply.text)")
                let body = try reply.json()
                let next = UInt64(body["rev"]?.numberValue ?? 0)
                #expect(next == rev + 1, "\(what) makes one revision")
                rev = next
                return body["result"] ?? .null
            }
            _ = try expectOK(
                try Self.send(port, "PUT", "/v1/clock", #"{"mode":"virtual","now":"2026-11-22T08:00:00Z","rate":0}"#),
                "clock.set")
            _ = try expectOK(try Self.send(port, "PUT", "/v1/devices/d1", #"{"model":"iphone-15-pro"}"#), "device")
            let app = try expectOK(try Self.send(port, "PUT", "/v1/apps/coffee", #"{"foreground":true}"#), "app")
            #expect(app["pushToStartToken"]?.stringValue?.count == 64)
            let request = try expectOK(
                try Self.send(
                    port, "POST", "/v1/activities",
                    #"{"id":"a1","app":"coffee","attributesType":"CoffeeDeliveryAttributes","content":{"state":{"status":"received"}},"pushType":"token"}"#
                ),
                "request")
            #expect(request["id"] == "a1")
            let update = try expectOK(
                try Self.send(port, "PATCH", "/v1/activities/a1", #"{"content":{"state":{"status":"brewing"}}}"#),
                "update")
            #expect(update["applied"] == true)
            _ = try expectOK(try Self.send(port, "POST", "/v1/devices/d1/press", #"{"activity":"a1"}"#), "press")
            _ = try expectOK(try Self.send(port, "POST", "/v1/activities/a1/end"), "end")
            _ = try expectOK(try Self.send(port, "POST", "/v1/activities/a1/dismiss"), "dismiss")
            let advanced = try expectOK(try Self.send(port, "POST", "/v1/clock/advance", #"{"seconds":60}"#), "advance")
            #expect(advanced["now"] == "2026-11-22T08:01:00Z")
            _ = try expectOK(
                try Self.send(port, "PUT", "/v1/config", #"{"values":{"alertExpandedSeconds":5}}"#), "config")
            _ = try expectOK(
                try Self.send(
                    port, "PUT", "/v1/templates",
                    #"{"app":"coffee","target":"activity:CoffeeDeliveryAttributes","slot":"minimal","html":"{{state.status}}"}"#
                ),
                "template")
            let clock = try Self.send(port, "GET", "/v1/clock").json()
            #expect(clock["result"]?["mode"] == "virtual")
            #expect(clock["rev"] == .number(Double(rev)))
            #expect(try Self.send(port, "GET", "/v1/devices/d1").json()["value"]?["id"] == "d1")
            #expect(try Self.send(port, "GET", "/v1/apps/coffee").json()["value"]?["id"] == "coffee")
            #expect(try Self.send(port, "GET", "/v1/activities/a1").json()["value"]?["activityState"] == "dismissed")
            _ = try expectOK(try Self.send(port, "DELETE", "/v1/devices/d1"), "device.delete")
            _ = try expectOK(try Self.send(port, "DELETE", "/v1/apps/coffee"), "app.delete")
            // Widget and stack routes reach the engine (which may not support them yet).
            for (method, path) in [
                ("PUT", "/v1/widgets/w1"), ("PUT", "/v1/widgets/w1/timeline"), ("POST", "/v1/widgets/w1/reload"),
                ("DELETE", "/v1/widgets/w1"), ("PUT", "/v1/stacks/s1"), ("DELETE", "/v1/stacks/s1"),
                ("PUT", "/v1/relevance/weights"),
            ] {
                let reply = try Self.send(port, method, path, method == "DELETE" ? nil : "{}")
                #expect([200, 400, 404].contains(reply.status), "\(method) \(path): \(reply.text)")
                #expect(reply.status == 200 || reply.errorCode != nil)
            }
        }
    }

    @Test("the text scene inlines each referenced presentation as plain text")
    func sceneText() async throws {
        try await withRunningServer { server in
            let port = server.port
            _ = try TestHTTP.commands(port: port, Fixture.world)
            let plain = try Self.send(port, "GET", "/v1/devices/d1/scene").json()
            #expect(plain["value"]?["island"]?["compact"]?["activity"] == "a1")
            let text = try Self.send(port, "GET", "/v1/devices/d1/scene?resolve=text").json()
            let compact = text["value"]?["island"]?["compact"]?["text"]
            #expect(compact?["leading"]?.stringValue != nil)
            #expect(compact?["trailing"]?.stringValue?.contains("<") == false)
            let lock = text["value"]?["lockScreen"]?["activities"]?.arrayValue?.first
            #expect(lock?["activity"] == "a1")
            #expect(lock?["text"]?.stringValue?.isEmpty == false)
            #expect(try Self.send(port, "GET", "/v1/devices/nope/scene?resolve=text").status == 404)
            #expect(try Self.send(port, "GET", "/v1/devices/d1/scene?resolve=html").status == 400)
        }
    }

    @Test(
        "every error code of API.md from a real bad request",
        arguments: [
            ("invalid_json", 400), ("invalid_argument", 400), ("not_found", 404), ("conflict", 409),
            ("limit_exceeded", 422), ("payload_too_large", 413), ("unauthorized", 401), ("forbidden", 403),
            ("rate_limited", 429), ("unsupported_media_type", 415), ("method_not_allowed", 405),
        ])
    func errorCodes(code: String, status: Int) async throws {
        var configuration = IsletConfiguration.testing()
        configuration.adminToken = "admin-token-0123456789"
        configuration.viewerToken = "viewer-token-0123456789"
        configuration.rateLimit = .init(commandsPerSecond: 1, burst: 3)
        try await withRunningServer(configuration) { server in
            let port = server.port
            let admin = [("Authorization", "Bearer admin-token-0123456789")]
            let viewer = [("Authorization", "Bearer viewer-token-0123456789")]
            func post(
                _ body: String, headers: [(String, String)] = admin, type: String = "application/json",
                path: String = "/v1/commands"
            ) throws -> TestHTTPResponse {
                try TestHTTP.request(
                    port: port, "POST", path, headers: [("Content-Type", type)] + headers, body: Array(body.utf8))
            }
            let reply: TestHTTPResponse
            switch code {
            case "invalid_json": reply = try post(#"{"commands":["#)
            case "invalid_argument": reply = try post(#"{"commands":[{"type":"device.upsert","id":"bad id!"}]}"#)
            case "not_found":
                reply = try post(#"{"commands":[{"type":"activity.update","id":"zz","content":{"state":{}}}]}"#)
            case "conflict":
                _ = try post(#"{"commands":[{"type":"clock.set","mode":"virtual","now":"2026-11-22T08:00:00Z"}]}"#)
                reply = try post(#"{"commands":[{"type":"clock.set","now":"2020-01-01T00:00:00Z"}]}"#)
            case "limit_exceeded":
                let big = String(repeating: "x", count: 5000)
                reply = try post(
                    #"{"commands":[{"type":"app.upsert","id":"a","foreground":true},{"type":"activity.request","app":"a","attributesType":"T","content":{"state":{"s":"\#(big)"}}}]}"#
                )
            case "payload_too_large":
                reply = try TestHTTP.request(
                    port: port, "POST", "/v1/commands", headers: Self.json + admin + [("Content-Length", "999999999")],
                    body: [])
            case "unauthorized": reply = try post(#"{"commands":[]}"#, headers: [])
            case "forbidden": reply = try post(#"{"commands":[{"type":"device.upsert","id":"d"}]}"#, headers: viewer)
            case "rate_limited":
                let batch = #"{"commands":[{"type":"device.upsert","id":"d"},{"type":"device.upsert","id":"d"}]}"#
                _ = try post(batch)
                reply = try post(batch)
                #expect(reply.headers["retry-after"] != nil)
            case "unsupported_media_type": reply = try post(#"{"commands":[]}"#, type: "text/plain")
            default: reply = try TestHTTP.request(port: port, "DELETE", "/v1/commands", headers: admin)
            }
            #expect(reply.status == status, "\(reply.text)")
            #expect(reply.errorCode == code, "\(reply.text)")
            if code == "invalid_argument" { #expect(try reply.json()["error"]?["field"] == "/commands/0/id") }
            if code == "limit_exceeded" {
                #expect(try reply.json()["error"]?["field"]?.stringValue?.hasPrefix("/commands/1/") == true)
            }
            // Nothing was applied by any refused request.
            if code != "rate_limited" {
                let state = try TestHTTP.state(port: port, headers: viewer).json()
                #expect(state["value"]?["devices"] == [:])
            }
        }
    }

    @Test("resource routes point error fields into their own body")
    func sugarFields() async throws {
        try await withRunningServer { server in
            let port = server.port
            _ = try TestHTTP.commands(port: port, Fixture.world)
            let reply = try Self.send(port, "PATCH", "/v1/activities/a1", #"{"content":{"state":7}}"#)
            #expect(reply.status == 400)
            #expect(try reply.json()["error"]?["field"] == "/content/state")
            let typed = try Self.send(port, "PUT", "/v1/devices/d2", #"{"type":"app.upsert"}"#)
            #expect(try typed.json()["error"]?["field"] == "/type")
            let other = try Self.send(port, "PUT", "/v1/devices/d2", #"{"id":"d3"}"#)
            #expect(try other.json()["error"]?["field"] == "/id")
            #expect(try Self.send(port, "PUT", "/v1/devices/d2", "[1]").status == 400)
        }
    }
}
