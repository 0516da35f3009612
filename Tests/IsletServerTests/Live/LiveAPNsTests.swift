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

    @Test(
        "AP-1, AP-2, AP-3, AP-4, AP-5: refusals carry APNs reasons",
        arguments: [
            ("InvalidPushType", 400), ("MissingTopic", 400), ("BadTopic", 400), ("TopicDisallowed", 400),
            ("DeviceTokenNotForTopic", 400), ("BadPriority", 400), ("PayloadTooLarge", 413), ("PayloadEmpty", 400),
            ("BadDeviceToken", 400), ("Unregistered", 410), ("BadCollapseId", 400), ("BadExpirationDate", 400),
            ("BadMessageId", 400), ("MissingTimestamp", 400), ("BadEvent", 400), ("MissingStartField", 400),
            ("BadPayload", 400),
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
            case "BadPriority": reply = try world.push(token, Self.update, extra: [("apns-priority", "7")])
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
            case "BadExpirationDate": reply = try world.push(token, Self.update, extra: [("apns-expiration", "soon")])
            case "BadMessageId": reply = try world.push(token, Self.update, extra: [("apns-id", "not-a-uuid")])
            case "MissingTimestamp": reply = try world.push(token, #"{"aps":{"event":"update","content-state":{}}}"#)
            case "BadEvent": reply = try world.push(token, #"{"aps":{"timestamp":1,"event":"begin"}}"#)
            case "MissingStartField":
                reply = try world.push(
                    world.pushToStart, #"{"aps":{"timestamp":1,"event":"start","content-state":{}}}"#)
            default: reply = try world.push(token, "{not json")
            }
            #expect(reply.status == status, "\(reply.text)")
            #expect(try reply.json()["reason"] == .string(reason), "\(reply.text)")
            #expect(reply.headers["apns-id"] != nil)
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
            // An update sent to the push-to-start token, or a start to an activity token, is refused.
            #expect(try world.push(world.pushToStart, Self.update).status == 400)
            #expect(try world.push(world.activityToken, start).status == 400)
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
