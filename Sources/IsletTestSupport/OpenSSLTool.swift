import Dispatch
import Foundation

/// `/usr/bin/openssl`, for tests that need keys and signatures made by another implementation
/// than Islet's own (APNs provider keys: ES256 on P-256).
public struct OpenSSLTool: Sendable {
    /// The directory keys and signatures are written to.
    public let directory: TemporaryDirectory

    public init(in directory: TemporaryDirectory) { self.directory = directory }

    /// Runs `openssl` with `arguments` (bounded by `timeout`).
    /// - Returns: its standard output.
    /// - Throws: `TestClientError` with its standard error when it exits with another status than 0.
    @discardableResult
    public func run(_ arguments: [String], timeout: Duration = .seconds(30)) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: self.directory.path)
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        try process.run()
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        guard done.wait(timeout: .now() + .seconds(Int(timeout.components.seconds))) == .success else {
            process.terminate()
            throw TestClientError("openssl \(arguments.joined(separator: " ")) did not finish within \(timeout)")
        }
        guard process.terminationStatus == 0 else {
            throw TestClientError(
                "openssl \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                    + String(decoding: stderr, as: UTF8.self))
        }
        return [UInt8](stdout)
    }

    /// A new private key written to `name`, returned as PEM: by default an APNs-style P-256 key
    /// in PKCS#8 (`-----BEGIN PRIVATE KEY-----`, the form of Apple's `AuthKey_<key id>.p8`).
    /// - Parameter options: `genpkey` options, e.g. `["-algorithm", "RSA"]`.
    public func newPrivateKey(
        _ name: String, options: [String] = ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"]
    ) throws -> String {
        try self.run(["genpkey"] + options + ["-out", name])
        return try self.read(name)
    }

    /// The public half of the private key in file `name`, as a SubjectPublicKeyInfo PEM.
    public func publicKey(ofPrivateKey name: String) throws -> String {
        String(decoding: try self.run(["pkey", "-in", name, "-pubout"]), as: UTF8.self)
    }

    /// Writes `bytes` to file `name` in the directory.
    public func write(_ bytes: [UInt8], to name: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: self.directory.file(name)))
    }

    /// The text of file `name` in the directory.
    public func read(_ name: String) throws -> String {
        try String(contentsOfFile: self.directory.file(name), encoding: .utf8)
    }
}
