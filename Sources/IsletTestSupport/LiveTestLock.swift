/// Lets one live-socket test run at a time in a test process.
///
/// libwebsockets 4.1.6 closes its cancel-service eventfd twice when a context on a libuv loop is
/// destroyed: once synchronously in `lws_destroy_event_pipe`, and again from the libuv close
/// callback a loop turn later (`lib/core-net/vhost.c`, `lib/event-libs/libuv/libuv.c`). If
/// another thread opened a socket in between, it received that descriptor number and lws
/// closes it. A server process destroys its context once, at exit, so only a test process
/// that runs servers and clients side by side is exposed; there, live tests take this lock.
public actor LiveTestLock {
    public static let shared = LiveTestLock()
    private var isHeld = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Waits until the lock is free, then holds it.
    public func acquire() async {
        guard self.isHeld else {
            self.isHeld = true
            return
        }
        await withCheckedContinuation { self.waiters.append($0) }
    }

    /// Hands the lock to the next waiter, or frees it.
    public func release() {
        if self.waiters.isEmpty { self.isHeld = false } else { self.waiters.removeFirst().resume() }
    }
}

/// Runs `body` holding `LiveTestLock.shared`.
@discardableResult
public func withLiveTestLock<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    await LiveTestLock.shared.acquire()
    do {
        let result = try await body()
        await LiveTestLock.shared.release()
        return result
    } catch {
        await LiveTestLock.shared.release()
        throw error
    }
}
