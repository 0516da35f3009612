import Foundation

/// Runs a process to completion (bounded by `timeout`) and returns its status and output.
public func runProcess(_ path: String, _ arguments: [String], timeout: Duration = .seconds(60)) throws -> (Int32, String) {
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
