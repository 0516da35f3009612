import IsletCore
import IsletTestSupport
import Testing

/// Issue 18's checked-arithmetic sweep: extreme values (0, −0, subnormals, ±huge, integers past
/// 2^53, NaN-like strings, dates at year 1 and 9999 and beyond) in every field of every command.
/// Each is refused with an error or accepted; nothing traps. An accepted one also survives the
/// next two days of the clock, a snapshot and its restore (so what is acknowledged replays), and
/// gives the same revision when applied again to a copy of the same world.
@Suite("Extreme values in every command field")
struct ExtremeValueTests {
    /// Swift's Double literals round (`9_007_199_254_740_993` is 2^53), so the values no Double
    /// holds are parsed from text, as they arrive: exact numbers (AP-8).
    static let numbers: [JSONValue] = [
        0, .number(-0.0), .number(5e-324), .number(2.2250738585072014e-308), .number(1.7976931348623157e308),
        .number(-1.7976931348623157e308), -1, .number(1e20), .number(-1e20),
        .number(4_294_967_296), .number(9.223372036854775807e18), .number(-9.223372036854775808e18), 0.5,
        .number(86400 * 365 * 10000),
    ] + ["9007199254740993", "1795560793900123456", "-9223372036854775809", "18446744073709551616", "1e-400",
         "0.10000000000000000001"].map(exactNumber)
    static let strings: [JSONValue] = [
        "", "NaN", "Infinity", "-Infinity", "1e400", "0001-01-01T00:00:00Z", "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59.999Z", "+275760-09-13T00:00:00Z", "2026-11-22T08:00:00+14:00", "2026-02-30T08:00:00Z",
        .string(String(repeating: "x", count: 10_000)), "\u{0}",
    ]
    static let others: [JSONValue] = [true, .null, [], [:], [[[[[[[[1]]]]]]]]]

    /// One valid command of every type, in a world that has what they name.
    static let templates: [JSONValue] = [
        ["type": "device.upsert", "id": "d2", "model": "iphone-15-pro", "appearance": "dark", "locked": true, "standby": false, "nightMode": false],
        ["type": "app.upsert", "id": "ride", "name": "Ride", "identity": ["tint": "#ff0000"], "frequentUpdates": true, "foreground": true],
        [
            "type": "activity.request", "id": "a2", "app": "coffee", "attributesType": "CoffeeDeliveryAttributes",
            "attributes": ["n": 1], "content": ["state": ["status": "x"], "staleDate": "2026-11-22T09:00:00Z", "relevanceScore": 50],
            "alert": ["title": "T", "body": "B"], "start": "2026-11-22T08:30:00Z", "timestamp": "2026-11-22T08:00:00Z",
        ],
        [
            "type": "activity.update", "id": "a1", "content": ["state": ["status": "y"], "staleDate": "2026-11-22T10:00:00Z", "relevanceScore": 10],
            "timestamp": "2026-11-22T08:00:01Z", "delivery": ["source": "push", "priority": 5, "apnsId": "x"],
        ],
        ["type": "activity.end", "id": "a1", "dismissalPolicy": ["after": "2026-11-22T09:00:00Z"], "timestamp": "2026-11-22T08:00:02Z"],
        ["type": "activity.dismiss", "id": "a1"],
        ["type": "island.press", "device": "d1", "activity": "a1"],
        ["type": "widget.upsert", "id": "w2", "app": "coffee", "kind": "news", "family": "systemSmall", "device": "d1", "configuration": ["c": 1]],
        [
            "type": "widget.setTimeline", "id": "w1",
            "entries": [["date": "2026-11-22T08:00:00Z", "content": ["t": 1], "relevance": ["score": 10, "duration": 600]]],
            "policy": ["after": "2026-11-22T09:00:00Z"],
        ],
        ["type": "widget.reload", "id": "w1", "reason": "app"],
        ["type": "widget.interact", "id": "w1", "action": "tap", "at": "2026-11-21T08:00:00Z"],
        ["type": "stack.upsert", "id": "s2", "device": "d1", "family": "systemSmall", "widgets": ["w1"], "smartRotate": true],
        ["type": "relevance.setWeights", "weights": ["habit": 2, "timeline": 1], "hysteresis": 0.1, "minDwellSeconds": 60],
        ["type": "clock.set", "mode": "virtual", "now": "2026-11-23T08:00:00Z", "rate": 2],
        ["type": "clock.advance", "seconds": 60],
        ["type": "clock.advance", "to": "2026-11-22T09:00:00Z"],
        ["type": "template.put", "app": "coffee", "target": "activity:CoffeeDeliveryAttributes", "slot": "lockScreen", "html": "<p>{{state.status}}</p>"],
        ["type": "channel.create", "app": "coffee", "storagePolicy": 1],
        [
            "type": "channel.broadcast", "app": "coffee", "channel": "CHANNEL", "event": "update", "content": ["state": ["status": "z"]],
            "timestamp": "2026-11-22T08:00:03Z", "expiration": "2026-11-22T12:00:00Z", "delivery": ["priority": 1],
        ],
        ["type": "widget.push", "app": "coffee", "contentChanged": true, "delivery": ["priority": 10]],
        [
            "type": "shortcut.upsert", "app": "coffee", "id": "order", "phrases": ["Order with ${applicationName}"],
            "intent": ["type": "liveActivity", "attributesType": "CoffeeDeliveryAttributes", "content": ["state": [:], "relevanceScore": 5]],
        ],
        ["type": "shortcut.run", "app": "coffee", "id": "order"],
    ]

    /// The world the templates run in: d1, coffee (in the background) with a1 and w1, a stack, a
    /// channel; returns the engine and the channel id.
    static func world() throws -> (Engine, String) {
        let start = Instant(secondsSinceEpoch: 1_795_334_400)
        var engine = Engine(renderer: TestRenderer(), at: start, clock: .virtual(now: start, atWall: start))
        let setUp: [JSONValue] = [
            ["type": "device.upsert", "id": "d1", "model": "iphone-15-pro"],
            ["type": "app.upsert", "id": "coffee", "name": "Coffee", "foreground": true],
            [
                "type": "activity.request", "id": "a1", "app": "coffee", "attributesType": "CoffeeDeliveryAttributes",
                "attributes": [:], "content": ["state": ["status": "received"]], "pushType": "token",
            ],
            ["type": "widget.upsert", "id": "w1", "app": "coffee", "kind": "weather", "family": "systemSmall", "device": "d1"],
            ["type": "stack.upsert", "id": "s1", "device": "d1", "family": "systemSmall", "widgets": ["w1"]],
            ["type": "channel.create", "app": "coffee", "storagePolicy": 1],
        ]
        let revision = try engine.apply(setUp, at: start)
        return (engine, try #require(revision.results[5]["id"]?.stringValue))
    }

    @Test("numbers the engine does not interpret come back exactly: document, patch and snapshot")
    func exactNumbersKept() throws {
        let (base, _) = try Self.world()
        var engine = base
        let big = exactNumber("1795560793900123456")
        let wall = engine.simulatedInstant(atWall: Instant(secondsSinceEpoch: 1_795_334_400))
        let revision = try engine.apply(
            [
                ["type": "activity.update", "id": "a1", "content": ["state": ["orderId": big, "tiny": exactNumber("1e-400")]]],
                [
                    "type": "widget.setTimeline", "id": "w1",
                    "entries": [["date": "2026-11-22T08:00:00Z", "content": ["ticket": big]]],
                ],
            ], at: wall)
        let patch = String(decoding: revision.encodedOps, as: UTF8.self)
        #expect(patch.contains("1795560793900123456") && patch.contains("1e-400") && !patch.contains("e+18"))
        #expect(engine.value(at: "/activities/a1/content/state/orderId") == big)
        let document = String(decoding: engine.documentBytes, as: UTF8.self)
        #expect(document.contains(#""orderId":1795560793900123456"#) && document.contains(#""ticket":1795560793900123456"#))
        #expect(!document.contains("e+18"))
        let restored = try Engine(snapshot: try JSONParser.stored.parse(engine.snapshotBytes), renderer: TestRenderer())
        #expect(restored.documentBytes == engine.documentBytes)
    }

    @Test("a world at the end of time (9999-12-31, deadlines past it) snapshots and restores byte for byte")
    func endOfTime() throws {
        let (base, channel) = try Self.world()
        var engine = base
        let wall = Instant(secondsSinceEpoch: 1_795_334_400)
        _ = try engine.apply([["type": "clock.advance", "to": "9999-12-31T20:00:00Z"]], at: wall)
        for command in Self.templates.map({ replacingChannel($0, channel) }) {
            _ = try? engine.apply([command], at: wall)
            _ = try engine.apply([["type": "clock.advance", "seconds": 600]], at: wall)
        }
        let last = try engine.apply([["type": "clock.advance", "seconds": 86_400]], at: wall)
        #expect(last.at == .latestWritable)
        let restored = try Engine(snapshot: try JSONParser.stored.parse(engine.snapshotBytes), renderer: TestRenderer())
        #expect(restored.documentBytes == engine.documentBytes)
    }

    @Test("every field of every command, and every config.set value, takes every extreme value without a trap")
    func sweep() throws {
        let (base, channel) = try Self.world()
        let values = Self.numbers + Self.strings + Self.others
        var accepted = 0
        var refused = 0
        var commands: [JSONValue] = Self.templates.map { replacingChannel($0, channel) }
        for name in base.value(at: "/config")?.objectValue?.members.map(\.key) ?? [] {
            commands.append(["type": "config.set", "values": .object([name: 1])])
        }
        #expect(commands.count > 40)
        for template in commands {
            for path in leaves(of: template) where path != ["type"] {
                for value in values {
                    let command = replacing(template, at: path, with: value)
                    var engine = base
                    let wall = engine.simulatedInstant(atWall: Instant(secondsSinceEpoch: 1_795_334_400))
                    do {
                        let revision = try engine.apply([command], at: wall)
                        accepted += 1
                        try self.check(accepted: command, revision: revision, engine: engine, base: base, at: wall)
                    } catch {
                        refused += 1
                        #expect(engine.rev == base.rev, "a refused \(command) changed the world")
                    }
                }
            }
        }
        print("extreme values: \(accepted) commands accepted, \(refused) refused, none trapped")
        #expect(accepted > 0 && refused > 0)
    }

    /// An accepted command: the same revision again on a copy, two more days of the clock, and
    /// a snapshot that restores to the same document and replays the next day identically.
    private func check(accepted command: JSONValue, revision: Revision, engine: Engine, base: Engine, at wall: Instant) throws {
        var again = base
        #expect(try again.apply([command], at: wall) == revision, "\(command) did not apply the same way twice")
        var later = engine
        do {
            _ = try later.apply([["type": "clock.advance", "seconds": 172_800] as JSONValue], at: wall)
        } catch {
            // A clock running (clock.set with a rate) refuses clock.advance: that is an answer.
            #expect(error.code == .conflict || error.code == .invalidArgument, "\(command): \(error)")
        }
        var restored = try Engine(snapshot: try JSONParser().parse(engine.snapshotBytes), renderer: TestRenderer())
        #expect(restored.documentBytes == engine.documentBytes, "\(command): the restored document differs")
        var original = engine
        let next = Instant(secondsSinceEpoch: 1_795_334_400 + 86_400)
        #expect(restored.advance(to: next) == original.advance(to: next), "\(command): the restored engine diverged")
    }
}

/// A number as the parser reads it from `text`.
private func exactNumber(_ text: String) -> JSONValue {
    try! JSONParser.input.parse(text)
}

/// The paths of every leaf (a value that is not an object or array, or an empty one) of `value`.
private func leaves(of value: JSONValue, at path: [String] = []) -> [[String]] {
    switch value {
    case .object(let object) where !object.members.isEmpty:
        return object.members.flatMap { leaves(of: $0.value, at: path + [$0.key]) }
    case .array(let array) where !array.isEmpty:
        return array.indices.flatMap { leaves(of: array[$0], at: path + [String($0)]) }
    default:
        return [path]
    }
}

/// `value` with the leaf at `path` replaced.
private func replacing(_ value: JSONValue, at path: [String], with new: JSONValue) -> JSONValue {
    guard let head = path.first else { return new }
    let rest = Array(path.dropFirst())
    switch value {
    case .object(var object):
        object[head] = replacing(object[head] ?? .null, at: rest, with: new)
        return .object(object)
    case .array(var array):
        guard let index = Int(head), array.indices.contains(index) else { return value }
        array[index] = replacing(array[index], at: rest, with: new)
        return .array(array)
    default:
        return value
    }
}

private func replacingChannel(_ value: JSONValue, _ channel: String) -> JSONValue {
    value["channel"] == "CHANNEL" ? replacing(value, at: ["channel"], with: .string(channel)) : value
}
