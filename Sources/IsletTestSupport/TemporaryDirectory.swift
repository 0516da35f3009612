import Foundation

/// A directory of a test's own (databases, scenario files), removed when the test is done.
public struct TemporaryDirectory: Sendable {
    public let path: String

    /// A path inside the directory.
    public func file(_ name: String) -> String { self.path + "/" + name }
}

/// Runs `body` with a new temporary directory, then removes it with everything in it.
public func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory.path) }
    return try await body(directory)
}

/// Runs `body` with a new temporary directory, then removes it with everything in it.
public func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) throws -> T) throws -> T {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory.path) }
    return try body(directory)
}

private func makeTemporaryDirectory() throws -> TemporaryDirectory {
    let path = FileManager.default.temporaryDirectory.path + "/islet-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    return TemporaryDirectory(path: path)
}
