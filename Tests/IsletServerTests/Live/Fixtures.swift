import IsletCore
import IsletServer
import IsletTestSupport

/// Commands shared by the live tests: a paused virtual clock, one device, one app in the
/// foreground, one coffee activity.
enum Fixture {
    static let pauseClock: JSONValue = [
        "type": "clock.set", "mode": "virtual", "now": "2026-11-22T08:00:00Z", "rate": 0,
    ]
    static let device: JSONValue = ["type": "device.upsert", "id": "d1", "model": "iphone-15-pro"]
    static let app: JSONValue = ["type": "app.upsert", "id": "coffee", "name": "Coffee", "foreground": true]

    static func request(_ id: String, status: String = "received", pushToken: Bool = false, channel: String? = nil)
        -> JSONValue
    {
        var command: JSONObject = [
            "type": "activity.request", "id": .string(id), "app": "coffee",
            "attributesType": "CoffeeDeliveryAttributes",
            "attributes": ["orderNumber": "A-1"], "content": ["state": ["status": .string(status), "eta": 5]],
        ]
        if pushToken { command["pushType"] = "token" }
        if let channel { command["pushType"] = ["channel": .string(channel)] }
        return .object(command)
    }

    static func update(_ id: String, status: String, score: Double? = nil) -> JSONValue {
        var content: JSONObject = ["state": ["status": .string(status), "eta": 3]]
        if let score { content["relevanceScore"] = .number(score) }
        return ["type": "activity.update", "id": .string(id), "content": .object(content)]
    }

    /// The usual world: clock paused, d1, coffee, activity a1.
    static let world: [JSONValue] = [pauseClock, device, app, request("a1")]
}

extension TestHTTPResponse {
    /// The `rev` of a reply body.
    var rev: UInt64? { (try? self.json())?["rev"]?.numberValue.map { UInt64($0) } }
}
