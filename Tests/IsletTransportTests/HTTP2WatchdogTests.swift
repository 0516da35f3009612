import Testing

@testable import IsletTransport

@Suite("HTTP/2 watchdog")
struct HTTP2WatchdogTests {
    private func watchdog(handshake: Duration = .seconds(10), idle: Duration = .seconds(60)) -> HTTP2Watchdog {
        HTTP2Watchdog(handshakeTimeout: handshake, idleTimeout: idle, acceptedAt: 1_000)
    }

    @Test("slow TLS handshake: the deadline counts from the accept, whatever arrives meanwhile")
    func handshake() {
        var watchdog = self.watchdog()
        #expect(watchdog.verdict(at: 1_000, awaitingApplication: false, outputStuck: false) == .wait(until: 11_000))
        watchdog.progressed(at: 10_999)
        #expect(watchdog.verdict(at: 10_999, awaitingApplication: false, outputStuck: false) == .wait(until: 11_000))
        #expect(watchdog.verdict(at: 11_000, awaitingApplication: false, outputStuck: false) == .handshakeTimedOut)
        watchdog.handshakeFinished(at: 5_000)
        #expect(watchdog.verdict(at: 11_000, awaitingApplication: false, outputStuck: false) == .wait(until: 65_000))
    }

    @Test("idle connection: the deadline moves with each sign of progress, then the verdict is idle")
    func idle() {
        var watchdog = self.watchdog()
        watchdog.handshakeFinished(at: 2_000)
        watchdog.progressed(at: 30_000)
        watchdog.progressed(at: 20_000)  // a late report never moves the deadline back
        #expect(watchdog.verdict(at: 89_999, awaitingApplication: false, outputStuck: false) == .wait(until: 90_000))
        #expect(watchdog.verdict(at: 90_000, awaitingApplication: false, outputStuck: false) == .idle)
    }

    @Test("a reply the application still owes suspends the idle deadline, unless the output is stuck")
    func awaitingApplication() {
        var watchdog = self.watchdog()
        watchdog.handshakeFinished(at: 2_000)
        #expect(watchdog.verdict(at: 500_000, awaitingApplication: true, outputStuck: false) == .wait(until: nil))
        #expect(watchdog.verdict(at: 500_000, awaitingApplication: true, outputStuck: true) == .stalled)
        #expect(watchdog.verdict(at: 500_000, awaitingApplication: false, outputStuck: true) == .stalled)
    }

    @Test("zero timeouts never fire")
    func never() {
        var watchdog = self.watchdog(handshake: .zero, idle: .zero)
        #expect(watchdog.verdict(at: .max / 2, awaitingApplication: false, outputStuck: false) == .wait(until: nil))
        watchdog.handshakeFinished(at: 2_000)
        #expect(watchdog.verdict(at: .max / 2, awaitingApplication: false, outputStuck: true) == .wait(until: nil))
    }

    @Test("timeouts round up to whole milliseconds and absurd ones do not overflow")
    func rounding() {
        let short = HTTP2Watchdog(handshakeTimeout: .microseconds(1), idleTimeout: .zero, acceptedAt: 0)
        #expect(short.verdict(at: 0, awaitingApplication: false, outputStuck: false) == .wait(until: 1))
        let huge = HTTP2Watchdog(handshakeTimeout: .seconds(Int64.max), idleTimeout: .zero, acceptedAt: 0)
        #expect(huge.verdict(at: 0, awaitingApplication: false, outputStuck: false) == .wait(until: (1 << 40) * 1000))
    }
}
