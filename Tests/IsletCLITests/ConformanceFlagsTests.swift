import IsletTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `islet serve --conformance-echo` and `--ws-compression` as a process.
@Suite("islet serve: conformance and compression flags")
struct ConformanceFlagsTests {
    @Test("--conformance-echo with a non-loopback host is refused with exit code 2, even with a token")
    func echoOffLoopback() throws {
        let process = try IsletProcess(arguments: [
            "serve", "--host", "0.0.0.0", "--port", "0", "--admin-token", "0123456789abcdef", "--conformance-echo",
        ])
        #expect(try process.waitForExit() == 2)
        #expect(process.standardError().contains("conformance-echo"))
        #expect(try process.readLine() == nil)
    }

    @Test("both flags are off by default and shown by --print-config")
    func printConfig() throws {
        let defaults = try IsletProcess(arguments: ["serve", "--print-config"])
        var lines: [String] = []
        while let line = try defaults.readLine() { lines.append(line) }
        #expect(try defaults.waitForExit() == 0)
        #expect(lines.contains("ws-compression: false"))
        #expect(lines.contains("conformance-echo: false"))

        let on = try IsletProcess(
            arguments: ["serve", "--print-config", "--conformance-echo"], environment: ["ISLET_WS_COMPRESSION": "1"])
        lines = []
        while let line = try on.readLine() { lines.append(line) }
        #expect(try on.waitForExit() == 0)
        #expect(lines.contains("ws-compression: true"))
        #expect(lines.contains("conformance-echo: true"))
    }

    @Test("with --conformance-echo the process serves /v1/echo and stops on SIGTERM with exit 0")
    func echoServes() throws {
        let process = try IsletProcess(arguments: ["serve", "--port", "0", "--conformance-echo"])
        let port = try process.waitForListening()
        let client = try TestWebSocketClient.connect(port: port, path: "/v1/echo", subprotocols: [])
        try client.send(text: "echo")
        #expect(try client.readText() == "echo")
        process.send(signal: SIGTERM)
        #expect(try client.readClose() == 1001)
        #expect(try process.waitForExit() == 0)
    }
}
