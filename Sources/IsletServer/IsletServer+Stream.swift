import IsletCore
public import IsletTransport
import Logging

extension IsletServer: TransportDelegate {
    public func transport(_ transport: any Transport, didReceive request: HTTPRequest) {
        if let cluster = self.cluster, self.mayBeUnheardToken(Access.presentedToken(headers: request.headers, query: nil)) {
            cluster.catchUp { [weak self] in self?.route(request) }
            return
        }
        self.route(request)
    }

    private func route(_ request: HTTPRequest) {
        let (route, reply) = self.handle(request)
        guard case .now(let response) = reply else { return }
        self.answer(request.id, route: route, with: response)
    }

    func answer(_ request: RequestID, route: String, with response: HTTPResponse) {
        self.metrics.requestAnswered(route: route, status: response.status)
        self.transport.respond(to: request, with: response)
    }

    public func transport(_ transport: any Transport, shouldAccept upgrade: WebSocketUpgrade) -> Bool {
        !self.isShuttingDown && upgrade.path == Self.streamPath && upgrade.subprotocol == Self.streamSubprotocol
    }

    /// A stream opens: check its token and `Origin`, then say hello. A refused stream gets an
    /// `error` message and close code 1008, and no hello; one beyond `--max-connections`, or on a
    /// cluster node that has not joined yet, gets `unavailable` and 1013 (try again later). On a
    /// cluster node, a token it does not know yet is checked after the catch-up with the
    /// creations (`holdUntilCaughtUp` keeps the messages sent meanwhile).
    public func transport(_ transport: any Transport, didOpen connection: ConnectionID, upgrade: WebSocketUpgrade) {
        if let limit = upgrade.connectionLimit {
            transport.send(.text(Self.connectionLimitError(limit).streamMessage()), to: connection)
            transport.close(connection, code: .tryAgainLater, reason: "too many connections")
            return
        }
        if let cluster = self.cluster, !cluster.hasJoined {
            // Its hello would name a placeholder's epoch: try again once it has joined.
            transport.send(.text(Self.joiningError.streamMessage()), to: connection)
            transport.close(connection, code: .tryAgainLater, reason: "joining the cluster")
            return
        }
        let token = Access.presentedToken(headers: upgrade.headers, query: upgrade.query)
        if let cluster = self.cluster, self.mayBeUnheardToken(token) {
            self.streamsCatchingUp[connection] = []
            cluster.catchUp { [weak self] in
                guard let self, let early = self.streamsCatchingUp.removeValue(forKey: connection) else { return }
                self.open(connection, upgrade: upgrade, token: token)
                for message in early { self.transport(self.transport, didReceive: message, from: connection) }
            }
            return
        }
        self.open(connection, upgrade: upgrade, token: token)
    }

    private func open(_ connection: ConnectionID, upgrade: WebSocketUpgrade, token: String?) {
        let principal: Principal
        do throws(APIError) {
            if let refusal = self.access.browserRefusal(headers: upgrade.headers, mutating: true) { throw refusal }
            principal = try self.access.principal(for: token, scoped: self.simulationTokens)
        } catch {
            self.logger.debug(
                "stream refused", metadata: ["islet.conn.id": "\(connection)", "error.code": "\(error.code)"])
            self.transport.send(.text(error.streamMessage()), to: connection)
            self.transport.close(connection, code: .policyViolation, reason: error.code.rawValue)
            return
        }
        let session = self.hub.open(connection, principal: principal, rateKey: self.access.isEnabled ? token ?? "" : "")
        self.logger.debug("stream opened", metadata: ["islet.conn.id": "\(connection)"])
        self.hub.sendControl(self.helloMessage, to: session)
    }

    private var helloMessage: [UInt8] { self.hello.encoded(at: self.position) }

    public func transport(
        _ transport: any Transport, didReceive message: WebSocketMessage, from connection: ConnectionID
    ) {
        guard let session = self.hub.connections[connection] else {
            self.holdUntilCaughtUp(message, from: connection)
            return
        }
        switch ClientMessage.parse(message) {
        case .failure(let refusal):
            self.hub.sendControl(refusal.error.streamMessage(id: refusal.id), to: session)
        case .success(let message):
            self.handle(message, from: session)
        }
    }

    private func handle(_ message: ClientMessage, from session: StreamConnection) {
        // A simulation created on another node is known here once this node has applied its
        // creation: a message naming one it does not know waits for the catch-up (as a route
        // does, `withSimulation`), then is handled, if its stream is still open.
        if let cluster = self.cluster, let name = message.simulation, self.simulations[name] == nil {
            cluster.catchUp { [weak self] in
                guard let self, self.hub.connections[session.id] === session else { return }
                self.handleKnown(message, from: session)
            }
            return
        }
        self.handleKnown(message, from: session)
    }

    private func handleKnown(_ message: ClientMessage, from session: StreamConnection) {
        switch message {
        case .ping(let id):
            self.hub.sendControl(StreamMessages.pong(id: id), to: session)
        case .subscribe(let id, let simulation, let path, let since):
            do throws(APIError) {
                guard session.principal.reaches(simulation) else { throw session.principal.refusal(for: simulation) }
                try self.hub.subscribe(session, id: id, simulation: simulation, path: path, since: since)
            } catch {
                self.metrics.refused(error)
                self.hub.sendControl(error.streamMessage(id: .string(id)), to: session)
            }
        case .unsubscribe(let id):
            do throws(APIError) { try self.hub.unsubscribe(session, id: id) } catch {
                self.hub.sendControl(error.streamMessage(id: .string(id)), to: session)
            }
        case .command(let id, let simulation, let commands):
            self.command(id: id, simulation: simulation, commands: commands, from: session)
        }
    }

    /// A stream `command`: the same batch as `POST /v1/commands`, answered with `ack` after
    /// the commit, or `error`.
    private func command(id: JSONValue, simulation name: String, commands: [JSONValue], from session: StreamConnection) {
        guard session.principal.mayMutate else {
            let error = APIError(.forbidden, "the viewer token may only read; commands need the admin token")
            return self.hub.sendControl(error.streamMessage(id: id), to: session)
        }
        if let wait = self.rateLimited(commands.count, key: session.rateKey) {
            return self.hub.sendControl(wait.streamMessage(id: id), to: session)
        }
        let simulation: Simulation
        do throws(APIError) {
            guard session.principal.reaches(name) else { throw session.principal.refusal(for: name) }
            simulation = try self.simulation(named: name)
        } catch {
            var error = error
            error.field = "/simulation"
            return self.hub.sendControl(error.streamMessage(id: id), to: session)
        }
        let hub = self.hub
        simulation.live.submit(commands) { result in
            switch result {
            case .success(let revision): hub.sendControl(StreamMessages.ack(id: id, revision: revision), to: session)
            case .failure(let error): hub.sendControl(error.streamMessage(id: id), to: session)
            }
        }
    }

    /// Takes `cost` commands from `key`'s rate-limit bucket; the `rate_limited` error if empty.
    func rateLimited(_ cost: Int, key: String) -> APIError? {
        let milliseconds = self.now.millisecondsSinceEpoch
        guard let seconds = self.rateLimiter.take(max(1, cost), key: key, nowMilliseconds: milliseconds) else {
            return nil
        }
        let wait = Int(min(seconds, 1e9).rounded(.up))  // a tiny configured rate must not trap
        return APIError(.rateLimited, "too many commands for this token; retry in \(max(1, wait)) s")
    }

    public func transport(_ transport: any Transport, didDrain connection: ConnectionID) {
        self.hub.drained(connection)
    }

    public func transport(_ transport: any Transport, didClose connection: ConnectionID, code: WebSocketCloseCode?) {
        self.streamsCatchingUp[connection] = nil
        guard self.hub.connections[connection] != nil else { return }
        self.hub.closed(connection)
        self.logger.debug(
            "stream closed",
            metadata: ["islet.conn.id": "\(connection)", "islet.close.code": "\(code.map(\.description) ?? "none")"])
    }
}
