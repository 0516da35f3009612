import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

/// Broadcast channels, channel management and widget pushes over HTTP/1.1, answered as APNs
/// answers (reference §2.1, §2.4, §2.5 rules 2, 5 and 9; UN-CHAN, UN-BCAST, WK-PUSH).
@Suite("APNs broadcasts, channels and widget pushes")
struct LiveBroadcastTests {
    static let requestID = "5b5a3f0c-8a4c-4a7e-9d3c-2f1e0a9b8c7d"
    static let update = #"{"aps":{"timestamp":1795766500,"event":"update","content-state":{"status":"goal"}}}"#

    struct World {
        let port: Int
        let pushToStart: String
        let widgetToken: String

        func createChannel(_ body: String = #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#, app: String = "coffee")
            throws -> TestHTTPResponse
        {
            try TestHTTP.request(
                port: self.port, "POST", "/1/apps/\(app)/channels", headers: [("apns-request-id", LiveBroadcastTests.requestID)],
                body: Array(body.utf8))
        }

        func channelRequest(_ method: String, _ channel: String?, path: String = "/1/apps/coffee/channels")
            throws -> TestHTTPResponse
        {
            try TestHTTP.request(port: self.port, method, path, headers: channel.map { [("apns-channel-id", $0)] } ?? [])
        }

        func broadcast(_ channel: String?, _ body: String = LiveBroadcastTests.update, extra: [(String, String)] = [])
            throws -> TestHTTPResponse
        {
            var headers = [("apns-push-type", "liveactivity")]
            if let channel { headers.append(("apns-channel-id", channel)) }
            return try TestHTTP.request(
                port: self.port, "POST", "/4/broadcasts/apps/coffee", headers: headers + extra, body: Array(body.utf8))
        }

        func rev() throws -> UInt64? { try TestHTTP.state(port: self.port, path: "/clock").rev }

        func value(_ path: String) throws -> JSONValue? { try TestHTTP.state(port: self.port, path: path).json()["value"] }
    }

    static func world(_ port: Int) throws -> World {
        let results = try TestHTTP.commands(
            port: port,
            [
                Fixture.pauseClock, Fixture.device, Fixture.app,
                ["type": "config.set", "values": ["maxActivitiesPerApp": 10]],
                ["type": "widget.upsert", "id": "w1", "app": "coffee", "kind": "weather", "family": "systemSmall", "device": "d1"],
            ]
        ).json()["results"]!
        return World(
            port: port, pushToStart: results[pointer: "/2/pushToStartToken"]!.stringValue!,
            widgetToken: results[pointer: "/2/widgetPushToken"]!.stringValue!)
    }

    @Test("a channel's life: created (201, apns-channel-id), read, listed, subscribed by a request and a push-to-start, broadcast to, deleted (204)")
    func lifecycle() async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let created = try world.createChannel()
            #expect(created.status == 201, "\(created.text)")
            #expect(created.headers["apns-request-id"] == Self.requestID)
            let channel = try #require(created.headers["apns-channel-id"])
            #expect(isChannelID(channel))
            let read = try world.channelRequest("GET", channel)
            #expect(read.status == 200, "\(read.text)")
            #expect(try read.json() == ["message-storage-policy": 1, "push-type": "LiveActivity"])
            #expect(read.headers["apns-request-id"].map(isUUID) == true)
            let listed = try world.channelRequest("GET", nil, path: "/1/apps/coffee/all-channels")
            #expect(try listed.json() == ["channels": [.string(channel)]])

            #expect(try TestHTTP.commands(port: server.port, [Fixture.request("a1", channel: channel)]).status == 200)
            let start = #"{"aps":{"timestamp":1795766400,"event":"start","input-push-channel":"\#(channel)","#
                + #""attributes-type":"CoffeeDeliveryAttributes","attributes":{"orderNumber":"P-1"},"#
                + #""content-state":{"status":"received"},"alert":{"title":"Order","body":"Started"}}}"#
            let pushed = try TestHTTP.request(
                port: server.port, "POST", "/3/device/\(world.pushToStart)",
                headers: [("apns-push-type", "liveactivity"), ("apns-topic", "coffee.push-type.liveactivity")],
                body: Array(start.utf8))
            #expect(pushed.status == 200, "\(pushed.text)")
            #expect(try world.value("/apps/coffee/channels/\(channel)/subscribers") == 2)

            let sent = try world.broadcast(
                channel, extra: [("apns-priority", "10"), ("apns-id", "EABEAE54-14A8-11E5-B60B-1697F925EC7B")])
            #expect(sent.status == 200, "\(sent.text)")
            #expect(sent.headers["apns-id"] == "eabeae54-14a8-11e5-b60b-1697f925ec7b")
            let activities = try #require(try world.value("/activities")?.objectValue)
            #expect(activities.count == 2)
            for member in activities.members { #expect(member.value[pointer: "/content/state/status"] == "goal") }
            let record = try #require(try world.value("/apps/coffee/deliveries")?.arrayValue?.last)
            #expect(record["channel"] == .string(channel))
            #expect(record["appliedTo"] == 2)
            #expect(record["apnsId"] == "eabeae54-14a8-11e5-b60b-1697f925ec7b")

            let deleted = try world.channelRequest("DELETE", channel)
            #expect(deleted.status == 204, "\(deleted.text)")
            let after = try world.broadcast(channel)
            #expect(after.status == 400)
            #expect(try after.json()["reason"] == "ChannelNotRegistered")
            #expect(try world.channelRequest("GET", channel).json()["reason"] == "ChannelNotRegistered")
            #expect(try world.channelRequest("GET", nil, path: "/1/apps/coffee/all-channels").json() == ["channels": []])
        }
    }

    @Test("AP-8 a broadcast the devices ignore (a start, complete or not; no timestamp) is 200 and one ignored delivery for the channel")
    func broadcastIgnored() async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let channel = try #require(try world.createChannel().headers["apns-channel-id"])
            let start = #"{"aps":{"timestamp":1795766500,"event":"start","attributes-type":"A","attributes":{},"content-state":{},"alert":"x"}}"#
            let partialStart = #"{"aps":{"timestamp":1795766500,"event":"start","content-state":{"n":1}}}"#
            for (payload, reason) in [
                (start, "event_invalid"), (partialStart, "event_invalid"), (#"{"aps":{"event":"update"}}"#, "timestamp_missing"),
            ] {
                let rev = try world.rev()
                let reply = try world.broadcast(channel, payload)
                #expect(reply.status == 200, "\(reply.text)")
                #expect(try world.rev() == rev.map { $0 + 1 })
                let record = try #require(try world.value("/apps/coffee/deliveries")?.arrayValue?.last)
                #expect(record["outcome"] == "ignored" && record["reason"] == .string(reason), "\(record)")
                #expect(record["channel"] == .string(channel))
            }
        }
    }

    @Test(
        "broadcast refusals carry APNs reasons and change nothing",
        arguments: [
            ("MissingChannelId", 400), ("BadChannelId", 400), ("ChannelNotRegistered", 400),
            ("InvalidPushType", 400), ("MissingPushType", 400), ("BadPriority", 400), ("PayloadTooLarge", 413),
            ("PayloadEmpty", 400), ("BadExpirationDate", 400),
        ])
    func broadcastRefusals(reason: String, status: Int) async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let channel = try #require(try world.createChannel().headers["apns-channel-id"])
            let rev = try world.rev()
            let reply: TestHTTPResponse
            switch reason {
            case "MissingChannelId": reply = try world.broadcast(nil)
            case "BadChannelId": reply = try world.broadcast("not base64!")
            case "ChannelNotRegistered": reply = try world.broadcast("dHN0LXNyY2gtY2hubA==")
            case "InvalidPushType":
                reply = try TestHTTP.request(
                    port: server.port, "POST", "/4/broadcasts/apps/coffee",
                    headers: [("apns-push-type", "alert"), ("apns-channel-id", channel)], body: Array(Self.update.utf8))
            case "MissingPushType":
                reply = try TestHTTP.request(
                    port: server.port, "POST", "/4/broadcasts/apps/coffee", headers: [("apns-channel-id", channel)],
                    body: Array(Self.update.utf8))
            case "BadPriority": reply = try world.broadcast(channel, extra: [("apns-priority", "7")])
            case "PayloadTooLarge":
                reply = try world.broadcast(channel, #"{"aps":{"pad":""# + String(repeating: "x", count: 4100) + #""}}"#)
            case "PayloadEmpty": reply = try world.broadcast(channel, "")
            default: reply = try world.broadcast(channel, extra: [("apns-expiration", "-1")])
            }
            #expect(reply.status == status, "\(reply.text)")
            #expect(try reply.json()["reason"] == .string(reason))
            #expect(reply.headers["apns-id"].map(isUUID) == true)
            #expect(try world.rev() == rev)
        }
    }

    @Test(
        "channel management refusals carry APNs reasons and change nothing",
        arguments: [
            "MissingPushType", "InvalidPushType", "BadMessageStoragePolicy", "TopicDisallowed", "BadPayload",
            "MissingChannelId", "BadChannelId", "ChannelNotRegistered",
        ])
    func managementRefusals(reason: String) async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let rev = try world.rev()
            let reply: TestHTTPResponse
            switch reason {
            case "MissingPushType": reply = try world.createChannel(#"{"message-storage-policy":0}"#)
            case "InvalidPushType": reply = try world.createChannel(#"{"message-storage-policy":0,"push-type":"Alert"}"#)
            case "BadMessageStoragePolicy":
                reply = try world.createChannel(#"{"message-storage-policy":2,"push-type":"LiveActivity"}"#)
            case "TopicDisallowed": reply = try world.createChannel(app: "com.example.unknown")
            case "BadPayload": reply = try world.createChannel("[1,")
            case "MissingChannelId": reply = try world.channelRequest("DELETE", nil)
            case "BadChannelId": reply = try world.channelRequest("GET", "%%%")
            default: reply = try world.channelRequest("DELETE", "dHN0LXNyY2gtY2hubA==")
            }
            #expect(reply.status == 400, "\(reply.text)")
            #expect(try reply.json()["reason"] == .string(reason))
            #expect(reply.headers["apns-request-id"] != nil)
            #expect(try world.rev() == rev)
        }
    }

    @Test("WK-4 a widget push (apns-push-type widgets) reloads the app's widgets; each token answers only its own topic")
    func widgetPush() async throws {
        try await withRunningServer { server in
            let world = try Self.world(server.port)
            let token = world.widgetToken
            func push(_ token: String, type: String, topic: String, _ body: String = #"{"aps":{"content-changed":true}}"#)
                throws -> TestHTTPResponse
            {
                try TestHTTP.request(
                    port: server.port, "POST", "/3/device/\(token)", headers: [("apns-push-type", type), ("apns-topic", topic)],
                    body: Array(body.utf8))
            }
            let reply = try push(token, type: "widgets", topic: "coffee.push-type.widgets")
            #expect(reply.status == 200, "\(reply.text)")
            #expect(try world.value("/widgets/w1/reload/lastReason") == "push")
            let record = try #require(try world.value("/apps/coffee/deliveries")?.arrayValue?.last)
            #expect(record["event"] == "widgets")
            #expect(record["apnsId"] == .string(reply.headers["apns-id"] ?? ""))
            let rev = try world.rev()
            let refusals: [(TestHTTPResponse, String)] = [
                (try push(token, type: "liveactivity", topic: "coffee.push-type.liveactivity", Self.update), "DeviceTokenNotForTopic"),
                (try push(world.pushToStart, type: "widgets", topic: "coffee.push-type.widgets"), "DeviceTokenNotForTopic"),
                (try push(token, type: "widgets", topic: "coffee.push-type.liveactivity"), "BadTopic"),
                (try push(token, type: "widgets", topic: "coffee"), "TopicDisallowed"),
                (try push(token, type: "widgets", topic: "coffee.push-type.widgets", #"{"aps":"#), "BadPayload"),
            ]
            for (reply, reason) in refusals {
                #expect(reply.status == 400, "\(reason): \(reply.text)")
                #expect(try reply.json()["reason"] == .string(reason))
            }
            #expect(try world.rev() == rev)
            // AP-8: a content-changed that is not a boolean is the device's to ignore.
            let ignored = try push(token, type: "widgets", topic: "coffee.push-type.widgets", #"{"aps":{"content-changed":"yes"}}"#)
            #expect(ignored.status == 200, "\(ignored.text)")
            let last = try #require(try world.value("/apps/coffee/deliveries")?.arrayValue?.last)
            #expect(last["event"] == "widgets" && last["outcome"] == "ignored" && last["reason"] == "payload_invalid")
            // So is an aps that is not an object, or a repeated key: a widgets push all the same.
            for body in [#"{"aps":"x"}"#, #"{"aps":{"content-changed":true,"content-changed":true}}"#] {
                let reply = try push(token, type: "widgets", topic: "coffee.push-type.widgets", body)
                #expect(reply.status == 200, "\(reply.text)")
                let record = try #require(try world.value("/apps/coffee/deliveries")?.arrayValue?.last)
                #expect(record["event"] == "widgets" && record["reason"] == "payload_invalid", "\(body): \(record)")
            }
        }
    }

    @Test("a broadcast finds the simulation that holds its channel; channel management goes where the path says")
    func simulations() async throws {
        try await withRunningServer { server in
            _ = try Self.world(server.port)
            let made = try TestHTTP.postJSON(port: server.port, "/v1/simulations", #"{"id":"h1"}"#)
            #expect(made.status == 201, "\(made.text)")
            _ = try TestHTTP.commands(port: server.port, [Fixture.pauseClock, Fixture.device, Fixture.app], simulation: "h1")
            let created = try TestHTTP.request(
                port: server.port, "POST", "/v1/simulations/h1/1/apps/coffee/channels",
                body: Array(#"{"message-storage-policy":0,"push-type":"LiveActivity"}"#.utf8))
            #expect(created.status == 201, "\(created.text)")
            let channel = try #require(created.headers["apns-channel-id"])
            let request = Fixture.request("h", channel: channel)
            #expect(try TestHTTP.commands(port: server.port, [request], simulation: "h1").status == 200)
            let sent = try TestHTTP.request(
                port: server.port, "POST", "/4/broadcasts/apps/coffee",
                headers: [("apns-push-type", "liveactivity"), ("apns-channel-id", channel)], body: Array(Self.update.utf8))
            #expect(sent.status == 200, "\(sent.text)")
            let status = try TestHTTP.state(port: server.port, path: "/activities/h/content/state/status", simulation: "h1")
            #expect(try status.json()["value"] == "goal")
            let inDefault = try TestHTTP.request(
                port: server.port, "GET", "/v1/simulations/default/1/apps/coffee/channels",
                headers: [("apns-channel-id", channel)])
            #expect(try inDefault.json()["reason"] == "ChannelNotRegistered")
        }
    }
}
