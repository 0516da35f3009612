/// The open WebSockets' states by connection, holding each state's one strong reference
/// itself. A fan-out reads thousands of them in a row: a lookup here hands out the state's
/// address without retaining it (`unretained`), because a retain writes to the state, which is
/// the cache miss the fan-out prefetches ahead of. Loop-confined, like the states.
final class OpenWebSockets {
    private var states: [ConnectionID: Unmanaged<WebSocketState>] = [:]

    deinit {
        for state in self.states.values { state.release() }
    }

    var count: Int { self.states.count }
    var isEmpty: Bool { self.states.isEmpty }

    subscript(id: ConnectionID) -> WebSocketState? {
        self.states[id]?.takeUnretainedValue()
    }

    /// The state of `id` without a retain: valid while it stays in the table (no removal
    /// happens between this lookup and its use on the loop thread).
    func unretained(_ id: ConnectionID) -> Unmanaged<WebSocketState>? {
        self.states[id]
    }

    func insert(_ state: WebSocketState) {
        self.states[state.id].map { $0.release() }
        self.states[state.id] = Unmanaged.passRetained(state)
    }

    func remove(_ id: ConnectionID) -> WebSocketState? {
        guard let state = self.states.removeValue(forKey: id) else { return nil }
        return state.takeRetainedValue()
    }
}
