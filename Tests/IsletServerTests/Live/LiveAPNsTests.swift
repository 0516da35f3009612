import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

/// The APNs-style ingress over HTTP/1.1: each AP rule's reply, and Apple's example payloads.
@Suite("APNs-style ingress")
struct LiveAPNsTests {
    struct World {
        let port: Int
        let pushToStart: String
        let activityToken: String
        let topic = "coffee.push-type.liveactivity"

        func push(
            _ token: String, _ body: String, headers: [(String, String)]? = nil, extra: [(String, String)] = []
        ) throws -> TestHTTPResponse {
            let base = headers ?? [("apns-push-type", "liveactivity"), ("apns-topic", self.topic)]
            return try TestHTTP.request(
                port: self.port, "POST", "/3/device/\(token)", headers: base + extra, body: Array(body.utf8))
        }
    }

    static func world(_ port: Int) throws -> World {
        let reply = try TestHTTP.commands(
            port: port, [Fixture.pauseClock, Fixture.device, Fixture.app, Fixture.request("a1", pushToken: true)])
        let results = try reply.json()["results"]!
        return World(
            port: port, pushToStart: results[pointer: "/2/pushToStartToken"]!.stringValue!,
            activityToken: results[pointer: "/3/pushToken"]!.stringValue!)
    }

    static let update = #"{"aps":{"timestamp":1795766500,"event":"update","content-state":{"status":"brewing"}}}"#

    @Test("an accepted push is 200 with apns-id, and its outcome is in the app's deliveries")
    func accepted() async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let reply = try world.push(
                world.activityToken, Self.update, extra: [("apns-id", "EABEAE54-14A8-11E5-B60B-1697F925EC7B")])
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.headers["apns-id"] == "eabeae54-14a8-11e5-b60b-1697f925ec7b")
            #expect(reply.body.isEmpty)
            let padded = try world.push(
                world.activityToken, Self.update,
                headers: [("apns-push-type", "liveactivity \t"), ("apns-topic", world.topic + " "), ("apns-priority", "10 ")])
            #expect(padded.status == 200, "HTTP/1.1 field values without their trailing whitespace: \(padded.text)")
            let generated = try world.push(world.activityToken, Self.update)
            #expect(generated.headers["apns-id"].map(isUUID) == true)
            let deliveries = try TestHTTP.state(port: server.port, path: "/apps/coffee/deliveries").json()["value"]!
            let last = deliveries.arrayValue!.last!
            #expect(last["source"] == "push")
            #expect(last["apnsId"] == .string(generated.headers["apns-id"]!))
            #expect(
                try TestHTTP.state(port: server.port, path: "/activities/a1/content/state/status").json()["value"]
                    == "brewing")
        }
    }

    @Test("a body refused before its route runs (over the server's limit) still echoes the request's apns-id, or apns-request-id for channel management")
    func refusedBodiesEchoTheRequestID() async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let huge = Array(#"{"aps":{"pad":"\#(String(repeating: "x", count: 300_000))"}}"#.utf8)
            let id = "EABEAE54-14A8-11E5-B60B-1697F925EC7B"
            let push = try TestHTTP.request(
                port: server.port, "POST", "/3/device/\(world.activityToken)",
                headers: [("apns-push-type", "liveactivity"), ("apns-topic", world.topic), ("apns-id", id)], body: huge)
            #expect(push.status == 413 && push.headers["apns-id"] == id.lowercased(), "\(push.status) \(push.headers)")
            let channel = try TestHTTP.request(
                port: server.port, "POST", "/1/apps/coffee/channels", headers: [("apns-request-id", id)], body: huge)
            #expect(channel.status == 413, "\(channel.text)")
            #expect(channel.headers["apns-request-id"] == id.lowercased() && channel.headers["apns-id"] == nil)
        }
    }

    @Test("a path under the APNs prefixes that no route takes is answered as APNs answers it, with apns-id: no token, another path, another method")
    func unroutedAPNsPaths() async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let rev = try TestHTTP.state(port: server.port).json()["rev"]
            for (method, path, status, reason) in [
                ("POST", "/3/device/", 400, "MissingDeviceToken"), ("POST", "/3/device", 400, "MissingDeviceToken"),
                ("POST", "/v1/simulations/default/3/device/", 400, "MissingDeviceToken"),
                ("POST", "/3/device/\(world.activityToken)/x", 404, "BadPath"), ("POST", "/4/nothing", 404, "BadPath"),
                ("GET", "/3/device/\(world.activityToken)", 405, "MethodNotAllowed"),
                ("GET", "/3/device/", 405, "MethodNotAllowed"), ("DELETE", "/4/nothing", 405, "MethodNotAllowed"),
                ("GET", "/1/nothing", 404, "BadPath"),
            ] {
                let reply = try TestHTTP.request(
                    port: server.port, method, path, headers: [("apns-push-type", "liveactivity"), ("apns-topic", world.topic)],
                    body: method == "POST" ? Array(Self.update.utf8) : nil)
                #expect(reply.status == status, "\(method) \(path): \(reply.text)")
                #expect(try reply.json() == ["reason": .string(reason)], "\(method) \(path)")
                // Channel management (/1/) names its requests with apns-request-id.
                let idHeader = path.hasPrefix("/1/") ? "apns-request-id" : "apns-id"
                #expect(reply.headers[idHeader].map(isUUID) == true, "\(method) \(path)")
            }
            #expect(try TestHTTP.state(port: server.port).json()["rev"] == rev)
        }
    }

    @Test(
        "AP-1, AP-2, AP-3, AP-4: refusals carry APNs reasons",
        arguments: [
            ("InvalidPushType", 400), ("MissingTopic", 400), ("BadTopic", 400), ("TopicDisallowed", 400),
            ("DeviceTokenNotForTopic", 400), ("BadPriority", 400), ("PayloadTooLarge", 413), ("PayloadEmpty", 400),
            ("BadDeviceToken", 400), ("Unregistered", 410), ("BadCollapseId", 400), ("BadExpirationDate", 400),
            ("BadMessageId", 400), ("BadPayload", 400),
        ])
    func refusals(reason: String, status: Int) async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let token = world.activityToken
            let reply: TestHTTPResponse
            switch reason {
            case "InvalidPushType":
                reply = try world.push(
                    token, Self.update, headers: [("apns-push-type", "alert"), ("apns-topic", world.topic)])
            case "MissingTopic":
                reply = try world.push(token, Self.update, headers: [("apns-push-type", "liveactivity")])
            case "BadTopic":
                reply = try world.push(
                    token, Self.update,
                    headers: [("apns-push-type", "liveactivity"), ("apns-topic", "coffee.push-type.voip")])
            case "TopicDisallowed":
                reply = try world.push(
                    token, Self.update, headers: [("apns-push-type", "liveactivity"), ("apns-topic", "coffee")])
            case "DeviceTokenNotForTopic":
                reply = try world.push(
                    token, Self.update,
                    headers: [("apns-push-type", "liveactivity"), ("apns-topic", "other.push-type.liveactivity")])
            case "BadPriority":
                for written in ["+10", "010", "5.0"] {
                    let other = try world.push(token, Self.update, extra: [("apns-priority", written)])
                    #expect(other.status == 400, "\(written): \(other.text)")
                    #expect(try other.json()["reason"] == "BadPriority", "\(written)")
                }
                reply = try world.push(token, Self.update, extra: [("apns-priority", "7")])
            case "PayloadTooLarge":
                reply = try world.push(token, #"{"aps":{"pad":"\#(String(repeating: "x", count: 4100))"}}"#)
            case "PayloadEmpty": reply = try world.push(token, "")
            case "BadDeviceToken": reply = try world.push(String(repeating: "ab", count: 32), Self.update)
            case "Unregistered":
                _ = try TestHTTP.commands(port: server.port, [["type": "activity.dismiss", "id": "a1"]])
                reply = try world.push(token, Self.update)
                let timestamp = try reply.json()["timestamp"]?.numberValue
                #expect(timestamp != nil)
                // Still 410 with the same timestamp once the device forgot the activity.
                _ = try TestHTTP.commands(port: server.port, [["type": "clock.advance", "seconds": 90_000]])
                let later = try world.push(token, Self.update)
                let laterTimestamp = try later.json()["timestamp"]?.numberValue
                #expect(later.status == 410 && laterTimestamp == timestamp, "\(later.text)")
            case "BadCollapseId":
                reply = try world.push(
                    token, Self.update, extra: [("apns-collapse-id", String(repeating: "c", count: 65))])
            case "BadExpirationDate":
                let signed = try world.push(token, Self.update, extra: [("apns-expiration", "+5")])
                #expect(signed.status == 400, "\(signed.text)")
                #expect(try signed.json()["reason"] == "BadExpirationDate")
                reply = try world.push(token, Self.update, extra: [("apns-expiration", "soon")])
            case "BadMessageId": reply = try world.push(token, Self.update, extra: [("apns-id", "not-a-uuid")])
            default: reply = try world.push(token, "{not json")
            }
            #expect(reply.status == status, "\(reply.text)")
            #expect(try reply.json()["reason"] == .string(reason), "\(reply.text)")
            #expect(reply.headers["apns-id"] != nil)
        }
    }

    /// Pushes APNs accepts and the device ignores (AP-8): to the activity's token unless said.
    static let deviceProblems: [(payload: String, toPushToStart: Bool, reason: String, event: String?, strict: String)] = [
        (#"{"aps":{"event":"update","content-state":{}}}"#, false, "timestamp_missing", "update", "MissingTimestamp"),
        (#"{"aps":{"timestamp":"soon","event":"update"}}"#, false, "timestamp_invalid", "update", "BadTimestamp"),
        (#"{"aps":{"timestamp":1,"event":"begin"}}"#, false, "event_invalid", "begin", "BadEvent"),
        (#"{"aps":{"timestamp":1}}"#, false, "event_invalid", nil, "BadEvent"),
        (#"{"aps":{"timestamp":1,"event":"update","content-state":[1]}}"#, false, "content_state_invalid", "update", "BadPayload"),
        (#"{"aps":{"timestamp":1,"event":"update","stale-date":"later","content-state":{}}}"#, false, "payload_invalid", "update", "BadPayload"),
        (#"{"aps":{"timestamp":1,"event":"update","relevance-score":"high","content-state":{}}}"#, false, "payload_invalid", "update", "BadPayload"),
        (#"{"aps":{"timestamp":1,"event":"update","content-state":{},"alert":{"title":5}}}"#, false, "payload_invalid", "update", "BadPayload"),
        (#"{"aps":{"timestamp":1,"timestamp":2,"event":"update","content-state":{}}}"#, false, "payload_invalid", nil, "BadPayload"),
        (#"{"notaps":{}}"#, false, "payload_invalid", nil, "BadPayload"),
        (#"{"aps":{"timestamp":1,"event":"start","content-state":{}}}"#, true, "start_field_missing", "start", "MissingStartField"),
        (
            #"{"aps":{"timestamp":1,"event":"start","attributes-type":"Not a type!","attributes":{},"content-state":{},"alert":"Hi"}}"#,
            true, "payload_invalid", "start", "BadPayload"
        ),
        (#"{"aps":{"timestamp":1,"event":"update","content-state":{}}}"#, true, "event_not_for_token", "update", "BadDeviceToken"),
    ]

    @Test("AP-8 what only the device judges is 200 and an ignored delivery with Islet's reason; nothing else changes",
          arguments: Self.deviceProblems.indices)
    func ap8IgnoredDeliveries(_ index: Int) async throws {
        let problem = Self.deviceProblems[index]
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            func withoutDeliveries() throws -> JSONValue {
                var document = try #require(try TestHTTP.state(port: server.port).json()["value"]?.objectValue)
                var apps = try #require(document["apps"]?.objectValue)
                apps["coffee"] = apps["coffee"]?.removingMember("deliveries")
                document["apps"] = .object(apps)
                return .object(document)
            }
            let before = try withoutDeliveries()
            let token = problem.toPushToStart ? world.pushToStart : world.activityToken
            let reply = try world.push(token, problem.payload, extra: [("apns-priority", "5")])
            #expect(reply.status == 200, "\(reply.text)")
            #expect(reply.headers["apns-id"].map(isUUID) == true)
            let last = try TestHTTP.state(port: server.port, path: "/apps/coffee/deliveries").json()["value"]!
                .arrayValue!.last!
            #expect(last["outcome"] == "ignored")
            #expect(last["reason"] == .string(problem.reason), "\(last)")
            #expect(last["event"] == (problem.event.map(JSONValue.string) ?? .null), "\(last)")
            #expect(last["source"] == "push" && last["priority"] == 5 && last["apnsId"] == .string(reply.headers["apns-id"]!))
            #expect(last["activity"] == (problem.toPushToStart ? .null : "a1"))
            #expect(last["detail"]?.stringValue?.isEmpty == false)
            #expect(try withoutDeliveries() == before)
        }
    }

    @Test("AP-8 with --apns-strict the device's problems keep Islet's explicit 400 reasons",
          arguments: Self.deviceProblems.indices)
    func ap8Strict(_ index: Int) async throws {
        let problem = Self.deviceProblems[index]
        var configuration = IsletConfiguration.testing()
        configuration.apnsStrict = true
        try await withRunningServer(configuration) { server in
            let world = try Self.world(server.port)
            let token = problem.toPushToStart ? world.pushToStart : world.activityToken
            let reply = try world.push(token, problem.payload)
            #expect(reply.status == 400)
            #expect(try reply.json()["reason"] == .string(problem.strict), "\(reply.text)")
            // Only the record of the activity's own start: the refused push left none.
            let deliveries = try TestHTTP.state(port: server.port, path: "/apps/coffee/deliveries").json()["value"]
            #expect(deliveries?.arrayValue?.count == 1)
        }
    }

    @Test("a push's relevance-score is any number, as an activity.update's relevanceScore is; not a Unix date")
    func relevanceScoreIsAnyNumber() async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let update = #"{"aps":{"timestamp":1795766500,"event":"update","content-state":{},"relevance-score":1e12}}"#
            #expect(try world.push(world.activityToken, update).status == 200)
            let last = try TestHTTP.state(port: server.port, path: "/apps/coffee/deliveries").json()["value"]!
                .arrayValue!.last!
            #expect(last["outcome"] == "applied", "\(last)")
            let score = try TestHTTP.state(port: server.port, path: "/activities/a1/content/relevanceScore").json()
            #expect(score["value"] == 1e12)
        }
    }

    @Test("AP-8 every standard alert key is accepted, also on end; the end applies and keeps its alert")
    func ap8AlertKeys() async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let alert = #"""
                {"title":{"loc-key":"%@ is ready","loc-args":["Flat white"]},"subtitle":"Counter 2","body":"Enjoy",
                 "title-loc-key":"READY","title-loc-args":["a"],"subtitle-loc-key":"SUB","subtitle-loc-args":[],
                 "loc-key":"BODY","loc-args":["b"],"launch-image":"launch.png",
                 "sound":{"critical":1,"name":"chime.aiff","volume":0.5}}
                """#
            let update = #"{"aps":{"timestamp":1795766500,"event":"update","content-state":{"status":"brewing"},"alert":\#(alert)}}"#
            #expect(try world.push(world.activityToken, update).status == 200)
            let end = #"{"aps":{"timestamp":1795766600,"event":"end","content-state":{"status":"done"},"alert":\#(alert)}}"#
            #expect(try world.push(world.activityToken, end).status == 200)
            let deliveries = try TestHTTP.state(port: server.port, path: "/apps/coffee/deliveries").json()["value"]!
            #expect(deliveries.arrayValue!.suffix(2).map { $0["outcome"] } == ["applied", "applied"], "\(deliveries)")
            let activity = try TestHTTP.state(port: server.port, path: "/activities/a1").json()["value"]!
            #expect(activity["activityState"] == "ended")
            #expect(activity[pointer: "/alert/subtitle"] == "Counter 2")
            #expect(activity[pointer: "/alert/sound/name"] == "chime.aiff")
            #expect(activity[pointer: "/alert/loc-args/0"] == "b")
            #expect(activity[pointer: "/alert/at"] == "2026-11-22T08:00:00Z")
        }
    }

    @Test("valid pushes the device would drop still get 200 (AP-6); dismissal-date in the past dismisses (AP-7)")
    func devicePolicies() async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let stale = #"{"aps":{"timestamp":1000,"event":"update","content-state":{"status":"old"}}}"#
            #expect(try world.push(world.activityToken, Self.update).status == 200)
            #expect(try world.push(world.activityToken, stale).status == 200)
            let deliveries = try TestHTTP.state(port: server.port, path: "/apps/coffee/deliveries").json()["value"]!
                .arrayValue!
            #expect(deliveries.last?["outcome"] == "ignored")
            #expect(deliveries.last?["reason"] == "stale_timestamp")
            let end =
                #"{"aps":{"timestamp":1795766600,"event":"end","dismissal-date":1663177260,"content-state":{"status":"done"}}}"#
            #expect(try world.push(world.activityToken, end).status == 200)
            #expect(
                try TestHTTP.state(port: server.port, path: "/activities/a1/activityState").json()["value"]
                    == "dismissed")
            #expect(try world.push(world.activityToken, Self.update).status == 410)
        }
    }

    @Test("push-to-start with Apple's example payload starts an activity, with a push token when asked")
    func pushToStart() async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let start = #"""
                {"aps":{"timestamp":1795766500,"event":"start","input-push-token":1,
                 "content-state":{"currentHealthLevel":100,"eventDescription":"Adventure has begun!"},
                 "attributes-type":"AdventureAttributes","attributes":{"hero":{"name":"Power Panda"}},
                 "alert":{"title":{"loc-key":"%@ is on an adventure!","loc-args":["Power Panda"]},
                          "body":{"loc-key":"%@ found a sword!","loc-args":["Power Panda"]},"sound":"chime.aiff"}}}
                """#
            let reply = try world.push(world.pushToStart, start)
            #expect(reply.status == 200, "\(reply.text)")
            let activities = try TestHTTP.state(port: server.port, path: "/activities").json()["value"]!.objectValue!
            let started = activities.members.first { $0.value["attributesType"] == "AdventureAttributes" }
            #expect(started?.value["source"] == "push")
            #expect(started?.value["pushToken"]?.stringValue?.count == 64)
            // An update sent to the push-to-start token, or a start to an activity token, is
            // accepted by APNs and ignored by the device (AP-8).
            #expect(try world.push(world.pushToStart, Self.update).status == 200)
            #expect(try world.push(world.activityToken, start).status == 200)
            let deliveries = try TestHTTP.state(port: server.port, path: "/apps/coffee/deliveries").json()["value"]!
            #expect(deliveries.arrayValue!.suffix(2).map { $0["reason"] } == ["event_not_for_token", "event_not_for_token"])
        }
    }

    @Test("with an admin token, the provider token must be it")
    func providerToken() async throws {
        var configuration = IsletConfiguration.testing()
        configuration.adminToken = "admin-token-0123456789"
        try await withRunningServer(configuration) { server in
            let auth = [("Authorization", "Bearer admin-token-0123456789")]
            let reply = try TestHTTP.request(
                port: server.port, "POST", "/v1/commands", headers: [("Content-Type", "application/json")] + auth,
                body: JSONValue.object([
                    "commands": .array([
                        Fixture.pauseClock, Fixture.device, Fixture.app, Fixture.request("a1", pushToken: true),
                    ])
                ]).encoded)
            let token = try reply.json()[pointer: "/results/3/pushToken"]!.stringValue!
            let world = World(port: server.port, pushToStart: "", activityToken: token)
            #expect(try world.push(token, Self.update).status == 403)
            #expect(try world.push(token, Self.update).json()["reason"] == "MissingProviderToken")
            #expect(
                try world.push(token, Self.update, extra: [("Authorization", "bearer some.jwt.value")]).json()["reason"]
                    == "InvalidProviderToken")
            #expect(try world.push(token, Self.update, extra: auth).status == 200)
        }
    }
}

func isUUID(_ text: String) -> Bool {
    text.split(separator: "-", omittingEmptySubsequences: false).map(\.count) == [8, 4, 4, 4, 12]
}
