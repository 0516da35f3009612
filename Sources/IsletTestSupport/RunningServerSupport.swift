public import IsletCore
public import IsletServer
public import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Where this package lives, found from this file's path at build time.
public enum PackagePaths {
    /// The package root (the directory holding Package.swift).
    public static let root: String = {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Sources/IsletTestSupport/RunningServerSupport.swift
        return parts.joined(separator: "/")
    }()

    /// The dashboard directory served at `/`.
    public static var publicDirectory: String { self.root + "/Public" }

    /// The debug build of the `islet` executable.
    public static var isletExecutable: String { self.root + "/.build/debug/islet" }
}

/// A logger for tests: silent unless `ISLET_TEST_LOG_LEVEL` names a level (then to stderr).
/// Never bootstraps the logging system.
public func makeTestLogger(label: String = "islet.test") -> Logger {
    guard let text = getenv("ISLET_TEST_LOG_LEVEL").map({ String(cString: $0) }),
        let level = Logger.Level(rawValue: text)
    else { return Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() }) }
    var logger = Logger(label: label, factory: { StreamLogHandler.standardError(label: $0) })
    logger.logLevel = level
    return logger
}

extension IsletConfiguration {
    /// A configuration for tests: port 0, the package's `Public/`, a short grace period.
    public static func testing(
        publicDirectory: String? = PackagePaths.publicDirectory, limits: Limits = Limits(),
        virtualClockStart: Instant? = TestServer.start
    ) -> IsletConfiguration {
        IsletConfiguration(
            host: "127.0.0.1", port: 0, publicDirectory: publicDirectory, limits: limits,
            shutdownGracePeriod: .seconds(2), virtualClockStart: virtualClockStart)
    }
}

/// Runs `body` against a real server on 127.0.0.1 (port 0), then shuts it down and checks that
/// its loop closed cleanly (`uv_loop_close` returned 0). Holds `LiveTestLock` throughout.
///
/// - Throws: What `body` throws, or `TestClientError` if the loop did not close cleanly.
public func withRunningServer<T: Sendable>(
    _ configuration: IsletConfiguration = .testing(), routes: [Route] = [],
    timeSource: any TimeSource = SystemTimeSource(), _ body: (RunningServer) async throws -> T
) async throws -> T {
    try await withLiveTestLock { try await runServer(configuration, routes, timeSource, body) }
}

private func runServer<T: Sendable>(
    _ configuration: IsletConfiguration, _ routes: [Route], _ timeSource: any TimeSource,
    _ body: (RunningServer) async throws -> T
) async throws -> T {
    let server = try await RunningServer.start(
        configuration: configuration, logger: makeTestLogger(), timeSource: timeSource, routes: routes)
    let result: Result<T, any Error>
    do { result = .success(try await body(server)) } catch { result = .failure(error) }
    server.shutdown()
    let termination = await server.terminated()
    guard termination.isClean else {
        throw TestClientError("uv_loop_close returned \(termination.loopCloseResult): a handle leaked")
    }
    return try result.get()
}
