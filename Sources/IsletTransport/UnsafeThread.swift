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
        let name: String
        let body: () -> Void
        init(_ name: String, _ body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts a detached thread running `body`, named `name` (cut to Linux's 15 bytes) so that
    /// `ps -L`, `/proc/PID/task/*/comm` and debuggers tell the loop from dispatch's threads.
    static func spawn(name: String, _ body: @escaping () -> Void) throws(TransportError) {
        let box = Unmanaged.passRetained(Box(name, body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(
            &thread, nil,
            { argument in
                let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
                LoopThread.setCurrentName(box.name)
                box.body()
                return nil
            }, box)
        guard rc == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw TransportError(.loopFailed, call: "pthread_create", code: rc, message: "cannot start the loop thread")
        }
        pthread_detach(thread)
    }

    /// Names the calling thread (what `pthread_setname_np` does, which Swift's Glibc module
    /// does not declare): its `comm` file takes the first 15 bytes.
    private static func setCurrentName(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// An identifier of the calling thread, comparable across threads.
    static var current: UInt { UInt(pthread_self()) }
}
