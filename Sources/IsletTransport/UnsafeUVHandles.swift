// Thread and lifetime rules for libuv handles:
// - Every function here must be called on the loop thread, except `UVAsyncHandle.send()`,
//   which is safe to call from any thread (libuv's one thread-safe entry).
// - Each handle's C memory is allocated once by its box and freed only in `deinit`. The box
//   retains itself through `handle->data` from `init` until libuv's close callback, so the
//   memory outlives `uv_close` exactly as libuv requires ("the memory can only be released
//   in close_cb or after it has returned").
// - C callbacks find their box through `handle->data` with `Unmanaged`; they capture nothing.

internal import CLibUV

/// Casts any libuv handle pointer to the common `uv_handle_t` header it starts with.
@inline(__always)
private func asHandle<H>(_ pointer: UnsafeMutablePointer<H>) -> UnsafeMutablePointer<uv_handle_t> {
    UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: uv_handle_t.self)
}

/// The close callback shared by every box: drops the self-retain taken in `init`.
private let releaseBoxOnClose: uv_close_cb = { handle in
    guard let data = handle?.pointee.data else { return }
    Unmanaged<AnyObject>.fromOpaque(data).release()
}

/// The `uv_loop_t` itself, allocated once and freed only after `uv_loop_close` returned 0.
final class UVLoop {
    let raw: UnsafeMutablePointer<uv_loop_t>

    init() throws(TransportError) {
        self.raw = .allocate(capacity: 1)
        do { try uvCheck(uv_loop_init(self.raw), "uv_loop_init") } catch {
            self.raw.deallocate()
            throw error
        }
    }

    /// Runs the loop until no active handle remains. Must be called on the loop thread.
    func run() -> Int32 { uv_run(self.raw, UV_RUN_DEFAULT) }

    /// Closes the loop; 0 means every handle was closed. Frees the memory only then: a loop
    /// that still has handles may be referenced by them, so it is deliberately leaked.
    func close() -> Int32 {
        let rc = uv_loop_close(self.raw)
        if rc == 0 { self.raw.deallocate() }
        return rc
    }

    /// Whether the calling thread is inside `uv_run` of some loop is not knowable from libuv;
    /// the event loop tracks its thread itself. This returns the loop's cached "now" in ms.
    var now: UInt64 { uv_now(self.raw) }
}

/// A `uv_async_t`: the only way another thread wakes the loop.
final class UVAsyncHandle {
    private let raw: UnsafeMutablePointer<uv_async_t>
    private let onWake: () -> Void
    private var isClosing = false

    init(loop: UVLoop, onWake: @escaping () -> Void) throws(TransportError) {
        self.raw = .allocate(capacity: 1)
        self.onWake = onWake
        let rc = uv_async_init(loop.raw, self.raw) { handle in
            guard let data = handle?.pointee.data else { return }
            Unmanaged<UVAsyncHandle>.fromOpaque(data).takeUnretainedValue().onWake()
        }
        guard rc == 0 else {
            self.raw.deallocate()
            throw TransportError(.loopFailed, call: "uv_async_init", code: rc, message: uvErrorText(rc))
        }
        self.raw.pointee.data = Unmanaged.passRetained(self as AnyObject).toOpaque()
    }

    /// Wakes the loop. Safe to call from any thread, but never after `close()`: the event
    /// loop guarantees that with its own lock.
    func send() { uvMust(uv_async_send(self.raw), "uv_async_send") }

    /// Closes the handle. Must be called on the loop thread.
    func close() {
        guard !self.isClosing else { return }
        self.isClosing = true
        uv_close(asHandle(self.raw), releaseBoxOnClose)
    }

    deinit { self.raw.deallocate() }
}

/// A `uv_timer_t` running a Swift closure.
final class UVTimerHandle {
    private let raw: UnsafeMutablePointer<uv_timer_t>
    private var onFire: (() -> Void)?
    private(set) var isClosing = false

    init(loop: UVLoop) {
        self.raw = .allocate(capacity: 1)
        uvMust(uv_timer_init(loop.raw, self.raw), "uv_timer_init")
        self.raw.pointee.data = Unmanaged.passRetained(self as AnyObject).toOpaque()
    }

    /// Starts (or restarts) the timer. `repeatMilliseconds == 0` means one-shot.
    func start(afterMilliseconds delay: UInt64, repeatMilliseconds: UInt64, _ body: @escaping () -> Void) {
        self.onFire = body
        uvMust(
            uv_timer_start(
                self.raw,
                { timer in
                    guard let data = timer?.pointee.data else { return }
                    Unmanaged<UVTimerHandle>.fromOpaque(data).takeUnretainedValue().onFire?()
                }, delay, repeatMilliseconds), "uv_timer_start")
    }

    /// Stops and closes the timer; its closure is released at once.
    func close() {
        guard !self.isClosing else { return }
        self.isClosing = true
        self.onFire = nil
        uvMust(uv_timer_stop(self.raw), "uv_timer_stop")
        uv_close(asHandle(self.raw), releaseBoxOnClose)
    }

    deinit { self.raw.deallocate() }
}

/// A `uv_signal_t`: libuv does the signal-handler part and calls us on the loop thread.
final class UVSignalHandle {
    private let raw: UnsafeMutablePointer<uv_signal_t>
    private var onSignal: ((Int32) -> Void)?
    private(set) var isClosing = false

    init(loop: UVLoop, signal: Int32, _ body: @escaping (Int32) -> Void) throws(TransportError) {
        self.raw = .allocate(capacity: 1)
        self.onSignal = body
        uvMust(uv_signal_init(loop.raw, self.raw), "uv_signal_init")
        self.raw.pointee.data = Unmanaged.passRetained(self as AnyObject).toOpaque()
        let rc = uv_signal_start(
            self.raw,
            { handle, signum in
                guard let data = handle?.pointee.data else { return }
                Unmanaged<UVSignalHandle>.fromOpaque(data).takeUnretainedValue().onSignal?(signum)
            }, signal)
        if rc < 0 {
            self.close()
            throw TransportError(.signalFailed, call: "uv_signal_start", code: rc, message: uvErrorText(rc))
        }
    }

    func close() {
        guard !self.isClosing else { return }
        self.isClosing = true
        self.onSignal = nil
        _ = uv_signal_stop(self.raw)
        uv_close(asHandle(self.raw), releaseBoxOnClose)
    }

    deinit { self.raw.deallocate() }
}

/// A `uv_prepare_t`: runs a Swift closure once per loop iteration, just before the loop polls
/// for I/O. Unreferenced, so it never keeps the loop alive by itself.
final class UVPrepareHandle {
    private let raw: UnsafeMutablePointer<uv_prepare_t>
    private var onPrepare: (() -> Void)?
    private(set) var isClosing = false

    init(loop: UVLoop, _ body: @escaping () -> Void) {
        self.raw = .allocate(capacity: 1)
        self.onPrepare = body
        uvMust(uv_prepare_init(loop.raw, self.raw), "uv_prepare_init")
        self.raw.pointee.data = Unmanaged.passRetained(self as AnyObject).toOpaque()
        uvMust(
            uv_prepare_start(self.raw) { handle in
                guard let data = handle?.pointee.data else { return }
                Unmanaged<UVPrepareHandle>.fromOpaque(data).takeUnretainedValue().onPrepare?()
            }, "uv_prepare_start")
        uv_unref(asHandle(self.raw))
    }

    func close() {
        guard !self.isClosing else { return }
        self.isClosing = true
        self.onPrepare = nil
        uvMust(uv_prepare_stop(self.raw), "uv_prepare_stop")
        uv_close(asHandle(self.raw), releaseBoxOnClose)
    }

    deinit { self.raw.deallocate() }
}
