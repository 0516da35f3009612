@testable import IsletTransport
import Testing

/// lws repeats a failing line at every loop turn (an `accept` at the open-file limit: ~150,000
/// lines a second); the log keeps ten a second of each and counts the rest.
@Suite("Repeated lws log lines")
struct RepeatedLinesTests {
    @Test("each line is logged ten times a second, also when two alternate; the next second reports what was left out")
    func thinning() {
        var lines = RepeatedLines()
        let start = ContinuousClock.now
        var logged: [String] = []
        for index in 0..<100 {
            let line = index % 2 == 0 ? "accept: errno 24" : "other"
            let (log, leftOut) = lines.admit(line, at: start + .milliseconds(index))
            #expect(leftOut.isEmpty)
            if log { logged.append(line) }
        }
        #expect(logged.filter { $0 == "accept: errno 24" }.count == 10 && logged.filter { $0 == "other" }.count == 10)
        let (log, leftOut) = lines.admit("accept: errno 24", at: start + .seconds(1))
        #expect(log)
        #expect(leftOut.map(\.0) == ["accept: errno 24", "other"] && leftOut.map(\.1) == [40, 40])
        #expect(lines.admit("quiet", at: start + .seconds(3)).leftOut.isEmpty, "nothing left out of the second before")
    }

    @Test("beyond the lines it counts in a second, a new line is let through uncounted")
    func bounded() {
        var lines = RepeatedLines()
        let now = ContinuousClock.now
        for index in 0..<RepeatedLines.tracked { _ = lines.admit("line \(index)", at: now) }
        for _ in 0..<20 { #expect(lines.admit("one more", at: now).log) }
    }
}
