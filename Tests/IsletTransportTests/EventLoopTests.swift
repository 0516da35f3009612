import IsletTestSupport
import IsletTransport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Starts a loop, runs `body`, stops it and returns how it closed.
func withLoop(_ body: (EventLoop) async throws -> Void) async throws -> EventLoop.Termination {
    let loop = try EventLoop(name: "test-loop", logger: makeTestLogger())
    try loop.start()
    do { try await body(loop) } catch {
        loop.execute { loop.stop() }
        _ = await loop.terminated()
        throw error
    }
    loop.execute { loop.stop() }
    return await loop.terminated()
}

/// An actor whose executor is the loop.
actor LoopActor {
    let loop: EventLoop
    var count = 0
    init(loop: EventLoop) { self.loop = loop }
    nonisolated var unownedExecutor: UnownedSerialExecutor { self.loop.asUnownedSerialExecutor() }
    func bump() -> (Int, Bool) {
        self.count += 1
        return (self.count, self.loop.inEventLoop)
    }
}

@Suite("Event loop")
struct EventLoopTests {
    @Test("jobs run on the loop thread, in order, and the loop closes cleanly")
    func jobs() async throws {
        let termination = try await withLoop { loop in
            let order = Mutex<[Int]>([])
            for index in 0..<100 { loop.execute { order.withLock { $0.append(index) } } }
            let onLoop = try await loop.submit { loop.inEventLoop }
            #expect(onLoop)
            #expect(!loop.inEventLoop)
            #expect(order.withLock { $0 } == Array(0..<100))
        }
        #expect(termination.isClean)
    }

    @Test("one-shot, repeating and cancelled timers")
    func timers() async throws {
        let termination = try await withLoop { loop in
            let fired: [String] = await withCheckedContinuation {
                (continuation: CheckedContinuation<[String], Never>) in
                loop.execute {
                    var log: [String] = []
                    let never = loop.scheduleTimer(after: .milliseconds(5)) { log.append("never") }
                    never.cancel()
                    loop.scheduleTimer(after: .milliseconds(1)) { log.append("once") }
                    var ticks = 0
                    var repeating: LoopTimer?
                    repeating = loop.scheduleTimer(after: .milliseconds(2), repeating: .milliseconds(2)) {
                        ticks += 1
                        log.append("tick")
                        if ticks == 3 {
                            repeating?.cancel()
                            loop.scheduleTimer(after: .milliseconds(10)) { continuation.resume(returning: log) }
                        }
                    }
                }
            }
            #expect(fired.filter { $0 == "tick" }.count == 3)
            #expect(fired.contains("once"))
            #expect(!fired.contains("never"))
        }
        #expect(termination.isClean)
    }

    @Test("stop closes pending timers and signal handlers: uv_loop_close returns 0")
    func stopClosesHandles() async throws {
        let termination = try await withLoop { loop in
            try await loop.submit {
                loop.scheduleTimer(after: .seconds(3600)) {}
                loop.scheduleTimer(after: .seconds(1), repeating: .seconds(1)) {}
                try loop.onSignal(SIGUSR2) { _ in }
            }
        }
        #expect(termination.isClean)
    }

    @Test("a signal is delivered as a loop callback")
    func signal() async throws {
        let termination = try await withLoop { loop in
            let received: Int32 = try await withCheckedThrowingContinuation { continuation in
                loop.execute {
                    do {
                        var registration: LoopSignal?
                        registration = try loop.onSignal(SIGUSR1) { signal in
                            registration?.cancel()
                            continuation.resume(returning: signal)
                        }
                        kill(getpid(), SIGUSR1)
                    } catch { continuation.resume(throwing: error) }
                }
            }
            #expect(received == SIGUSR1)
        }
        #expect(termination.isClean)
    }

    @Test("an actor can run on the loop as its executor")
    func actorExecutor() async throws {
        let termination = try await withLoop { loop in
            let actor = LoopActor(loop: loop)
            for expected in 1...3 {
                let (count, onLoop) = await actor.bump()
                #expect(count == expected)
                #expect(onLoop)
            }
        }
        #expect(termination.isClean)
    }

    @Test("jobs sent after stop are refused")
    func afterStop() async throws {
        let loop = try EventLoop(name: "test-loop", logger: makeTestLogger())
        try loop.start()
        loop.execute { loop.stop() }
        let termination = await loop.terminated()
        #expect(termination.isClean)
        #expect(!loop.execute {})
        await #expect(throws: TransportError.self) { try await loop.submit { 1 } }
    }
}
