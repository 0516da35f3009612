import IsletTestSupport
import Testing

/// `islet serve --ws-write-delay` (issue 17) as a process: shown by `--print-config`, read from
/// the environment (the flag wins), and checked.
@Suite("islet serve: --ws-write-delay")
struct WriteDelayFlagTests {
    @Test("off by default; set by the flag or ISLET_WS_WRITE_DELAY")
    func printConfig() throws {
        #expect(try printedServeConfig([]).contains("ws-write-delay: 0"))
        #expect(try printedServeConfig([], environment: ["ISLET_WS_WRITE_DELAY": "5"]).contains("ws-write-delay: 5"))
        let both = try printedServeConfig(["--ws-write-delay", "20"], environment: ["ISLET_WS_WRITE_DELAY": "5"])
        #expect(both.contains("ws-write-delay: 20"))
    }

    @Test("a delay over 1000 ms is refused with exit code 2")
    func refused() throws {
        let process = try IsletProcess(arguments: ["serve", "--port", "0", "--ws-write-delay", "1001"])
        #expect(try process.waitForExit() == 2)
        #expect(process.standardError().contains("ws-write-delay"))
    }
}
