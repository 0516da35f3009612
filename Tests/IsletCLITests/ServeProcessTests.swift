import Foundation
import IsletCore
import IsletTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Black-box tests of the built `islet serve` process (`.build/debug/islet`).
@Suite("islet serve as a process")
struct ServeProcessTests {
    @Test("near its open-file limit the server closes new connections at accept rather than spinning on a failing accept and flooding its log; it serves again once they go")
    func openFileLimit() throws {
        let server = try IsletProcess(
            arguments: ["serve", "--port", "0", "--max-connections", "30"] + TestServer.serveArguments,
            launcher: ["/usr/bin/prlimit", "--nofile=64:64"])
        let port = try server.waitForListening()
        // 64 descriptors, 32 kept back: the rest of these are closed at accept.
        let sockets = try (0..<100).map { _ in try TestSocket.connect(port: port) }
        var closed = 0
        for socket in sockets where (try? socket.read(timeout: .milliseconds(200)))?.isEmpty == true { closed += 1 }
        #expect(closed >= 50, "\(closed) of 100 closed by the server")
        for socket in sockets { socket.close() }
        try waitUntil(timeout: .seconds(10), "the server answers again") {
            (try? TestHTTP.request(port: port, "GET", "/healthz").status) == 200
        }
        server.send(signal: SIGTERM)
        #expect(try server.waitForExit() == 0)
        let log = server.standardError()
        #expect(!log.contains("accept: errno"), "the accept never failed: \(log.suffix(500))")
        #expect(log.contains("the open-file limit leaves fewer descriptors for connections"), "\(log.suffix(500))")
    }

    @Test("port 0: one machine-readable listening line on stdout, and the server answers")
    func listeningLine() throws {
        let process = try IsletProcess(arguments: ["serve", "--port", "0"])
        let port = try process.waitForListening()
        #expect(port > 0 && port != 8080)
        #expect(try TestHTTP.request(port: port, "/healthz").status == 200)
        process.send(signal: SIGTERM)
        #expect(try process.waitForExit() == 0)
        #expect(try process.readLine() == nil)
    }

    @Test("--virtual-clock starts a fresh simulation on a paused virtual clock at that instant")
    func virtualClock() throws {
        let process = try IsletProcess(arguments: ["serve", "--port", "0"] + TestServer.serveArguments)
        let port = try process.waitForListening()
        defer { process.send(signal: SIGTERM) }
        let clock = try TestHTTP.request(port: port, "/v1/clock").json()["result"]
        #expect(clock?["mode"] == "virtual")
        #expect(clock?["now"] == "2026-11-22T08:00:00Z")
        #expect(clock?["rate"] == 0)
        let bad = try IsletProcess(arguments: ["serve", "--port", "0", "--virtual-clock", "yesterday"])
        #expect(try bad.waitForExit() != 0)
    }

    @Test("SIGTERM closes every WebSocket with 1001 and exits 0", arguments: [SIGTERM, SIGINT])
    func gracefulShutdown(signal: Int32) throws {
        let process = try IsletProcess(arguments: ["serve", "--port", "0"])
        let port = try process.waitForListening()
        let clients = try (0..<10).map { _ in try TestWebSocketClient.connect(port: port) }
        for client in clients { #expect(try client.readJSON()["type"] == "hello") }
        process.send(signal: signal)
        for client in clients { #expect(try client.readClose() == 1001) }
        #expect(try process.waitForExit() == 0)
        #expect(throws: TestClientError.self) { _ = try TestSocket.connect(port: port) }
    }

    @Test("a start that fails (its port in use) leaves no new log behind, so the next start gets the --virtual-clock it is given")
    func failedStartLeavesNoLog() throws {
        try withTemporaryDirectory { dir in
            let holder = try IsletProcess(arguments: ["serve", "--port", "0", "--db", ":memory:", "--demo", "off"])
            let busy = try holder.waitForListening()
            defer { holder.send(signal: SIGTERM) }
            let log = dir.file("fresh.sqlite")
            let refused = try IsletProcess(arguments: [
                "serve", "--port", String(busy), "--db", log, "--demo", "off", "--virtual-clock", "2021-05-05T00:00:00Z",
            ])
            #expect(try refused.waitForExit() != 0)
            #expect(!FileManager.default.fileExists(atPath: log))
            let started = try IsletProcess(arguments: [
                "serve", "--port", "0", "--db", log, "--demo", "off", "--virtual-clock", "2030-01-01T00:00:00Z",
            ])
            let port = try started.waitForListening()
            defer { started.send(signal: SIGTERM) }
            #expect(try TestHTTP.request(port: port, "/v1/clock").json()["result"]?["now"] == "2030-01-01T00:00:00Z")
        }
    }

    @Test("--db X and --db X.sqlite name one world store: it is bound to the log that made it, and a server on the other log is refused at start (exit 2), leaving no log, instead of taking its simulations")
    func worldStoreBoundToItsLog() throws {
        try withTemporaryDirectory { dir in
            let first = try ServeProcess.start(db: dir.file("log"))
            #expect(try TestHTTP.createSimulation(port: first.port, ["id": "mine"]).status == 201)
            #expect(try first.stop() == 0)
            let other = try runIslet(["serve", "--port", "0", "--db", dir.file("log.sqlite")] + TestServer.serveArguments)
            #expect(other.status == 2)
            #expect(other.errors.contains("holds the simulations of another command log"), "\(other.errors)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("log.sqlite")))
            let again = try ServeProcess.start(db: dir.file("log"))
            defer { _ = try? again.stop() }
            #expect(try TestHTTP.state(port: again.port, simulation: "mine").status == 200)
        }
    }

    @Test("a non-loopback address without --admin-token is refused with exit code 2")
    func nonLoopbackNeedsToken() throws {
        let process = try IsletProcess(arguments: ["serve", "--host", "0.0.0.0", "--port", "0"])
        #expect(try process.waitForExit() == 2)
        #expect(process.standardError().contains("admin-token"))
        #expect(try process.readLine() == nil)
    }

    @Test("environment variables configure serve; flags win over them")
    func environment() throws {
        let process = try IsletProcess(
            arguments: ["serve"],
            environment: ["ISLET_PORT": "0", "ISLET_HOST": "127.0.0.1", "ISLET_LOG_LEVEL": "warning"])
        let port = try process.waitForListening()
        #expect(port != 8080)
        process.send(signal: SIGTERM)
        #expect(try process.waitForExit() == 0)

        let flagWins = try IsletProcess(arguments: ["serve", "--port", "0"], environment: ["ISLET_PORT": "not-a-port"])
        _ = try flagWins.waitForListening()
        flagWins.send(signal: SIGTERM)
        #expect(try flagWins.waitForExit() == 0)
    }

    @Test("a public directory without index.html is refused with exit code 2")
    func badPublicDirectory() throws {
        let process = try IsletProcess(arguments: ["serve", "--port", "0", "--public-dir", "/nonexistent"])
        #expect(try process.waitForExit() == 2)
        #expect(process.standardError().contains("public-dir"))
    }

    @Test("--print-config prints the effective configuration")
    func printConfig() throws {
        let process = try IsletProcess(arguments: ["serve", "--print-config", "--port", "9"])
        var lines: [String] = []
        while let line = try process.readLine() { lines.append(line) }
        #expect(try process.waitForExit() == 0)
        #expect(lines.contains("port: 9"))
        #expect(lines.contains("host: 127.0.0.1"))
    }
}
