import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletBench

@Suite("Load generator")
struct LoadGeneratorTests {
    @Test("opens streams through libwebsockets client mode; each receives hello; stops cleanly")
    func openStreams() async throws {
        try await withRunningServer { server in
            let generator = try await StreamLoadGenerator.start(logger: makeTestLogger())
            let report = try await generator.openStreams(
                count: 50, host: "127.0.0.1", port: server.port, maxInFlight: 8)
            #expect(report.greeted == 50)
            #expect(report.failed == 0)
            #expect(report.messagesReceived == 50)
            let open = try await server.withServer { $0.openStreams }
            #expect(open == 50)
            #expect(await generator.stop())
        }
    }

    @Test("connections to a closed port are reported as failures")
    func failures() async throws {
        try await withLiveTestLock {
            let generator = try await StreamLoadGenerator.start(logger: makeTestLogger())
            let port = try TestSocket.unusedPort()
            let report = try await generator.openStreams(count: 3, host: "127.0.0.1", port: port)
            #expect(report.failed == 3)
            #expect(report.greeted == 0)
            #expect(await generator.stop())
        }
    }
}
