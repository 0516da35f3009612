import Dispatch
import Foundation

/// Python (the project's `.venv`, made by `scripts/bootstrap --test`) with httpx and h2.
public enum PythonTools {
    public static var python: String { PackagePaths.root + "/.venv/bin/python" }
    public static var available: Bool { FileManager.default.isExecutableFile(atPath: Self.python) }
    /// `scripts/test` sets ISLET_REQUIRE_PYTHON_TOOLS=1: there the test must run, never skip.
    public static var required: Bool { ProcessInfo.processInfo.environment["ISLET_REQUIRE_PYTHON_TOOLS"] == "1" }
}

/// Runs a process to completion (bounded by `timeout`) and returns its status and output.
public func runProcess(_ path: String, _ arguments: [String], timeout: Duration = .seconds(60)) throws -> (Int32, String)
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let done = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in done.signal() }
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let (seconds, _) = timeout.components
    guard done.wait(timeout: .now() + .seconds(Int(seconds))) == .success else {
        process.terminate()
        throw TestClientError("\(path) did not finish within \(timeout)")
    }
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
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
