internal import Dispatch

/// A computation started on another thread, whose value the starting thread takes once it is
/// done: the engine's one use of a second core (a long clock step publishes its stacks there
/// while it publishes its widgets). The value is written before the work leaves its group and
/// read after `wait()` returns, which Dispatch orders; nothing else is shared.
final class ConcurrentWork<Value: Sendable>: @unchecked Sendable {
    private let group = DispatchGroup()
    private var value: Value?

    init(_ work: @escaping @Sendable () -> Value) {
        self.group.enter()
        DispatchQueue.global().async {
            self.value = work()
            self.group.leave()
        }
    }

    /// Blocks until the work is done and returns its value.
    func wait() -> Value {
        self.group.wait()
        return self.value!
    }
}
