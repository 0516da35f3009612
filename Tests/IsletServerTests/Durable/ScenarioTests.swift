import Foundation
import IsletCore
import IsletStore
import IsletTestSupport
import Testing

@testable import IsletServer

@Suite("Scenario files: export and replay")
struct ScenarioTests {
    /// Writes `lines` as a scenario file at `path` and returns `path`.
    @discardableResult
    func write(_ lines: [[UInt8]], to path: String) throws -> String {
        try Data(lines.map { $0 + [0x0A] }.joined()).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Exports the log at `path` into lines.
    func export(_ path: String) throws -> [ScenarioLine] {
        let log = try CommandLog(path: path, access: .readOnly, logger: makeTestLogger())
        var lines: [ScenarioLine] = []
        try ScenarioExport.export(log) { lines.append($0) }
        return lines
    }

    /// Replays `lines` into a new log at `path` and recovers it.
    func replay(_ lines: [ScenarioLine], into path: String, start: Instant? = nil) throws -> (
        ImportSummary, RecoveredState
    ) {
        var configuration = IsletConfiguration.testing(virtualClockStart: start)
        configuration.store.path = path
        let summary: ImportSummary
        do {
            let log = try CommandLog(path: path, logger: makeTestLogger())
            let file = try self.write(lines.map(\.encoded), to: path + ".jsonl")
            summary = try ScenarioImport.run(file: file, into: log, configuration: configuration)
        }
        let (state, _) = try StorePersistence.open(
            configuration, loop: nil, wall: TestServer.start, logger: makeTestLogger())
        return (summary, state)
    }

    @Test(
        "a log recorded on a paused virtual clock replays to the same revisions and document, byte for byte",
        arguments: [21, 22, 23] as [UInt64])
    func pausedClockRoundTrip(seed: UInt64) throws {
        try withTemporaryDirectory { dir in
            let source = dir.file("source.sqlite")
            let image: (document: [UInt8], rev: UInt64, epoch: String)
            do {
                let node = try DurableServer(
                    path: source, configuration: .testing(virtualClockStart: TestServer.start))
                var random = RandomCommands(seed: seed)
                _ = try node.commit(random.setUp())
                for _ in 0..<150 {
                    node.post(random.batch(now: node.server.engine.now))
                }
                image = node.image
            }
            let lines = try self.export(source)
            #expect(lines.count == Int(image.rev))
            #expect(lines.first?.at == TestServer.start)
            let (summary, state) = try self.replay(lines, into: dir.file("replayed.sqlite"))
            #expect(summary.clockAdvances == 0)
            #expect(state.engine.rev == image.rev)
            #expect(state.engine.documentBytes == image.document)
            #expect(state.epoch != image.epoch, "a new store is a new history")
            #expect(try self.export(dir.file("replayed.sqlite")) == lines, "exporting the replay gives the same file")
        }
    }

    @Test("a log recorded on the wall clock replays its batches and clock steps at the same simulated instants")
    func wallClockRoundTrip() throws {
        try withTemporaryDirectory { dir in
            let source = dir.file("source.sqlite")
            let time = SettableTimeSource(now: DurableServerTests.start)
            let original: Engine
            do {
                let node = try DurableServer(path: source, time: time)
                _ = try node.commit(DurableServerTests.world)
                time.advance(seconds: 30)
                _ = try node.commit([
                    [
                        "type": "activity.update", "id": "a1",
                        "content": ["state": ["status": "brewing"], "staleDate": "2026-11-27T08:01:00Z"],
                    ]
                ])
                time.advance(seconds: 60)
                node.server.flush()  // the stale date passes: a tick
                time.advance(seconds: 5)
                _ = try node.commit([Fixture.update("a1", status: "onItsWay")])
                original = node.server.engine
            }
            let lines = try self.export(source)
            #expect(lines.map(\.isClockStep) == [false, false, true, false])
            #expect(lines.map(\.at) == [0, 30, 90, 95].map { DurableServerTests.start.adding(seconds: $0) })
            let (summary, state) = try self.replay(lines, into: dir.file("replayed.sqlite"))
            // Each later line lies ahead of the paused replay clock: a clock.advance before it.
            #expect(summary.clockAdvances == 3)
            #expect(state.engine.now == original.now)
            for path in ["/activities", "/apps", "/devices"] as [JSONPointer] {
                #expect(state.engine.value(at: path) == original.value(at: path), "\(path)")
            }
        }
    }

    @Test("malformed lines and refused batches are reported with their line number; blank lines are skipped")
    func badLines() throws {
        let cases: [(String, String)] = [
            (#"{"at":"2026-11-22T08:00:00Z","commands":[],"extra":1}"#, "line 2: unknown member \"extra\""),
            (#"{"at":"yesterday","commands":[]}"#, "line 2: \"at\" must be an RFC 3339 date"),
            (#"["not an object"]"#, "line 2: a scenario line is a JSON object"),
            (#"{"at":"2026-11-22T08:00:00Z","commands":[{"type":"nope"}]}"#, "line 2: the engine refuses it"),
        ]
        try withTemporaryDirectory { directory in
            for (line, message) in cases {
                let file = try self.write([Array("".utf8), Array(line.utf8)], to: directory.file("bad.jsonl"))
                let checked = try #require(throws: ScenarioError.self) {
                    try ScenarioImport.check(file: file, configuration: .testing())
                }
                #expect(checked.description.hasPrefix(message), "\(checked)")
                let log = try CommandLog(path: ":memory:", logger: makeTestLogger())
                let error = try #require(throws: ScenarioError.self) {
                    try ScenarioImport.run(file: file, into: log, configuration: .testing())
                }
                #expect(error.description.hasPrefix(message), "\(error)")
            }
        }
    }

    @Test("an import into a log that already holds revisions is refused, and so is the export of a compacted log")
    func refusals() throws {
        let log = try CommandLog(path: ":memory:", logger: makeTestLogger())
        try withTemporaryDirectory { directory in
            let file = try self.write(
                [ScenarioLine(at: TestServer.start, commands: [Fixture.device]).encoded], to: directory.file("s.jsonl"))
            try ScenarioImport.run(file: file, into: log, configuration: .testing())
            let empty = try self.write([], to: directory.file("empty.jsonl"))
            #expect(throws: ScenarioError.self) {
                try ScenarioImport.run(file: empty, into: log, configuration: .testing())
            }
        }
        try log.compact(reclaimingSpace: false)
        let error = try #require(throws: ScenarioError.self) { try ScenarioExport.export(log) { _ in } }
        #expect(error.description.contains("needs every revision from 1"))
    }
}
