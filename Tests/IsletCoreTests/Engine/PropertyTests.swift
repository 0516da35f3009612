import IsletCore
import IsletTestSupport
import Testing

/// Seeded random command sequences at random instants.
@Suite struct PropertyTests {
    /// What one run produced.
    struct Run {
        var patches: [[UInt8]] = []
        var results: [[JSONValue]] = []
        var finalBytes: [UInt8] = []
        var revisions = 0
        var rejected = 0
        /// Widgets with a timeline, stacks and rotations at the end (so widget rules were exercised).
        var timelines = 0
        var rotations = 0
    }

    static let start = try! Instant(rfc3339: "2026-11-22T08:00:00Z")

    /// Runs 300 random steps: batches (some invalid) and wall-clock advances. After every
    /// revision the patch is applied to a running copy of the document, which must equal the
    /// engine's; a rejected batch must leave the document byte for byte as it was.
    static func run(seed: UInt64, steps: Int = 300) throws -> Run {
        var generator = RandomCommands(seed: seed, widgets: true, clockRates: [0, 1, 10])
        var engine = Engine(
            renderer: TestRenderer(), at: start, clock: .virtual(now: start, rate: 1, atWall: start))
        var wall = start
        var document = engine.documentValue
        var run = Run()
        _ = try engine.apply(generator.setUp(), at: wall)
        document = engine.documentValue
        for _ in 0..<steps {
            wall = wall.adding(seconds: Double(generator.int(0...4) == 0 ? 0 : generator.int(1...1800)))
            let revision: Revision?
            if generator.chance(25) {
                revision = engine.advance(to: wall)
            } else {
                let before = engine.documentBytes
                do {
                    revision = try engine.apply(generator.batch(now: engine.simulatedInstant(atWall: wall)), at: wall)
                } catch {
                    #expect(engine.documentBytes == before)
                    run.rejected += 1
                    revision = nil
                }
            }
            guard let revision else { continue }
            document = try JSONPatch.apply(revision.ops, to: document)
            #expect(document == engine.documentValue, "seed \(seed), rev \(revision.rev)")
            // The stored document is kept incrementally (only what a revision marked changed is
            // rebuilt): it must equal one built from scratch, from a snapshot of the engine.
            if revision.rev % 25 == 0 {
                let rebuilt = try Engine(snapshot: try JSONParser().parse(engine.snapshotBytes), renderer: TestRenderer())
                #expect(rebuilt.documentBytes == engine.documentBytes, "seed \(seed), rev \(revision.rev): a stale entry")
            }
            run.patches.append(revision.encodedOps)
            run.results.append(revision.results)
            run.revisions += 1
        }
        run.finalBytes = engine.documentBytes
        let widgets = engine.value(at: "/widgets")?.objectValue?.members ?? []
        run.timelines = widgets.filter { $0.value["timeline"]?["setAt"] != .null }.count
        let stacks = engine.value(at: "/stacks")?.objectValue?.members ?? []
        run.rotations = stacks.reduce(0) { $0 + ($1.value["rotations"]?.arrayValue?.count ?? 0) }
        return run
    }

    @Test(
        "patches replay to the final document, and the same sequence gives byte-identical output",
        arguments: [1, 7, 42, 1234] as [UInt64])
    func replayAndDeterminism(seed: UInt64) throws {
        let first = try Self.run(seed: seed)
        let second = try Self.run(seed: seed)
        #expect(first.revisions > 50)
        #expect(first.rejected > 5, "invalid batches are exercised")
        #expect(first.timelines > 0, "widget timelines are exercised")
        #expect(first.rotations + first.timelines > 2)
        #expect(first.patches == second.patches)
        #expect(first.results == second.results)
        #expect(first.finalBytes == second.finalBytes)
    }

    /// A busy world for the time-step property: activities with stale dates and alerts on
    /// several devices, throttled and deferred pushes, a scheduled start.
    static func busyWorld(clock: SimulationClock) throws -> Engine {
        var configuration = SimulatorConfiguration()
        configuration.maxActivitiesPerApp = 20
        configuration.maxActivitiesPerDevice = 40
        configuration.pushBudgetPerHour = 3
        configuration.lowPriorityDelaySeconds = 90
        var engine = Engine(configuration: configuration, renderer: TestRenderer(), at: start, clock: clock)
        let generator = RandomCommands(seed: 99, widgets: true, clockRates: [0, 1, 10])
        _ = try engine.apply(generator.setUp(), at: start)
        var batch: [JSONValue] = []
        for index in 0..<30 {
            let app = generator.apps[index % 3]
            batch.append([
                "type": "activity.request", "id": .string("b\(index)"), "app": .string(app), "attributesType": "T",
                "content": [
                    "state": ["i": .number(Double(index))], "relevanceScore": .number(Double(index % 4)),
                    "staleDate": .string(start.adding(seconds: Double(600 * (index + 1))).rfc3339),
                ],
                "alert": ["title": "Started"], "pushType": "token",
            ])
        }
        for index in 0..<12 {
            batch.append([
                "type": "activity.update", "id": .string("b\(index)"),
                "content": ["state": ["i": .number(Double(100 + index))]],
                "delivery": ["source": "push", "priority": .number(index % 3 == 0 ? 5 : 10)],
                "alert": ["title": "Pushed"],
            ])
        }
        batch.append([
            "type": "activity.end", "id": "b29",
            "dismissalPolicy": ["after": .string(start.adding(seconds: 5000).rfc3339)],
        ])
        batch.append([
            "type": "activity.request", "id": "later", "app": "ride", "attributesType": "T", "content": ["state": [:]],
            "start": .string(start.adding(seconds: 7200).rfc3339), "alert": ["title": "Scheduled"],
        ])
        _ = try engine.apply(batch, at: start)
        return engine
    }

    @Test(
        "clock.advance of 24 h in many steps gives the same document as advancing once",
        arguments: [3, 5, 8] as [UInt64])
    func advanceInSteps(seed: UInt64) throws {
        let start = Self.start
        let paused = SimulationClock.virtual(now: start, rate: 0, atWall: start)
        var once = try Self.busyWorld(clock: paused)
        let single = try once.apply([["type": "clock.advance", "seconds": 86_400]] as [JSONValue], at: start)
        var stepped = try Self.busyWorld(clock: paused)
        var random = SplitMix64(seed: seed)
        var remaining = 86_400
        var transitions = 0
        while remaining > 0 {
            let step = min(remaining, Int.random(in: 1...7200, using: &random))
            let revision = try stepped.apply(
                [["type": "clock.advance", "seconds": .number(Double(step))]] as [JSONValue], at: start)
            transitions += revision.transitions
            remaining -= step
        }
        #expect(single.transitions > 100)
        #expect(transitions == single.transitions)
        #expect(stepped.documentBytes == once.documentBytes)
        #expect(stepped.snapshotBytes.count > 0)
    }

    @Test("advance(to:) of 24 h in many wall steps gives the same document as one step")
    func wallStepsEqualOne() throws {
        let start = Self.start
        let running = SimulationClock.virtual(now: start, rate: 1, atWall: start)
        var once = try Self.busyWorld(clock: running)
        _ = once.advance(to: start.adding(seconds: 86_400))
        var stepped = try Self.busyWorld(clock: running)
        var wall = start
        while wall < start.adding(seconds: 86_400) {
            wall = min(start.adding(seconds: 86_400), wall.adding(seconds: 37))
            _ = stepped.advance(to: wall)
        }
        #expect(stepped.documentBytes == once.documentBytes)
        #expect(stepped.rev > once.rev)
    }
}
