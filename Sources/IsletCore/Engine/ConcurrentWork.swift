internal import Dispatch

/// A computation started on another thread, whose value the starting thread takes once it is
/// done: the engine's use of a second core (in a long clock step it shares the re-rankings of an
/// instant, and publishes the stacks while the starting thread publishes the widgets, then
/// shares the last widgets). The work and its value are written before the work leaves its
/// group and read after `wait()` returns, which Dispatch orders; what else the two threads share
/// is the caller's to order the same way.
final class ConcurrentWork<Value: Sendable>: @unchecked Sendable {
    private let group = DispatchGroup()
    /// Dropped as soon as it ran, so what it captured (copies of engine state) is released
    /// before the starting thread changes that state in place.
    private var work: (@Sendable () -> Value)?
    private var value: Value?

    init(_ work: @escaping @Sendable () -> Value) {
        self.work = work
        self.group.enter()
        DispatchQueue.global().async {
            self.value = self.work!()
            self.work = nil
            self.group.leave()
        }
    }

    /// Blocks until the work is done and hands its value over.
    func wait() -> Value {
        self.group.wait()
        defer { self.value = nil }
        return self.value!
    }
}
