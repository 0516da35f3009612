import Foundation
import IsletCore
import IsletRender
import IsletServer

#if canImport(Glibc)
    import Glibc
#endif

/// `islet bench engine`: the engine's budgets of DESIGN.md, measured in-process on one thread.
/// `islet bench engine` parses the options.
///
/// 1. Scale: N activities (with stale dates, alerts on every start and some alerting updates)
///    on three devices; the time to advance the virtual clock 24 h in one step, and in
///    one-minute steps, and the process's peak memory.
/// 2. Diff: the cost of one `activity.update` through the engine to encoded patch bytes
///    (decode, rules, render, diff, encode), in a small world and in the N-activity world.
struct EngineBenchmark: Sendable {
    /// Activities in the scale world.
    var activities: Int
    /// Apps the activities belong to.
    var apps: Int
    /// Measured activity.update calls per diff row.
    var updates: Int
    /// Skip the one-minute-steps run of the scale benchmark.
    var skipStepped: Bool
    /// Only the small-world update → patch rows.
    var diffOnly: Bool
    /// Only the update → patch rows in the scale world (for profiling them).
    var scaleDiffOnly: Bool
    /// Print the last patch of each update → patch row.
    var showPatch: Bool
    /// Renderers for the small-world rows: mustache, plain or both.
    var renderer: String
    /// Widgets in the widget scale world (0 skips it); ten to a stack.
    var widgets: Int
    /// Timeline entries per widget.
    var entries: Int
    /// Start each widget's hourly entries at its own minute instead of on the hour.
    var stagger: Bool
    /// Only the widget scale rows.
    var widgetsOnly: Bool
    /// Build the widget world into the activity scale world (the whole DESIGN.md budget).
    var withActivities: Bool
    /// Widget-world runs: single (one 24 h step), stepped (one-minute steps), both.
    var widgetRuns: String

    init(
        activities: Int, apps: Int, updates: Int, skipStepped: Bool, diffOnly: Bool, scaleDiffOnly: Bool,
        showPatch: Bool, renderer: String, widgets: Int, entries: Int, stagger: Bool, widgetsOnly: Bool,
        withActivities: Bool, widgetRuns: String
    ) {
        self.activities = activities
        self.apps = apps
        self.updates = updates
        self.skipStepped = skipStepped
        self.diffOnly = diffOnly
        self.scaleDiffOnly = scaleDiffOnly
        self.showPatch = showPatch
        self.renderer = renderer
        self.widgets = widgets
        self.entries = entries
        self.stagger = stagger
        self.widgetsOnly = widgetsOnly
        self.withActivities = withActivities
        self.widgetRuns = widgetRuns
    }

    /// Runs the rows the options ask for, handing each line of the report to `report` as it is measured.
    func run(report: (String) -> Void) throws {
        if self.widgets > 0 {
            try self.widgetScale(report)
            if self.widgetsOnly { return }
        }
        report("islet bench engine — \(self.activities) activities, \(self.apps) apps, 3 devices")
        if self.scaleDiffOnly { return try self.diffAtScale(report) }
        let renderers: [(String, any PresentationRenderer)] = [
            ("mustache", MustacheRenderer()), ("plain", PlainRenderer()),
        ]
        for (name, renderer) in renderers where self.renderer == "both" || self.renderer == name {
            try self.diffSmall(name, renderer, report)
        }
        guard !self.diffOnly else { return }
        try self.diffAtScale(report)
        try self.scale(stepped: false, report)
        if !self.skipStepped { try self.scale(stepped: true, report) }
        report("peak resident memory: \(memory("VmHWM")) (current \(memory("VmRSS")))")
    }

    /// Update → encoded patch in a world of one app, three activities, two devices.
    private func diffSmall(_ name: String, _ renderer: any PresentationRenderer, _ report: (String) -> Void) throws {
        var engine = Engine(renderer: renderer, at: BenchWorld.start, clock: BenchWorld.pausedClock)
        _ = try engine.apply(
            [
                ["type": "device.upsert", "id": "d1", "model": "iphone-15-pro"],
                ["type": "device.upsert", "id": "se", "model": "iphone-se-3"],
                ["type": "app.upsert", "id": "coffee", "foreground": true],
            ] + (0..<3).map { BenchWorld.request(index: $0, app: "coffee", staleAfter: 3600, alert: false) },
            at: BenchWorld.start)
        let row = try measureUpdates(
            &engine, ids: (0..<3).map { "a\($0)" }, count: self.updates, show: self.showPatch, report: report)
        report("update → patch, 3 activities, renderer \(name): \(row)")
    }

    /// Update → encoded patch when the engine holds the whole scale world.
    private func diffAtScale(_ report: (String) -> Void) throws {
        var engine = try BenchWorld.build(activities: self.activities, apps: self.apps)
        let ids = (0..<self.activities).map { "a\($0)" }
        let count = min(self.updates, 5000)
        let same = try measureUpdates(&engine, ids: ids, count: count, show: self.showPatch, report: report) {
            Double($0 % 4 * 25)
        }
        report("update → patch, \(self.activities) activities, renderer mustache, score kept: \(same)")
        let moved = try measureUpdates(&engine, ids: ids, count: count, show: self.showPatch, report: report) {
            Double(($0 + 1) % 4 * 25 + 10)
        }
        report(
            "update → patch, \(self.activities) activities, renderer mustache, score changed (Lock Screen reorders): \(moved)"
        )
    }

    /// 24 h over the widget world, in one step and/or in one-minute steps, with memory.
    private func widgetScale(_ report: (String) -> Void) throws {
        let mode = self.withActivities ? " + \(self.activities) activities" : ""
        report(
            "islet bench engine — \(self.widgets) widgets × \(self.entries) entries in \(self.widgets / 10) stacks"
                + "\(mode), \(BenchWidgetWorld.devices) devices\(self.stagger ? ", staggered entries" : "")")
        for stepped in [false, true]
        where self.widgetRuns == "both" || self.widgetRuns == (stepped ? "stepped" : "single") {
            let baseline = residentMiB()
            let setupStart = ContinuousClock.now
            var engine =
                self.withActivities
                ? try BenchWorld.build(activities: self.activities, apps: self.apps)
                : Engine(renderer: MustacheRenderer(), at: BenchWorld.start, clock: BenchWorld.pausedClock)
            let options = BenchWidgetWorld.Options(widgets: self.widgets, entries: self.entries, stagger: self.stagger)
            try BenchWidgetWorld.add(to: &engine, options)
            let setup = ContinuousClock.now - setupStart
            let built = residentMiB()
            let cpuStart = threadCPUSeconds()
            let start = ContinuousClock.now
            let (transitions, ops, bytes, _) = try advanceDay(&engine, stepped: stepped)
            let elapsed = ContinuousClock.now - start
            let cpu = threadCPUSeconds() - cpuStart
            let perTransition = Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
            report(
                "24 h, \(stepped ? "1440 one-minute clock.advance steps" : "one clock.advance of 24 h"): \(format(elapsed))"
                    + String(format: " (CPU %.2f s)", cpu)
                    + " for \(transitions) transitions (\(String(format: "%.2f", perTransition / Double(max(1, transitions)))) µs each),"
                    + " \(ops) ops, \(bytes / 1_048_576) MiB of patch; setup \(format(setup));"
                    + " resident \(built) MiB after setup (\(built - baseline) MiB for the world), \(residentMiB()) MiB after;"
                    + " peak \(memory("VmHWM"))")
        }
    }

    private func scale(stepped: Bool, _ report: (String) -> Void) throws {
        let setupStart = ContinuousClock.now
        var engine = try BenchWorld.build(activities: self.activities, apps: self.apps)
        let setup = ContinuousClock.now - setupStart
        let start = ContinuousClock.now
        let (transitions, ops, bytes, revisions) = try advanceDay(&engine, stepped: stepped)
        let elapsed = ContinuousClock.now - start
        let mode = stepped ? "1440 one-minute clock.advance steps" : "one clock.advance of 24 h"
        report(
            "24 h over \(self.activities) activities, \(mode): \(format(elapsed)) for \(transitions) transitions"
                + " in \(revisions) revision(s), \(ops) ops, \(bytes / 1024) KiB of patch (setup \(format(setup)),"
                + " document \(engine.documentBytes.count / 1024) KiB)")
    }
}

/// Advances the clock 24 h, in one step or in 1,440 one-minute steps, and counts what the
/// revisions carried.
private func advanceDay(
    _ engine: inout Engine, stepped: Bool
) throws -> (transitions: Int, ops: Int, bytes: Int, revisions: Int) {
    var totals = (transitions: 0, ops: 0, bytes: 0, revisions: 0)
    let steps = stepped ? 1440 : 1
    for _ in 0..<steps {
        let revision = try engine.apply(
            [["type": "clock.advance", "seconds": .number(86_400 / Double(steps))]] as [JSONValue],
            at: BenchWorld.start)
        totals.transitions += revision.transitions
        totals.ops += revision.operationCount
        totals.bytes += revision.encodedOps.count
        totals.revisions += 1
    }
    return totals
}

/// Times `count` single-command batches, each an update of the next activity with new state.
private func measureUpdates(
    _ engine: inout Engine, ids: [String], count: Int, show: Bool, report: (String) -> Void,
    score: (Int) -> Double = { _ in 25 }
) throws -> String {
    var samples: [Duration] = []
    samples.reserveCapacity(count)
    var totalOps = 0
    var totalBytes = 0
    let statuses = ["received", "preparing", "outForDelivery"]
    for iteration in 0..<(count + 1000) {
        let index = iteration % ids.count
        let command: JSONValue = [
            "type": "activity.update", "id": .string(ids[index]),
            "content": [
                "state": ["currentStatus": .string(statuses[iteration % 3]), "n": .number(Double(iteration))],
                "relevanceScore": .number(score(index)),
            ],
        ]
        let start = ContinuousClock.now
        let revision = try engine.apply([command], at: BenchWorld.start)
        let elapsed = ContinuousClock.now - start
        guard iteration >= 1000 else { continue }
        samples.append(elapsed)
        totalOps += revision.operationCount
        totalBytes += revision.encodedOps.count
        if show, iteration == count + 999 { report(String(decoding: revision.encodedOps, as: UTF8.self)) }
    }
    samples.sort()
    func percentile(_ p: Double) -> String { format(samples[min(samples.count - 1, Int(Double(samples.count) * p))]) }
    return "median \(percentile(0.5)), p90 \(percentile(0.9)), p99 \(percentile(0.99))"
        + " (\(count) updates, \(totalOps / count) ops and \(totalBytes / count) bytes per patch)"
}

/// The scale world: devices, apps, and activities with stale dates and alerts.
enum BenchWorld {
    static let start = try! Instant(rfc3339: "2026-11-22T08:00:00Z")
    static let pausedClock = SimulationClock.virtual(now: start, rate: 0, atWall: start)
    static let types = [
        "CoffeeDeliveryAttributes", "RideShareAttributes", "SportsScoreAttributes", "TimerAttributes",
        "WorkoutAttributes",
    ]

    static func build(activities: Int, apps: Int) throws -> Engine {
        var configuration = SimulatorConfiguration()
        configuration.maxActivitiesPerApp = (activities + apps - 1) / apps
        configuration.maxActivitiesPerDevice = activities
        var engine = Engine(configuration: configuration, renderer: MustacheRenderer(), at: start, clock: pausedClock)
        var fixtures: [JSONValue] = [
            ["type": "device.upsert", "id": "d1", "model": "iphone-15-pro"],
            ["type": "device.upsert", "id": "d2", "model": "iphone-16-pro-max", "standby": true],
            ["type": "device.upsert", "id": "se", "model": "iphone-se-3"],
        ]
        fixtures += (0..<apps).map { ["type": "app.upsert", "id": .string("app-\($0)"), "foreground": true] }
        _ = try engine.apply(fixtures, at: start)
        var random: UInt64 = 42
        for batchStart in stride(from: 0, to: activities, by: 100) {
            var batch = (batchStart..<min(activities, batchStart + 100)).map { index in
                request(
                    index: index, app: "app-\(index % apps)", staleAfter: Double(600 + next(&random) % 27_000),
                    alert: true)
            }
            // Every tenth activity of the batch gets an alerting update too.
            batch += stride(from: batchStart, to: min(activities, batchStart + 100), by: 10).map { index in
                [
                    "type": "activity.update", "id": .string("a\(index)"), "alert": ["title": "Update"],
                    "content": [
                        "state": ["currentStatus": "preparing"],
                        "staleDate": .string(start.adding(seconds: 7200).rfc3339),
                    ],
                ]
            }
            _ = try engine.apply(batch, at: start)
        }
        return engine
    }

    static func request(index: Int, app: String, staleAfter: Double, alert: Bool) -> JSONValue {
        var command: JSONObject = [
            "type": "activity.request", "id": .string("a\(index)"), "app": .string(app),
            "attributesType": .string(types[index % types.count]),
            "attributes": [
                "coffeeName": "Flat white", "homeTeam": "LAL", "awayTeam": "BOS", "name": "Tea", "workoutType": "Run",
            ],
            "content": [
                "state": ["currentStatus": "recieved", "homeScore": 0, "awayScore": 0, "remainingSeconds": 600],
                "staleDate": .string(start.adding(seconds: staleAfter).rfc3339),
                "relevanceScore": .number(Double(index % 4 * 25)),
            ],
        ]
        if alert { command["alert"] = ["title": "Started", "body": "Your activity started"] }
        return .object(command)
    }

    /// SplitMix64, so the world is the same on every run.
    static func next(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A renderer that does almost nothing, to separate the engine's own cost from Mustache's.
struct PlainRenderer: PresentationRenderer {
    struct Compiled: CompiledTemplate {
        var sectionDepth: Int { 0 }
        var sourceBytes: Int { 0 }
    }

    func compile(_ source: String, slot: TemplateSlot) throws(APIError) -> any CompiledTemplate { Compiled() }

    func render(_ request: PresentationRenderRequest) -> RenderedPresentation {
        let text = request.context["state"]?.encodedString ?? ""
        return RenderedPresentation(fragments: [.lockScreen: text, .compactTrailing: text])
    }
}

private func format(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    let micros = Double(seconds) * 1e6 + Double(attoseconds) / 1e12
    if micros < 1000 { return String(format: "%.1f µs", micros) }
    if micros < 1e6 { return String(format: "%.1f ms", micros / 1000) }
    return String(format: "%.2f s", micros / 1e6)
}

/// CPU seconds used by the calling thread (robust when other processes share the machine).
private func threadCPUSeconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// The process's resident memory now, in MiB (0 when unknown).
private func residentMiB() -> Int {
    Int(memory("VmRSS").split(separator: " ").first ?? "") ?? 0
}

/// A line of /proc/self/status (Linux), e.g. "VmHWM" → "812 MiB".
private func memory(_ key: String) -> String {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key + ":") }),
        let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
    else { return "unknown" }
    return "\(kib / 1024) MiB"
}
