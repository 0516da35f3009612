import IsletTestSupport
import Testing

/// `islet serve --max-connections` (issue 18) as a process: shown by `--print-config`, read from
/// the environment, and checked.
@Suite("islet serve: --max-connections")
struct ConnectionCapFlagTests {
    @Test("the cap defaults to 10,000 and is set by the flag or ISLET_MAX_CONNECTIONS (the flag wins)")
    func printConfig() throws {
        #expect(try printedServeConfig([]).contains("max-connections: 10000"))
        #expect(try printedServeConfig([], environment: ["ISLET_MAX_CONNECTIONS": "7"]).contains("max-connections: 7"))
        let both = try printedServeConfig(["--max-connections", "5"], environment: ["ISLET_MAX_CONNECTIONS": "7"])
        #expect(both.contains("max-connections: 5"))
    }

    @Test("a cap of 0 is refused with exit code 2")
    func refused() throws {
        let process = try IsletProcess(arguments: ["serve", "--port", "0", "--max-connections", "0"])
        #expect(try process.waitForExit() == 2)
        #expect(process.standardError().contains("max-connections"))
    }
}
