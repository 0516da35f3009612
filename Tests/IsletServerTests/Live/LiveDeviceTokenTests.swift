import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

/// LA-15 through the APNs-style ingress: a push-to-start reaches the device whose token it names.
@Suite("APNs push-to-start per device")
struct LiveDeviceTokenTests {
    static func start(type: String) -> String {
        #"{"aps":{"timestamp":1795766500,"event":"start","input-push-token":1,"content-state":{"status":"received"},"attributes-type":"\#(type)","attributes":{"coffeeName":"Latte"},"alert":{"title":"Order placed","body":"Latte"}}}"#
    }

    func push(port: Int, _ token: String, _ body: String) throws -> TestHTTPResponse {
        try TestHTTP.request(
            port: port, "POST", "/3/device/\(token)",
            headers: [("apns-push-type", "liveactivity"), ("apns-topic", "coffee.push-type.liveactivity")],
            body: Array(body.utf8))
    }

    @Test("LA-15 a start sent to a device's token runs on that device; the app's revision-1 token on the default device; a rotated token is 410")
    func startsOnTheTokensDevice() async throws {
        try await withRunningServer { server in
            let world: [JSONValue] = [
                Fixture.pauseClock, Fixture.device, ["type": "device.upsert", "id": "d2", "model": "iphone-16-pro"],
                ["type": "app.upsert", "id": "coffee", "attributesTypes": ["CoffeeDeliveryAttributes"]],
            ]
            let results = try TestHTTP.commands(port: server.port, world).json()["results"]!
            let legacy = try #require(results[pointer: "/3/pushToStartToken"]?.stringValue)
            let tokens = try TestHTTP.state(port: server.port, path: "/apps/coffee/pushToStartTokens").json()["value"]!
            let d2 = try #require(tokens[pointer: "/d2/CoffeeDeliveryAttributes"]?.stringValue)
            #expect(try self.push(port: server.port, d2, Self.start(type: "CoffeeDeliveryAttributes")).status == 200)
            #expect(try self.push(port: server.port, legacy, Self.start(type: "CoffeeDeliveryAttributes")).status == 200)
            let activities = try TestHTTP.state(port: server.port, path: "/activities").json()["value"]!.objectValue!
            let devices = activities.members.map { $0.value["device"]?.stringValue ?? "" }.sorted()
            #expect(devices == ["d1", "d2"])
            let onD2 = try TestHTTP.state(port: server.port, path: "/devices/d2/scene/lockScreen/activities").json()
            #expect(onD2["value"]?.arrayValue?.count == 1)
            // Rotating hands out a new token; the old one answers 410 Unregistered.
            let rotated = try TestHTTP.commands(
                port: server.port,
                [["type": "app.rotatePushToStartToken", "app": "coffee", "attributesType": "CoffeeDeliveryAttributes", "device": "d2"]]
            ).json()["results"]!
            let new = try #require(rotated[pointer: "/0/pushToStartToken"]?.stringValue)
            let old = try self.push(port: server.port, d2, Self.start(type: "CoffeeDeliveryAttributes"))
            #expect(old.status == 410, "\(old.text)")
            #expect(try self.push(port: server.port, new, Self.start(type: "CoffeeDeliveryAttributes")).status == 200)
        }
    }
}
