import ArgumentParser
import Foundation
import IsletServer
import Logging

/// `islet bench idle`: resident memory of an `islet serve` process when idle and when holding
/// many idle WebSockets. The server is a separate process (this binary's `serve`), the clients
/// are libwebsockets client connections in this process.
struct BenchIdle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "Measure the server's memory idle and with many idle WebSockets.",
        discussion: "Use a release build: swift build -c release && .build/release/islet bench idle")

    @Option(help: "Idle WebSockets to open.")
    var connections = 10_000

    @Option(help: "Handshakes in flight at once.")
    var maxInFlight = 200

    @Option(help: "Seconds to let the server settle before each reading.")
    var settleSeconds = 3

    func run() async throws {
        let limit = raiseOpenFileLimit()
        guard limit > self.connections + 64 else {
            throw ValidationError("open-file limit \(limit) is too low for \(self.connections) connections")
        }
        var logger = Logger(label: "islet.bench")
        logger.logLevel = .warning
        let server = try ServerProcess.launch()
        defer { server.stop() }
        try await Task.sleep(for: .seconds(self.settleSeconds))
        let idle = try residentKiB(of: server.pid)
        let generator = try await StreamLoadGenerator.start(logger: logger)
        let started = ContinuousClock.now
        let report = try await generator.openStreams(
            count: self.connections, host: "127.0.0.1", port: server.port, maxInFlight: self.maxInFlight)
        let rampTime = ContinuousClock.now - started
        try await Task.sleep(for: .seconds(self.settleSeconds))
        let loaded = try residentKiB(of: server.pid)
        let clientRSS = try residentKiB(of: getpid())
        let perConnection = report.greeted > 0 ? Double(loaded - idle) * 1024 / Double(report.greeted) : 0
        print(
            """
            islet bench idle
              connections requested: \(self.connections), open with hello: \(report.greeted), failed: \(report.failed)\
            \(report.firstFailure.map { " (first: \($0))" } ?? "")
              ramp time: \(rampTime)
              server VmRSS idle: \(idle) KiB
              server VmRSS with \(report.greeted) idle WebSockets: \(loaded) KiB
              server memory per idle WebSocket: \(Int(perConnection)) bytes
              load generator VmRSS: \(clientRSS) KiB
            """)
        let clean = await generator.stop()
        if !clean { printError("islet bench idle: the load generator's loop did not close cleanly") }
    }
}

/// `islet serve --port 0` as a child process of the benchmark.
final class ServerProcess {
    let process: Process
    let port: Int
    var pid: Int32 { self.process.processIdentifier }

    private init(process: Process, port: Int) {
        self.process = process
        self.port = port
    }

    static func launch(extraArguments: [String] = []) throws -> ServerProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        // A throwaway log unless the benchmark names one: a bench never writes ./islet.sqlite.
        let store = extraArguments.contains("--db") ? [] : ["--db", ":memory:"]
        process.arguments = ["serve", "--port", "0", "--log-level", "warning"] + store + extraArguments
        let output = Pipe()
        process.standardOutput = output
        try BenchChildren.run(process)
        var line: [UInt8] = []
        let fd = output.fileHandleForReading.fileDescriptor
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 && byte != 10 { line.append(byte) }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("listening on "), let port = text.split(separator: ":").last.flatMap({ Int($0) }) else {
            process.terminate()
            BenchChildren.release(process.processIdentifier)
            throw ValidationError("the server did not start: \(text)")
        }
        return ServerProcess(process: process, port: port)
    }

    /// SIGTERM, and waits for it.
    func stop() { self.end(with: SIGTERM) }

    /// SIGKILL, and waits for it.
    func kill() { self.end(with: SIGKILL) }

    private func end(with signal: Int32) {
        defer { BenchChildren.release(self.pid) }
        guard self.process.isRunning else { return }
        Glibc.kill(self.pid, signal)
        self.process.waitUntilExit()
    }
}

/// User + system CPU seconds a process has used, from /proc/<pid>/stat.
func cpuSeconds(of pid: Int32) throws -> Double {
    let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    // Fields after the command name (which is in parentheses and may hold spaces).
    guard let close = stat.lastIndex(of: ")") else { throw ValidationError("bad /proc/\(pid)/stat") }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
        throw ValidationError("bad /proc/\(pid)/stat")
    }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// VmRSS of a process, from /proc/<pid>/status, in KiB.
func residentKiB(of pid: Int32) throws -> Int {
    let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
    guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { throw ValidationError("no VmRSS for process \(pid)") }
    return kib
}

