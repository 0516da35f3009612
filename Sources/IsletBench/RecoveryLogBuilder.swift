import IsletCore
import IsletRender
import IsletServer
import IsletStore
import Logging

/// Builds the command log of `islet bench recovery`: every revision produced by the engine
/// from a realistic stream of single-command batches, written as a server writes it (records in
/// groups, a snapshot of the engine and stream history every `snapshotEvery` revisions).
enum RecoveryLogBuilder {
    /// What was written.
    struct Report: Sendable {
        var revisions: UInt64
        var snapshots: Int
        var lastSnapshot: UInt64
        var snapshotBytes: Int
    }

    /// The first revision creates the world (3 devices, 3 apps in the foreground, `activities`
    /// coffee deliveries on the two island devices, so that both have an island to press, LA-15);
    /// then, per revision: 85 % an `activity.update` (new status, ETA and
    /// relevance score), 5 % a device lock toggle, 5 % an app foreground toggle, 4 % a press on
    /// the Dynamic Island (it expands, then collapses at a deadline), 1 % a one-second
    /// `clock.advance`. The engine runs on a paused virtual clock. No snapshot is written at the
    /// very end, so startup replays a whole interval: the worst case, a server killed just before
    /// its next snapshot.
    /// - Parameter progress: called every 100,000 revisions with the revision reached.
    static func build(
        path: String, revisions: Int, snapshotEvery: Int, activities: Int = 8,
        configuration: IsletConfiguration = IsletConfiguration(), progress: (UInt64) -> Void = { _ in }
    ) throws -> Report {
        let log = try CommandLog(
            path: path, durability: .normal, logger: Logger(label: "islet.bench") { _ in SwiftLogNoOpLogHandler() })
        let start = try Instant(rfc3339: "2026-11-22T08:00:00Z")
        var engine = Engine(
            renderer: MustacheRenderer(), at: start, clock: .virtual(now: start, rate: 0, atWall: start))
        var history = RevisionHistory(
            maxRevisions: configuration.stream.historyRevisions, maxBytes: configuration.stream.historyBytes)
        var report = Report(revisions: 0, snapshots: 0, lastSnapshot: 0, snapshotBytes: 0)
        func snapshot() throws {
            let payload = SnapshotPayload(engine: engine.snapshotBytes, history: history.allEntries).encoded()
            try log.writeSnapshot(sequence: engine.rev, instant: start.millisecondsSinceEpoch, payload: payload)
            report.snapshots += 1
            report.lastSnapshot = engine.rev
            report.snapshotBytes = payload.count
        }
        try snapshot()
        var pending: [LogRecord] = []
        var random: UInt64 = 0x1234_5678
        for index in 0..<revisions {
            let commands = index == 0 ? self.world(activities: activities) : [self.command(index, &random, activities)]
            let revision = try engine.apply(commands, at: start)
            pending.append(
                LogReplay.record(RevisionRecord(cause: .commands(commands), wall: start, revision: revision)))
            history.append(rev: revision.rev, encodedOps: revision.encodedOps)
            if pending.count == 1000 {
                try log.append(pending)
                pending = []
            }
            if revision.rev % UInt64(snapshotEvery) == 0 && index + 1 < revisions {
                try log.append(pending)
                pending = []
                try snapshot()
            }
            if revision.rev % 100_000 == 0 { progress(revision.rev) }
        }
        try log.append(pending)
        report.revisions = engine.rev
        return report
    }

    private static func world(activities: Int) -> [JSONValue] {
        var commands: [JSONValue] = [
            ["type": "config.set", "values": ["maxActivitiesPerApp": .number(Double(activities))]]
        ]
        for (index, model) in ["iphone-15-pro", "iphone-16-pro-max", "iphone-se-3"].enumerated() {
            commands.append(["type": "device.upsert", "id": .string("d\(index)"), "model": .string(model)])
        }
        for app in ["coffee", "ride", "sports"] {
            commands.append(["type": "app.upsert", "id": .string(app), "foreground": true])
        }
        for index in 0..<activities {
            commands.append([
                "type": "activity.request", "id": .string("a\(index)"), "app": "coffee", "device": .string("d\(index % 2)"),
                "attributesType": "CoffeeDeliveryAttributes", "attributes": ["orderNumber": .string("A-\(index)")],
                "content": ["state": ["status": "received", "eta": 20]],
            ])
        }
        return commands
    }

    private static func command(_ index: Int, _ random: inout UInt64, _ activities: Int) -> JSONValue {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        let roll = Int(random % 100)
        let statuses = ["received", "preparing", "brewing", "onItsWay", "arriving"]
        switch roll {
        case 0..<85:
            return [
                "type": "activity.update", "id": .string("a\(Int(random >> 8) % activities)"),
                "content": [
                    "state": ["status": .string(statuses[index % statuses.count]), "eta": .number(Double(index % 60))],
                    "relevanceScore": .number(Double(Int(random >> 16) % 100)),
                ],
            ]
        case 85..<90:
            return ["type": "device.upsert", "id": .string("d\(index % 3)"), "locked": .bool(index % 2 == 0)]
        case 90..<95:
            return [
                "type": "app.upsert", "id": .string(["ride", "sports"][index % 2]), "foreground": .bool(index % 2 == 0),
            ]
        case 95..<99:
            return ["type": "island.press", "device": .string("d\(index % 2)")]
        default:
            // About 10,000 simulated seconds over a million revisions: within the 8-hour limit.
            return ["type": "clock.advance", "seconds": 1]
        }
    }
}
