// Thread and lifetime rules: `LoopThread.spawn` may be called from any thread. The closure is
// boxed and retained once for the new thread, which takes the retain back and releases it
// when the closure returns (the NIO `ThreadPosix` idiom). The thread is detached: the event
// loop reports its end through its own termination state, not through `pthread_join`.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A dedicated OS thread for an event loop.
enum LoopThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Starts a detached thread running `body` (`name` is kept for diagnostics).
    static func spawn(name: String, _ body: @escaping () -> Void) throws(TransportError) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { argument in
                let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
                box.body()
                return nil
            }, box)
        guard rc == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw TransportError(.loopFailed, call: "pthread_create", code: rc, message: "cannot start the loop thread")
        }
        pthread_detach(thread)
    }

    /// An identifier of the calling thread, comparable across threads.
    static var current: UInt { UInt(pthread_self()) }
}
