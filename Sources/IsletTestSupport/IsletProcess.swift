import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The built `islet` executable running as a child process, for black-box tests.
///
/// Every wait has a timeout: lines are read with poll(), the exit is awaited on a semaphore
/// signalled by the termination handler.
public final class IsletProcess: @unchecked Sendable {
    let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private let exited = DispatchSemaphore(value: 0)
    private var pending: [UInt8] = []

    /// Starts `islet` with `arguments` and extra environment variables.
    ///
    /// Unless `environment` (or `--db`) names one, the command log is `:memory:` (`ISLET_DB`), so
    /// test processes never write `./islet.sqlite` nor lock one another out of it.
    /// `launcher` runs it (`["/usr/bin/prlimit", "--nofile=64:64"]`: a command that execs the
    /// rest of its arguments, so the process is still islet's).
    /// - Throws: `TestClientError` if the executable is not built (`swift build` first).
    public init(arguments: [String], environment: [String: String] = [:], launcher: [String] = []) throws {
        let path = PackagePaths.isletExecutable
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestClientError("\(path) is missing: build it first (scripts/test does)")
        }
        let command = launcher + [path] + arguments
        self.process.executableURL = URL(fileURLWithPath: command[0])
        self.process.arguments = Array(command.dropFirst())
        var env = ProcessInfo.processInfo.environment
        env["ISLET_DB"] = ":memory:"
        for (name, value) in environment { env[name] = value }
        self.process.environment = env
        self.process.standardOutput = self.output
        self.process.standardError = self.errors
        self.process.terminationHandler = { [exited] _ in exited.signal() }
        try self.process.run()
    }

    /// Reads one line of standard output; nil at end of output.
    public func readLine(timeout: Duration = .seconds(10)) throws -> String? {
        let fd = self.output.fileHandleForReading.fileDescriptor
        while true {
            if let newline = self.pending.firstIndex(of: 10) {
                let line = String(decoding: self.pending[..<newline], as: UTF8.self)
                self.pending.removeFirst(newline + 1)
                return line
            }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let (seconds, attoseconds) = timeout.components
            guard poll(&descriptor, 1, Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)) > 0 else {
                throw TestClientError("no output line within \(timeout)")
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 {
                if self.pending.isEmpty { return nil }
                defer { self.pending = [] }
                return String(decoding: self.pending, as: UTF8.self)
            }
            self.pending += buffer[..<n]
        }
    }

    /// Waits for `listening on http://HOST:PORT` and returns PORT.
    public func waitForListening(timeout: Duration = .seconds(10)) throws -> Int {
        guard let line = try self.readLine(timeout: timeout) else {
            throw TestClientError("islet exited before listening: \(self.standardError())")
        }
        guard line.hasPrefix("listening on http://"), let port = line.split(separator: ":").last.flatMap({ Int($0) })
        else {
            throw TestClientError("unexpected first line: \(line)")
        }
        return port
    }

    /// Whether the process has not exited yet.
    public var isRunning: Bool { self.process.isRunning }

    /// Sends a signal to the process, while it runs (never to a reaped, possibly reused, pid).
    public func send(signal: Int32) {
        guard self.process.isRunning else { return }
        kill(self.process.processIdentifier, signal)
    }

    /// The child's process identifier.
    public var pid: Int32 { self.process.processIdentifier }

    /// Each of the process's threads as the kernel sees it: name, state (R running, S sleeping,
    /// D in uninterruptible I/O) and wait channel. For failure messages: a server that is idle,
    /// busy or blocked in the kernel reads differently.
    public func threadStates() -> String {
        let tasks = "/proc/\(self.pid)/task"
        guard let ids = try? FileManager.default.contentsOfDirectory(atPath: tasks) else { return "no threads in \(tasks)" }
        return ids.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.map { id in
            func field(_ name: String) -> String {
                let text = (try? String(contentsOfFile: "\(tasks)/\(id)/\(name)", encoding: .utf8)) ?? "?"
                return text.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            // stat is "tid (name) state …"; the name may hold spaces and parentheses.
            let state = field("stat").split(separator: ")").last?.dropFirst().prefix(1) ?? "?"
            return "\(field("comm")) \(state) \(field("wchan"))"
        }.joined(separator: "; ")
    }

    /// Waits for the process to end and returns its exit status.
    public func waitForExit(timeout: Duration = .seconds(10)) throws -> Int32 {
        let (seconds, _) = timeout.components
        guard self.exited.wait(timeout: .now() + .seconds(Int(seconds))) == .success else {
            self.process.terminate()
            throw TestClientError("islet did not exit within \(timeout)")
        }
        self.exited.signal()
        return self.process.terminationStatus
    }

    /// Everything the process wrote to standard error (call after it exited).
    public func standardError() -> String {
        String(decoding: self.errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    deinit {
        if self.process.isRunning { self.process.terminate() }
    }
}
