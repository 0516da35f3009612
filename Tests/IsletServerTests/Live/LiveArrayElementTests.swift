import IsletCore
import IsletServer
import IsletTestSupport
import Testing

/// Subscriptions whose path goes through an array element (`…/activities/0`): the element at an
/// index changes when one before it comes or goes, which no narrowed patch can say.
@Suite("Stream subscriptions through array elements")
struct LiveArrayElementTests {
    static let order = "/devices/phone/scene/lockScreen/activities"

    @Test("a subscription through an array element follows the array's shifts (a snapshot, reason array_element, at each change of the array); resuming it gives such a snapshot too")
    func followsShifts() async throws {
        try await withRunningServer { server in
            let port = server.port
            _ = try TestHTTP.commands(
                port: port,
                [
                    Fixture.pauseClock, ["type": "device.upsert", "id": "phone"],
                    ["type": "app.upsert", "id": "x", "foreground": true],
                ]
                    + (0..<3).map { index -> JSONValue in
                        [
                            "type": "activity.request", "id": .string("a\(index)"), "app": "x", "attributesType": "T",
                            "content": ["state": ["v": .number(Double(index))], "relevanceScore": .number(Double(10 - index))],
                        ]
                    })
            let client = try TestWebSocketClient.connect(port: port)
            _ = try client.readJSON()
            var mirror = StreamMirror()
            let paths = [Self.order + "/0", Self.order + "/1", Self.order + "/2", Self.order + "/0/x", Self.order, ""]
            for (index, path) in paths.enumerated() {
                mirror.expect("s\(index)", path: try JSONPointer(parsing: path))
                try client.subscribe("s\(index)", path: path)
            }
            for _ in paths { _ = try client.read(until: "snapshot") { try mirror.apply($0) } }
            #expect(mirror.value(of: "s0") == "a0")

            func check(_ what: String, rev: UInt64) throws {
                // Every subscription of the array's elements gets its snapshot at (or after) rev.
                var pending = Set(["s0", "s1", "s2", "s3"])
                while !pending.isEmpty || mirror.rev < rev {
                    let message = try client.readJSON()
                    try mirror.apply(message)
                    if message["type"] == "snapshot", let sub = message["sub"]?.stringValue {
                        #expect(message["reason"] == "array_element", "\(what): \(message)")
                        pending.remove(sub)
                    }
                }
                for (index, path) in paths.enumerated() {
                    let reply = try TestHTTP.state(port: port, path: path)
                    let state = try reply.json()
                    // A path that does not exist is 404 (absent: null in a mirror).
                    #expect(reply.status == 404 || state["rev"] == .number(Double(rev)), "\(what): \(path)")
                    let expected = reply.status == 404 || state["value"] == .null ? nil : state["value"]
                    let mirrored = mirror.value(of: "s\(index)") == .null ? nil : mirror.value(of: "s\(index)")
                    #expect(mirrored == expected, "\(what): \(path)")
                }
            }
            let dismissed = try TestHTTP.commands(port: port, [["type": "activity.dismiss", "id": "a0"]])
            try check("a0 dismissed: a1 and a2 move up", rev: try #require(dismissed.rev))
            #expect(mirror.value(of: "s0") == "a1" && mirror.value(of: "s2") == .null)
            let front = try TestHTTP.commands(
                port: port,
                [
                    [
                        "type": "activity.request", "id": "a9", "app": "x", "attributesType": "T",
                        "content": ["state": [:], "relevanceScore": 100],
                    ]
                ])
            try check("a9 first: the others move down", rev: try #require(front.rev))
            #expect(mirror.value(of: "s0") == "a9" && mirror.value(of: "s2") == "a2")

            let epoch = try #require(try TestHTTP.state(port: port).json()["epoch"]?.stringValue)
            let again = try TestWebSocketClient.connect(port: port)
            _ = try again.readJSON()
            try again.subscribe("r", path: Self.order + "/1", since: (epoch, 1))
            let resumed = try again.read(until: "snapshot")
            #expect(resumed["reason"] == "array_element" && resumed["value"] == "a1", "\(resumed)")
        }
    }
}
