import Foundation
import IsletCore
import Testing

/// A log written by the revision-1 engine replays with today's engine, and its documents stay
/// what they were except where a revision-2 rule changed them (see revision-1/README.md).
@Suite struct GoldenLogTests {
    /// A difference the revision allows: an operation kind on paths matching `pattern`
    /// (`*` is one path segment), with only the new `value` when one is given, and the rule or
    /// addition that explains it.
    struct Allowed {
        var kind: PatchOperation.Kind
        var pattern: [Substring]
        var value: JSONValue?
        var reason: String

        init(_ kind: PatchOperation.Kind, _ pattern: String, value: JSONValue? = nil, _ reason: String) {
            self.kind = kind
            self.pattern = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { $0 }
            self.value = value
            self.reason = reason
        }

        func matches(_ operation: PatchOperation) -> Bool {
            let segments = Array(
                operation.path.description.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
            guard operation.kind == self.kind, segments.count == self.pattern.count else { return false }
            if let value = self.value, operation.value != value { return false }
            return zip(segments, self.pattern).allSatisfy { $1 == "*" || $0 == $1 }
        }
    }

    static let allowed: [Allowed] = [
        Allowed(.add, "/devices/*/alwaysOnDisplay", "new field: the model's Always-On display (LA-17)"),
        Allowed(.add, "/devices/*/iosVersion", "new field: devices of old logs run the newest iOS"),
        Allowed(.add, "/devices/*/timeZone", "new field (SS-7): devices of old logs live in UTC, as before"),
        Allowed(.add, "/devices/*/foregroundApp", "new field (LA-16): no app is on an old log's screens"),
        Allowed(.add, "/activities/*/device", "new field (LA-15): an old log's activities run on its default device"),
        Allowed(.add, "/apps/*/attributesTypes", "new field: old logs' apps declare no attributes types"),
        Allowed(.add, "/apps/*/pushToStartTokens", "new field: so they have no per-type push-to-start tokens"),
        // LA-15: an old log's activities run on its default device (the first by id), so the other
        // devices' scenes lose them: Lock Screen entries go, islands show less or nothing.
        Allowed(
            .remove, "/devices/*/scene/lockScreen/activities/*", "LA-15: only the activity's device shows it"),
        Allowed(
            .replace, "/devices/*/scene/lockScreen/activities/*",
            "LA-15: the same removals, where the diff shifts the remaining entries down"),
        Allowed(
            .remove, "/devices/*/scene/island/minimal/*", "LA-15: fewer apps in another device's island"),
        Allowed(
            .replace, "/devices/*/scene/island/mode", "LA-15: fewer activities in another device's island"),
        Allowed(
            .replace, "/devices/*/scene/island/width", "LA-15: an island with less to show"),
        Allowed(
            .replace, "/devices/*/scene/island/compact", "LA-15: another device's island shows its own"),
        Allowed(
            .replace, "/devices/*/scene/standby", "LA-15: StandBy shows the device's own top activity"),
        Allowed(
            .replace, "/activities/*/content/relevanceScore", value: 0,
            "LA-18: an update without relevanceScore now means 0, not the previous score"),
        // WK-10: every widget asked its provider when it was added, once more than before.
        Allowed(.replace, "/widgets/*/reload/count", "WK-10"),
        Allowed(.replace, "/widgets/*/reload/lastAt", "WK-10"),
        Allowed(.replace, "/widgets/*/reload/lastReason", "WK-10"),
        Allowed(.replace, "/widgets/*/reload/pending", "WK-10"),
        Allowed(.replace, "/widgets/*/reload/pendingSince", "WK-10"),
        Allowed(.add, "/devices/*/alwaysOn", "new switch (LA-17): old logs never dim the display"),
        Allowed(.add, "/devices/*/standbyView", "new switch (PR-11): fullScreen, revision 1's only StandBy view"),
        Allowed(.add, "/devices/*/scene/alwaysOn", "new field: whether the Always-On Lock Screen shows (LA-17)"),
        Allowed(.add, "/devices/*/scene/lockScreen/appearance", "new field: the Lock Screen's appearance (LA-17)"),
        Allowed(.add, "/devices/*/scene/standby/view", "new field: StandBy's view of the activity (PR-11)"),
        Allowed(
            .replace, "/devices/*/scene/animations/enabled", value: true,
            "LA-14 revised by LA-17: StandBy's Night Mode (locked) is not Always-On, so animations run"),
    ]

    static func lines(_ name: String, from file: String = #filePath) throws -> [JSONValue] {
        let url = URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent("revision-1/\(name)")
        let text = try String(contentsOf: url, encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONParser.stored.parse(String($0)) }
    }

    @Test("the revision-1 golden log replays, and its documents differ only where a revision-2 rule says so")
    func replay() throws {
        let log = try Self.lines("log.jsonl")
        let documents = try Self.lines("documents.jsonl")
        let start = try Instant(rfc3339: "2026-11-22T00:00:00Z")
        var engine = Engine(renderer: TestRenderer(), at: start, clock: .virtual(now: start, rate: 0, atWall: start))
        var checkpoints = documents.makeIterator()
        var next = checkpoints.next()
        for (index, batch) in log.enumerated() {
            _ = try engine.apply(try #require(batch.arrayValue), at: start, admission: .logged)
            while let checkpoint = next, checkpoint["batch"]?.numberValue == Double(index + 1) {
                let old = try #require(checkpoint["document"])
                let unexplained = JSONPatch.diff(from: old, to: engine.documentValue).filter { operation in
                    !Self.allowed.contains { $0.matches(operation) }
                }
                #expect(
                    unexplained.isEmpty,
                    "after batch \(index + 1): \(unexplained.count) differences, first \(unexplained.prefix(10))")
                try Self.expectLockScreensFiltered(old: old, new: engine, batch: index + 1)
                next = checkpoints.next()
            }
        }
        #expect(next == nil, "every golden document was compared")
    }

    /// LA-15, exactly: each device's Lock Screen lists what it listed before, less the activities
    /// that now belong to another device, in the same order.
    static func expectLockScreensFiltered(old: JSONValue, new engine: Engine, batch: Int) throws {
        for device in try #require(old["devices"]?.objectValue).members {
            let before = try #require(device.value["scene"]?["lockScreen"]?["activities"]?.arrayValue)
            let kept = before.filter { id in
                let owner = engine.value(at: JSONPointer(tokens: ["activities", id.stringValue ?? "", "device"]))
                return owner == .null || owner?.stringValue == device.key
            }
            let now = engine.value(at: JSONPointer(tokens: ["devices", device.key, "scene", "lockScreen", "activities"]))
            #expect(now == .array(kept), "after batch \(batch), \(device.key)")
        }
    }
}
