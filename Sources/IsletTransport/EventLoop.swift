public import Logging
import Synchronization

/// One libuv loop on its own thread: the single owner of every connection, timer and signal
/// handler of a server (or of a load generator).
///
/// Other threads reach the loop only through `execute(_:)` (a `uv_async_t` wake-up that drains
/// the whole queue, because libuv coalesces wake-ups). Everything else must be called on the
/// loop thread. The loop ends when `stop()` has closed its own handles and every other owner
/// (the libwebsockets context) has closed theirs; then `uv_loop_close` runs and its result is
/// reported by `terminated()` (0 means nothing leaked).
///
/// ```swift
/// let loop = try EventLoop(name: "islet-loop", logger: logger)
/// try loop.start()
/// loop.execute { let timer = loop.scheduleTimer(after: .seconds(1)) { … } }
/// …
/// loop.execute { loop.stop() }
/// let termination = await loop.terminated()   // termination.isClean
/// ```
public final class EventLoop: @unchecked Sendable {
    /// How the loop ended.
    public struct Termination: Sendable, Equatable {
        /// What `uv_loop_close` returned: 0 when every handle was closed, `UV_EBUSY` otherwise.
        public let loopCloseResult: Int32
        /// True when the loop closed with no handle left open.
        public var isClean: Bool { self.loopCloseResult == 0 }
    }

    private enum Job {
        case closure(@Sendable () -> Void)
        case task(UnownedJob)
    }

    private struct Shared {
        var jobs: [Job] = []
        var acceptsJobs = true
        var termination: Termination?
        var waiters: [CheckedContinuation<Termination, Never>] = []
    }

    /// A name for the thread and the logs.
    public let name: String
    let logger: Logger
    let uv: UVLoop
    private var wakeup: UVAsyncHandle!
    private let shared = Mutex(Shared())
    private let threadID = Atomic<UInt>(0)

    // Loop-confined state.
    private var openTimers: [ObjectIdentifier: LoopTimer] = [:]
    private var openSignals: [ObjectIdentifier: LoopSignal] = [:]
    private var openHooks: [ObjectIdentifier: LoopHook] = [:]
    private var exitHooks: [() -> Void] = []
    private var isStopping = false

    /// Creates the loop. It does not run until `start()`.
    ///
    /// - Throws: `TransportError` if libuv cannot create the loop.
    public init(name: String, logger: Logger) throws(TransportError) {
        self.name = name
        self.logger = logger
        self.uv = try UVLoop()
        self.wakeup = try UVAsyncHandle(loop: self.uv) { [unowned self] in self.drainJobs() }
    }

    /// Starts the loop thread. Call once.
    ///
    /// - Throws: `TransportError` if the thread cannot be created.
    public func start() throws(TransportError) {
        try LoopThread.spawn(name: self.name) { [self] in self.runOnThread() }
    }

    private func runOnThread() {
        self.threadID.store(LoopThread.current, ordering: .releasing)
        self.drainJobs()
        _ = self.uv.run()
        for hook in self.exitHooks { hook() }
        self.exitHooks = []
        let termination = Termination(loopCloseResult: self.uv.close())
        if !termination.isClean {
            self.logger.warning("loop closed with open handles", metadata: ["islet.loop": "\(self.name)"])
        }
        let waiters = self.shared.withLock { shared in
            shared.termination = termination
            defer { shared.waiters = [] }
            return shared.waiters
        }
        for waiter in waiters { waiter.resume(returning: termination) }
    }

    /// True when called on the loop thread.
    public var inEventLoop: Bool { self.threadID.load(ordering: .acquiring) == LoopThread.current }

    /// Stops the process if not called on the loop thread.
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(self.inEventLoop, "must be called on the loop thread of \(self.name)", file: file, line: line)
    }

    /// Runs `job` on the loop thread, soon. Safe to call from any thread.
    ///
    /// Jobs run in the order they were submitted. After the loop stopped, jobs are dropped.
    /// - Returns: false if the loop no longer accepts work.
    @discardableResult
    public func execute(_ job: @escaping @Sendable () -> Void) -> Bool {
        self.enqueue(.closure(job))
    }

    private func enqueue(_ job: Job) -> Bool {
        self.shared.withLock { shared in
            guard shared.acceptsJobs else { return false }
            shared.jobs.append(job)
            // Sending under the lock orders it before `stop()` closes the handle.
            if shared.jobs.count == 1 { self.wakeup.send() }
            return true
        }
    }

    private func drainJobs() {
        while true {
            let jobs = self.shared.withLock { shared in
                defer { shared.jobs = [] }
                return shared.jobs
            }
            if jobs.isEmpty { return }
            for job in jobs {
                switch job {
                case .closure(let body): body()
                case .task(let task): task.runSynchronously(on: self.asUnownedSerialExecutor())
                }
            }
        }
    }

    /// Waits until the loop thread has run `uv_loop_close`.
    public func terminated() async -> Termination {
        await withCheckedContinuation { continuation in
            let done = self.shared.withLock { shared -> Termination? in
                if let termination = shared.termination { return termination }
                shared.waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Stops accepting jobs, runs the ones already queued, and closes the loop's own handles
    /// (wake-up, timers, signals). `uv_run` returns once the other owners have closed theirs.
    /// Must be called on the loop thread. Calling it twice has no further effect.
    public func stop() {
        self.preconditionInEventLoop()
        guard !self.isStopping else { return }
        self.isStopping = true
        self.shared.withLock { $0.acceptsJobs = false }
        self.drainJobs()
        self.wakeup.close()
        for timer in self.openTimers.values { timer.cancel() }
        for signal in self.openSignals.values { signal.cancel() }
        for hook in self.openHooks.values { hook.cancel() }
    }

    /// True once `stop()` has been called. Must be called on the loop thread.
    public var isStopped: Bool { self.isStopping }

    /// Registers work to run on the loop thread after `uv_run` returned and before
    /// `uv_loop_close` (libwebsockets' second `lws_context_destroy`). Must be called on the
    /// loop thread.
    func atExit(_ hook: @escaping () -> Void) {
        self.exitHooks.append(hook)
    }

    /// The loop's cached time in milliseconds (libuv's `uv_now`), read once per iteration.
    /// Must be called on the loop thread.
    public var nowMilliseconds: UInt64 { self.uv.now }

    // MARK: Timers and signals

    /// Runs `body` on the loop thread after `delay`, and then every `interval` if given.
    ///
    /// Must be called on the loop thread. A timer scheduled after `stop()` never fires.
    /// - Returns: A handle whose `cancel()` stops the timer.
    @discardableResult
    public func scheduleTimer(after delay: Duration, repeating interval: Duration? = nil, _ body: @escaping () -> Void)
        -> LoopTimer
    {
        self.preconditionInEventLoop()
        let timer = LoopTimer(loop: self)
        guard !self.isStopping else {
            timer.cancel()
            return timer
        }
        self.openTimers[ObjectIdentifier(timer)] = timer
        timer.start(delay: delay, interval: interval, body)
        return timer
    }

    /// Calls `body` on the loop thread whenever the process receives `signal`.
    ///
    /// Must be called on the loop thread. libuv installs the process-wide handler.
    /// - Throws: `TransportError` if the handler cannot be installed.
    @discardableResult
    public func onSignal(_ signal: Int32, _ body: @escaping (Int32) -> Void) throws(TransportError) -> LoopSignal {
        self.preconditionInEventLoop()
        let handle = try UVSignalHandle(loop: self.uv, signal: signal, body)
        let registration = LoopSignal(loop: self, handle: handle)
        self.openSignals[ObjectIdentifier(registration)] = registration
        return registration
    }

    /// Calls `body` on the loop thread once per loop iteration, after that iteration's timers
    /// and I/O callbacks and just before the loop waits for more (libuv's prepare phase): the
    /// "before sleep" hook where a server flushes the work of a loop turn. Timers started and
    /// writes requested from `body` are taken into account by the wait that follows.
    ///
    /// Must be called on the loop thread. A hook registered after `stop()` never runs.
    /// - Returns: A handle whose `cancel()` removes the hook.
    @discardableResult
    public func beforePoll(_ body: @escaping () -> Void) -> LoopHook {
        self.preconditionInEventLoop()
        let hook = LoopHook(loop: self, body: self.isStopping ? nil : body)
        if !self.isStopping { self.openHooks[ObjectIdentifier(hook)] = hook }
        return hook
    }

    fileprivate func forget(_ timer: LoopTimer) { self.openTimers[ObjectIdentifier(timer)] = nil }
    fileprivate func forget(_ hook: LoopHook) { self.openHooks[ObjectIdentifier(hook)] = nil }
    fileprivate func forget(_ signal: LoopSignal) { self.openSignals[ObjectIdentifier(signal)] = nil }
}

/// A timer on an `EventLoop`. Loop-confined: use it only on its loop's thread.
public final class LoopTimer {
    private unowned let loop: EventLoop
    private let handle: UVTimerHandle

    fileprivate init(loop: EventLoop) {
        self.loop = loop
        self.handle = UVTimerHandle(loop: loop.uv)
    }

    fileprivate func start(delay: Duration, interval: Duration?, _ body: @escaping () -> Void) {
        let repeats = interval.map(Self.milliseconds) ?? 0
        self.handle.start(afterMilliseconds: Self.milliseconds(delay), repeatMilliseconds: repeats) { [unowned self] in
            if repeats == 0 { self.cancel() }
            body()
        }
    }

    /// True until the timer fired (one-shot) or was cancelled.
    public var isActive: Bool { !self.handle.isClosing }

    /// Stops the timer. Must be called on the loop thread; calling it again does nothing.
    public func cancel() {
        guard !self.handle.isClosing else { return }
        self.handle.close()
        self.loop.forget(self)
    }

    private static func milliseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1000 + UInt64((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}

/// A signal registration on an `EventLoop`. Loop-confined.
public final class LoopSignal {
    private unowned let loop: EventLoop
    private let handle: UVSignalHandle

    fileprivate init(loop: EventLoop, handle: UVSignalHandle) {
        self.loop = loop
        self.handle = handle
    }

    /// Removes the handler. Must be called on the loop thread.
    public func cancel() {
        guard !self.handle.isClosing else { return }
        self.handle.close()
        self.loop.forget(self)
    }
}

/// A before-poll hook on an `EventLoop` (see `EventLoop.beforePoll`). Loop-confined.
public final class LoopHook {
    private unowned let loop: EventLoop
    private let handle: UVPrepareHandle?

    fileprivate init(loop: EventLoop, body: (() -> Void)?) {
        self.loop = loop
        self.handle = body.map { UVPrepareHandle(loop: loop.uv, $0) }
    }

    /// Removes the hook. Must be called on the loop thread; calling it again does nothing.
    public func cancel() {
        guard let handle = self.handle, !handle.isClosing else { return }
        handle.close()
        self.loop.forget(self)
    }
}

extension EventLoop: SerialExecutor {
    /// Lets an actor run on this loop (`nonisolated var unownedExecutor { loop.asUnownedSerialExecutor() }`).
    public func enqueue(_ job: consuming ExecutorJob) {
        let accepted = self.enqueue(.task(UnownedJob(job)))
        precondition(accepted, "an actor on loop \(self.name) was used after the loop stopped")
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        self.preconditionInEventLoop()
    }
}

extension EventLoop {
    /// Runs `body` on the loop thread and returns its result. Safe to call from any thread
    /// except the loop thread itself (it would wait for itself).
    ///
    /// - Throws: What `body` throws, or `TransportError.loopStopped` if the loop stopped.
    public func submit<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let accepted = self.execute {
                do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
            }
            if !accepted { continuation.resume(throwing: TransportError.loopStopped) }
        }
    }
}
