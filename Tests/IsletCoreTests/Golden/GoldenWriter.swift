import Foundation
import IsletCore
import IsletTestSupport
import Testing

/// One-off: writes the revision-1 golden log and its documents (run with ISLET_WRITE_GOLDEN=dir).
@Suite struct GoldenWriter {
    @Test func write() throws {
        guard let directory = ProcessInfo.processInfo.environment["ISLET_WRITE_GOLDEN"] else { return }
        let start = try Instant(rfc3339: "2026-11-22T00:00:00Z")
        var engine = Engine(renderer: TestRenderer(), at: start, clock: .virtual(now: start, rate: 0, atWall: start))
        var log: [String] = []
        var documents: [String] = []
        func apply(_ batch: [JSONValue]) {
            guard (try? engine.apply(batch, at: start)) != nil else { return }
            log.append(JSONValue.array(batch).encodedString)
        }
        func checkpoint() { documents.append(JSONValue.object(["batch": .number(Double(log.count)), "document": engine.documentValue]).encodedString) }
        for batch in DemoScenario.setupBatches(at: start) { apply(batch) }
        checkpoint()
        for step in 0..<(12 * 12) {
            for batch in DemoDriver.batches(for: engine, at: engine.now) { apply(batch) }
            apply([["type": "clock.advance", "seconds": 300]])
            if step % 72 == 71 { checkpoint() }
        }
        var random = RandomCommands(seed: 14, widgets: true)
        apply(random.setUp())
        for step in 0..<300 {
            apply(random.batch(now: engine.now))
            if step % 150 == 149 { checkpoint() }
        }
        try (log.joined(separator: "\n") + "\n").write(toFile: directory + "/log.jsonl", atomically: true, encoding: .utf8)
        try (documents.joined(separator: "\n") + "\n").write(toFile: directory + "/documents.jsonl", atomically: true, encoding: .utf8)
    }
}
