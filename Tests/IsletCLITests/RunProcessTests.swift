import Foundation
import IsletTestSupport
import Testing

/// `runProcess` bounds the tools the suites run (the HTTP/2 fuzzer, openssl): its timeout must
/// hold against a process that never ends its output, which reading to end of file did not.
@Suite("Running a tool process")
struct RunProcessTests {
    @Test("a process that keeps writing past its timeout is killed, and the error carries its output")
    func timeoutWhileWriting() throws {
        let started = ContinuousClock.now
        #expect {
            _ = try runProcess("/bin/sh", ["-c", "while true; do echo still here; sleep 0.1; done"], timeout: .seconds(1))
        } throws: { error in
            "\(error)".contains("did not finish within 1.0 seconds") && "\(error)".contains("still here")
        }
        #expect(started.duration(to: .now) < .seconds(30))
    }

    @Test("a process that ends in time gives its status and its whole output")
    func endsInTime() throws {
        let (status, output) = try runProcess("/bin/sh", ["-c", "echo one; echo two >&2; exit 3"])
        #expect(status == 3)
        #expect(output == "one\ntwo\n")
    }
}
