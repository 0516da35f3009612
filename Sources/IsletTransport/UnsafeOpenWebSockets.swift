// Lifetime rules: the table holds each state's one strong reference itself (`Unmanaged`), so a
// lookup can hand out a state without a retain. Loop-confined, like the states. A state handed
// out unretained (`forEachOpen`) stays valid while it stays in the table; nothing a fan-out
// does removes one (a failed write closes its connection later, from lws's next service).
// The prefetches are hints: they never fault and change nothing.

internal import CPrefetch

/// The open WebSockets' states by connection. A fan-out reads thousands of them in a row, each
/// cold: a retain would write to the state (the miss itself), so they are read unretained and
/// prefetched a few places ahead.
final class OpenWebSockets {
    private var states: [ConnectionID: Unmanaged<WebSocketState>] = [:]
    /// `forEachOpen`'s list of targets, kept to reuse its storage.
    private var targets: [Unmanaged<WebSocketState>] = []

    deinit {
        for state in self.states.values { state.release() }
    }

    var count: Int { self.states.count }
    var isEmpty: Bool { self.states.isEmpty }

    subscript(id: ConnectionID) -> WebSocketState? {
        self.states[id]?.takeUnretainedValue()
    }

    func insert(_ state: WebSocketState) {
        precondition(self.states[state.id] == nil, "connection \(state.id) is open already")
        self.states[state.id] = Unmanaged.passRetained(state)
    }

    func remove(_ id: ConnectionID) -> WebSocketState? {
        self.states.removeValue(forKey: id)?.takeRetainedValue()
    }

    /// Calls `body` with the state of each open connection among `ids`, each state and the
    /// line of its libwebsockets connection that says whether lws holds bytes unsent brought
    /// into the cache a few calls ahead. `body` must not open or close connections.
    func forEachOpen(among ids: some Collection<ConnectionID>, _ body: (WebSocketState) -> Void) {
        var targets = self.targets
        self.targets = []
        targets.reserveCapacity(ids.count)
        for id in ids {
            if let state = self.states[id] { targets.append(state) }
        }
        for index in targets.indices {
            Self.prefetchAhead(targets, from: index)
            targets[index]._withUnsafeGuaranteedRef(body)
        }
        targets.removeAll(keepingCapacity: true)
        self.targets = targets
    }

    /// Brings in the state 8 places ahead, and lws's line for the one 4 places ahead (its
    /// address is in that state, brought in earlier): each write then starts with both in the
    /// cache instead of two misses in a row.
    @inline(__always)
    private static func prefetchAhead(_ targets: [Unmanaged<WebSocketState>], from index: Int) {
        let (stateDistance, connectionDistance) = (8, 4)
        if index + stateDistance < targets.count {
            islet_prefetch_lines(UnsafeRawPointer(targets[index + stateDistance].toOpaque()), WebSocketState.hotBytes)
        }
        if index + connectionDistance < targets.count {
            targets[index + connectionDistance]._withUnsafeGuaranteedRef { $0.connection.prefetchBufferedOutputLine() }
        }
    }
}
