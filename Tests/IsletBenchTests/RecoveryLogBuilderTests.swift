import IsletTestSupport
import Testing

@testable import IsletBench

@Suite("Recovery log builder")
struct RecoveryLogBuilderTests {
    @Test("every generated command is accepted by today's engine (presses included, LA-15), with a snapshot per interval")
    func builds() throws {
        try withTemporaryDirectory { directory in
            let report = try RecoveryLogBuilder.build(
                path: directory.file("log.sqlite"), revisions: 3000, snapshotEvery: 1000)
            #expect(report.revisions == 3000)
            #expect(report.lastSnapshot == 2000)
            #expect(report.snapshots == 3)
        }
    }
}
