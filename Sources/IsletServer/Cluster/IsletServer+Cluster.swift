import IsletCore
public import IsletTransport

/// What the server does differently as a cluster node: worlds come from the shared log.
extension IsletServer {
    /// Serves a world the cluster's log created (replacing the placeholder `default` of a node
    /// that has just started): its inputs are ordered by the log, so it keeps no store of its own.
    func serve(
        _ id: String, engine: Engine, epoch: String, history: RevisionHistory, created: Instant, tokens: SimulationTokens?
    ) -> Simulation {
        if self.simulations[id] != nil { self.detach(id) }
        let simulation = self.attach(
            id, engine: engine, epoch: epoch, history: history, stage: ImmediateCommitStage(), created: created,
            tokens: tokens)
        if id == SimulationName.default, let index = self.order.firstIndex(of: id), index != 0 {
            self.order.remove(at: index)
            self.order.insert(id, at: 0)
        }
        return simulation
    }

    /// Closes the streams subscribed in `id` (with 1012, "service restart"): their clients
    /// reconnect and resume, or get a fresh snapshot.
    func closeStreams(of id: String, reason: String) {
        for connection in self.hub.connections.keys.sorted()
        where self.hub.connections[connection]?.subscriptions.values.contains(where: { $0.simulation == id }) ?? false {
            self.transport.close(connection, code: .serviceRestart, reason: reason)
        }
    }

    /// Whether `token` may be a simulation's own token that this node has not heard of yet: a
    /// simulation created on another node is known here only once this node has applied its
    /// creation, so a request or stream presenting such a token waits for `ClusterNode.catchUp`
    /// before it is checked (and refused if the token is still unknown).
    func mayBeUnheardToken(_ token: String?) -> Bool {
        guard self.access.isEnabled, let token, !token.isEmpty else { return false }
        return (try? self.access.principal(for: token, scoped: self.simulationTokens)) == nil
    }

    /// Keeps a message a stream sent before its hello while its token waits for the catch-up
    /// (at most `maxMessagesBeforeHello`; beyond, the stream is closed with `limit_exceeded`).
    func holdUntilCaughtUp(_ message: WebSocketMessage, from connection: ConnectionID) {
        guard var early = self.streamsCatchingUp[connection] else { return }
        guard early.count < Self.maxMessagesBeforeHello else {
            self.streamsCatchingUp[connection] = nil
            var error = APIError(
                .limitExceeded, "at most \(Self.maxMessagesBeforeHello) messages may be sent before the hello")
            error.limit = "messages_before_hello"
            self.transport.send(.text(error.streamMessage()), to: connection)
            self.transport.close(connection, code: .policyViolation, reason: error.code.rawValue)
            return
        }
        early.append(message)
        self.streamsCatchingUp[connection] = early
    }

    static let maxMessagesBeforeHello = 64

    /// Starts this server as a node of the cluster its configuration names (on the loop thread,
    /// before traffic): `/healthz` says `lagging` until it has read the log to its end.
    public func joinCluster(loop: EventLoop) {
        guard let settings = self.configuration.cluster, self.cluster == nil else { return }
        let node = ClusterNode(settings: settings, server: self, loop: loop, logger: self.logger)
        self.cluster = node
        self.defaultSimulation.live.sharedOrder = PlaceholderOrder()
        node.start(demo: self.configuration.demo != .off)
    }
}

/// The order of `default` before a starting node has loaded it from the log: nothing may be
/// proposed to the placeholder world.
private final class PlaceholderOrder: SharedOrder {
    var isAvailable: Bool { false }
    var holdsClock: Bool { false }
    func append(_ cause: RevisionRecord.Cause, wall: Instant, request: UInt64, completion: @escaping (APIError?) -> Void) {
        completion(APIError(.unavailable, "this node is joining the cluster"))
    }
}
