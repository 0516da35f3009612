import Dispatch
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Python (the project's `.venv`, made by `scripts/bootstrap --test`) with httpx and h2.
public enum PythonTools {
    public static var python: String { PackagePaths.root + "/.venv/bin/python" }
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: Self.python) }
    /// `scripts/test` sets ISLET_REQUIRE_PYTHON_TOOLS=1: there the test must run, never skip.
    public static var required: Bool { ProcessInfo.processInfo.environment["ISLET_REQUIRE_PYTHON_TOOLS"] == "1" }
}

/// Runs a process to completion (bounded by `timeout`) and returns its status and output.
///
/// The output is read while the process runs, so the timeout holds even when the process never
/// ends its output: it is then killed, and the error carries what it printed so far.
public func runProcess(
    _ path: String, _ arguments: [String], timeout: Duration = .seconds(60)
) throws -> (Int32, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let done = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in done.signal() }
    let collected = CollectedOutput(output.fileHandleForReading)
    try process.run()
    guard done.wait(timeout: .now() + .milliseconds(Int(timeout / .milliseconds(1)))) == .success else {
        kill(process.processIdentifier, SIGKILL)
        throw TestClientError("\(path) did not finish within \(timeout); its output so far: \(collected.text.suffix(3000))")
    }
    // A child of the process may still hold the pipe open: what came until then is enough.
    collected.waitForEnd(timeout: .seconds(5))
    return (process.terminationStatus, collected.text)
}

/// A pipe's output gathered as it comes, by a dispatch thread reading it to its end.
private final class CollectedOutput: @unchecked Sendable {
    private let lock = NSLock()
    private var bytes = Data()
    private let ended = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        DispatchQueue.global().async {
            while case let data = handle.availableData, !data.isEmpty {
                self.lock.withLock { self.bytes += data }
            }
            self.ended.signal()
        }
    }

    var text: String { self.lock.withLock { String(decoding: self.bytes, as: UTF8.self) } }

    func waitForEnd(timeout: Duration) {
        _ = self.ended.wait(timeout: .now() + .milliseconds(Int(timeout / .milliseconds(1))))
    }
}

/// A process the test talks to while it runs: its output is read line by line, each read
/// bounded by a timeout, and closing its standard input tells it to finish.
public final class ScriptProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let exited = DispatchSemaphore(value: 0)
    private let arrived = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var buffer: [UInt8] = []
    private var isAtEnd = false

    /// Starts `path` with `arguments`; standard output and standard error are read together.
    public init(_ path: String, _ arguments: [String]) throws {
        self.process.executableURL = URL(fileURLWithPath: path)
        self.process.arguments = arguments
        self.process.standardInput = self.input
        self.process.standardOutput = self.output
        self.process.standardError = self.output
        self.process.terminationHandler = { [exited] _ in exited.signal() }
        self.output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self else { return }
            self.lock.withLock {
                if data.isEmpty { self.isAtEnd = true } else { self.buffer += data }
            }
            self.arrived.signal()
        }
        try self.process.run()
    }

    /// The next line of output (without its newline).
    /// - Throws: `TestClientError` when none arrives within `timeout` or the output ends first.
    public func readLine(timeout: Duration) throws -> String {
        let deadline = DispatchTime.now() + .milliseconds(Int(timeout / .milliseconds(1)))
        while true {
            let (line, ended, pending): (String?, Bool, String) = self.lock.withLock {
                guard let newline = self.buffer.firstIndex(of: UInt8(ascii: "\n")) else {
                    return (nil, self.isAtEnd, String(decoding: self.buffer, as: UTF8.self))
                }
                let line = String(decoding: self.buffer[..<newline], as: UTF8.self)
                self.buffer.removeSubrange(...newline)
                return (line, false, "")
            }
            if let line { return line }
            if ended { throw TestClientError("the process ended before a line; its output: \(pending)") }
            guard self.arrived.wait(timeout: deadline) == .success else {
                throw TestClientError("no line within \(timeout); output so far: \(pending)")
            }
        }
    }

    /// Closes the process's standard input and waits (up to `timeout`) for it to exit.
    /// - Returns: its exit status.
    @discardableResult
    public func finish(timeout: Duration = .seconds(10)) throws -> Int32 {
        try? self.input.fileHandleForWriting.close()
        let deadline = DispatchTime.now() + .milliseconds(Int(timeout / .milliseconds(1)))
        guard self.exited.wait(timeout: deadline) == .success else {
            self.process.terminate()
            throw TestClientError("the process did not exit within \(timeout)")
        }
        return self.process.terminationStatus
    }

    deinit {
        if self.process.isRunning { self.process.terminate() }
        self.output.fileHandleForReading.readabilityHandler = nil
    }
}

/// A self-signed certificate for 127.0.0.1, for TLS listeners in tests.
public enum TestCertificate {
    /// The certificate and key files, made with `openssl` in a temporary directory once per test
    /// process (a `static let` is initialised once even when tests run in parallel; two
    /// `openssl` runs writing the same files raced each other).
    public static func files() throws -> (cert: String, key: String) { try Self.made.get() }

    private static let made = Result { () throws -> (cert: String, key: String) in
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("islet-tls-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let cert = directory + "/cert.pem"
        let key = directory + "/key.pem"
        let (status, output) = try runProcess(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        guard status == 0 else { throw TestClientError("openssl failed: \(output)") }
        return (cert, key)
    }
}
