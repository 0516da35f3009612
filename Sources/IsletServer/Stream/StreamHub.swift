import IsletCore
import IsletTransport
import Logging

/// The stream side of the server: connections, their subscriptions in any simulation, fan-out
/// of published revisions, the revision histories, and the slow-consumer policy. Loop-confined.
final class StreamHub {
    /// Counters for metrics (copied when `/metrics` is rendered).
    struct Counters {
        var patchFrames: UInt64 = 0
        var snapshots: UInt64 = 0
        var resyncs: UInt64 = 0
        var slowConsumerCloses: UInt64 = 0
    }

    let transport: any Transport
    let clock: TurnClock
    let outboundCap: Int
    let maxSubscriptions: Int
    /// The largest message sent (`limits.streamMessageBytes`).
    let maxMessageBytes: Int
    let slowTimeoutMilliseconds: Int64
    let logger: Logger
    private(set) var connections: [ConnectionID: StreamConnection] = [:]
    private(set) var worlds: [String: SimulationStream] = [:]
    private var needsService: Set<ConnectionID> = []
    private var slowSince: [ConnectionID: Instant] = [:]
    private(set) var counters = Counters()

    init(transport: any Transport, clock: TurnClock, configuration: IsletConfiguration, logger: Logger) {
        self.transport = transport
        self.clock = clock
        self.outboundCap = configuration.limits.outboundBytes
        self.maxSubscriptions = configuration.limits.subscriptionsPerConnection
        self.maxMessageBytes = configuration.limits.streamMessageBytes
        let (seconds, attoseconds) = configuration.stream.slowConsumerTimeout.components
        self.slowTimeoutMilliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        self.logger = logger
    }

    // MARK: Simulations

    /// Serves a simulation's streams from now on.
    func add(_ world: SimulationStream) {
        self.worlds[world.id] = world
    }

    /// Stops serving a deleted simulation: each connection subscribed there gets `resync` with
    /// reason `deleted`, loses those subscriptions, and is closed with 1000 if it had none elsewhere.
    /// A connection opened with one of the simulation's own tokens is closed too: the token went
    /// with it, and a world re-created under the same name is another world.
    func remove(simulation id: String) {
        guard self.worlds.removeValue(forKey: id) != nil else { return }
        for connectionID in self.connections.keys.sorted() {
            guard let connection = self.connections[connectionID] else { continue }
            let subs = connection.order.filter { connection.subscriptions[$0]?.simulation == id }
            let scoped = connection.principal.simulation == id
            guard !subs.isEmpty || scoped else { continue }
            if !subs.isEmpty {
                connection.keys[id] = nil
                for sub in subs { connection.subscriptions[sub] = nil }
                connection.order.removeAll { subs.contains($0) }
                connection.pending.removeAll { subs.contains($0.sub) }
                // What was built for a waiting snapshot belongs to the deleted world.
                connection.prepared = nil
                self.sendControl(StreamMessages.resync(reason: "deleted", simulation: id), to: connection)
            }
            if connection.subscriptions.isEmpty || scoped {
                self.transport.close(connectionID, code: .normal, reason: "simulation deleted")
            }
        }
    }

    // MARK: Connections

    func open(_ id: ConnectionID, principal: Principal, rateKey: String) -> StreamConnection {
        let connection = StreamConnection(id: id, principal: principal, rateKey: rateKey)
        self.connections[id] = connection
        return connection
    }

    func closed(_ id: ConnectionID) {
        guard let connection = self.connections.removeValue(forKey: id) else { return }
        for sub in connection.subscriptions.values where sub.isLive { self.release(sub, of: connection) }
        for simulation in connection.keys.keys { self.leaveGroup(connection, in: simulation) }
        self.needsService.remove(id)
        self.slowSince[id] = nil
    }

    /// Queues a control message (ack, error, pong…). Each is owed to a request, so one over the
    /// cap is never dropped: it waits, in order with the ones after it, until the queue drains
    /// (the connection is then a slow consumer, whose queued patches and snapshots go). A reader
    /// that lets more than a cap of replies wait is closed with 1013.
    func sendControl(_ bytes: [UInt8], to connection: StreamConnection) {
        if connection.heldReplies.isEmpty, self.transport.send(.text(bytes), to: connection.id) != .overCap { return }
        guard connection.heldReplyBytes <= self.outboundCap else { return }  // being closed
        connection.heldReplies.append(bytes)
        connection.heldReplyBytes += bytes.count
        if connection.heldReplyBytes > self.outboundCap {
            self.close(slowConsumer: connection.id)
            return
        }
        if !connection.dropping { self.slowConsumer(connection) }
        _ = self.sendHeldReplies(connection)
    }

    /// Sends the replies held over the cap, oldest first, while they fit. Returns whether none is
    /// left waiting.
    private func sendHeldReplies(_ connection: StreamConnection) -> Bool {
        while let reply = connection.heldReplies.first {
            guard self.transport.send(.text(reply), to: connection.id) != .overCap else { return false }
            connection.heldReplies.removeFirst()
            connection.heldReplyBytes -= reply.count
        }
        return true
    }

    // MARK: Subscriptions

    /// Registers a subscription; its snapshot (or resume) goes out once the simulation's
    /// pipeline is idle.
    func subscribe(
        _ connection: StreamConnection, id: String, simulation: String, path: JSONPointer,
        since: ClientMessage.Since?
    )
        throws(APIError)
    {
        guard let world = self.worlds[simulation] else {
            throw APIError(.notFound, "no simulation \"\(simulation)\"", field: "/simulation")
        }
        guard connection.subscriptions[id] == nil else {
            throw APIError(.conflict, "subscription \"\(id)\" exists on this connection", field: "/id")
        }
        guard connection.subscriptions.count < self.maxSubscriptions else {
            var error = APIError(
                .limitExceeded, "at most \(self.maxSubscriptions) subscriptions per connection", field: "/id")
            error.limit = "subscriptions"
            throw error
        }
        connection.subscriptions[id] = StreamConnection.Subscription(id: id, simulation: simulation, path: path)
        connection.order.append(id)
        connection.pending.append(since.map { .resume(sub: id, since: $0) } ?? .snapshot(sub: id, reason: nil))
        self.needsService.insert(connection.id)
        world.simulation.whenPublished { [weak self] in self?.service(connection.id) }
    }

    /// Ends a subscription and confirms it.
    func unsubscribe(_ connection: StreamConnection, id: String) throws(APIError) {
        guard let sub = connection.subscriptions.removeValue(forKey: id) else {
            throw APIError(.notFound, "no subscription \"\(id)\" on this connection", field: "/id")
        }
        connection.order.removeAll { $0 == id }
        connection.pending.removeAll { $0.sub == id }
        connection.prepared = nil
        if sub.isLive {
            self.release(sub, of: connection)
            self.regroup(connection, in: sub.simulation)
        }
        self.sendControl(StreamMessages.unsubscribed(sub: id), to: connection)
    }

    /// A subscription whose snapshot is larger than any message this server sends: it is
    /// dropped with `payload_too_large` (its `id` is the subscription's).
    private func refuseOversize(_ sub: StreamConnection.Subscription, bytes: Int, on connection: StreamConnection) {
        connection.pending.removeFirst()
        connection.subscriptions[sub.id] = nil
        connection.order.removeAll { $0 == sub.id }
        if sub.isLive {  // a live subscription's fresh snapshot (array_element)
            self.release(sub, of: connection)
            self.regroup(connection, in: sub.simulation)
        }
        let error = APIError(
            .payloadTooLarge,
            "the snapshot of \"\(sub.path)\" is \(bytes) bytes, over the largest message this server sends (\(self.maxMessageBytes)); subscribe to a narrower path",
            field: "/path")
        self.sendControl(error.streamMessage(id: .string(sub.id)), to: connection)
    }

    // MARK: Turn work

    /// Sends what connections wait for (resyncs, snapshots, resumes) as far as their queues and
    /// their simulations' pipelines allow, and closes connections over their cap for too long.
    func serviceAll(now: Instant) {
        for id in self.needsService { self.service(id) }
        self.closeSlowConsumers(now: now)
    }

    /// Connections over their cap and not drained yet.
    var slowCount: Int { self.slowSince.count }

    /// The wall instant at which a slow consumer's time runs out, if any.
    var nextSlowDeadline: Instant? {
        self.slowSince.values.min().map { $0.adding(milliseconds: self.slowTimeoutMilliseconds) }
    }

    private func service(_ id: ConnectionID) {
        guard let connection = self.connections[id] else {
            self.needsService.remove(id)
            return
        }
        if connection.dropping { return }  // until the transport reports the drain
        if let reason = connection.resyncReason {
            connection.resyncReason = nil
            self.counters.resyncs += 1
            guard self.transport.send(.text(StreamMessages.resync(reason: reason)), to: id) == .queued else { return }
        }
        while let next = connection.pending.first {
            guard let sub = connection.subscriptions[next.sub], let world = self.worlds[sub.simulation] else {
                connection.pending.removeFirst()
                continue
            }
            // A subscription goes live exactly at a published revision: wait for that pipeline.
            guard world.simulation.isIdle else { return }
            let rev = world.simulation.publishedRev
            let messages: [[UInt8]]
            if let prepared = connection.prepared, prepared.pending == next, prepared.rev == rev {
                messages = prepared.messages
            } else {
                messages = self.messages(for: next, sub: sub, in: world)
            }
            connection.prepared = nil
            let size = messages.reduce(0) { $0 + $1.count }
            if messages.contains(where: { $0.count > self.maxMessageBytes }) {
                self.refuseOversize(sub, bytes: size, on: connection)
                continue
            }
            let queued = self.transport.queuedBytes(of: id)
            if queued > 0 && queued + size > self.outboundCap {
                // Wait for the queue to drain, keeping what was built for this revision.
                connection.prepared = (next, rev, messages)
                return
            }
            for message in messages {
                switch self.transport.send(.text(message), to: id) {
                case .queued: continue
                case .overCap: return self.slowConsumer(connection)
                case .notOpen: return
                }
            }
            connection.pending.removeFirst()
            self.activate(sub, in: world, on: connection)
        }
        self.needsService.remove(id)
    }

    /// The messages that take a pending subscription live, at the published revision.
    private func messages(
        for pending: StreamConnection.Pending, sub: StreamConnection.Subscription, in world: SimulationStream
    ) -> [[UInt8]] {
        switch pending {
        case .snapshot(_, let reason):
            return [self.snapshot(sub, in: world, reason: reason)]
        case .resume(_, let since):
            let simulation = world.simulation
            let latest = simulation.publishedRev
            guard since.epoch == simulation.epoch else { return [self.snapshot(sub, in: world, reason: "epoch_changed")] }
            guard since.rev <= latest else { return [self.snapshot(sub, in: world, reason: "unknown_revision")] }
            if sub.array != nil { return [self.snapshot(sub, in: world, reason: Self.arrayElement)] }
            guard let entries = world.history.entries(after: since.rev, latest: latest) else {
                return [self.snapshot(sub, in: world, reason: "history_trimmed")]
            }
            guard let missed = self.missedPatches(entries, for: sub) else {
                return [self.snapshot(sub, in: world, reason: "history_unreadable")]
            }
            return [StreamMessages.subscribed(sub: sub.id, since: since.rev, simulation: world.id)] + missed
        }
    }

    private func snapshot(_ sub: StreamConnection.Subscription, in world: SimulationStream, reason: String?) -> [UInt8] {
        self.counters.snapshots += 1
        let simulation = world.simulation
        let engine = simulation.engine
        return StreamMessages.snapshot(
            epoch: simulation.epoch, path: sub.path, reason: reason, rev: simulation.publishedRev,
            simulation: world.id, sub: sub.id
        ) { writer in
            if sub.path.isRoot {
                engine.writeDocument { writer.writeEncoded($0) }
            } else {
                writer.write(engine.value(at: sub.path) ?? .null)
            }
        }
    }

    /// A resumed subscription's patches from the history, filtered to its path, each marked
    /// with `sub` (they apply to that subscription only); nil when a revision does not parse
    /// again, so the subscription gets a snapshot instead of a gap.
    private func missedPatches(_ entries: [RevisionHistory.Entry], for sub: StreamConnection.Subscription) -> [[UInt8]]?
    {
        var existed: Bool? = nil
        var messages: [[UInt8]] = []
        for entry in entries {
            guard let ops = try? [PatchOperation](decoding: entry.encodedOps) else {
                self.logger.error("a revision in the history does not parse", metadata: ["islet.rev": "\(entry.rev)"])
                return nil
            }
            let known = existed
            switch PatchFilter.filter(ops, paths: [sub.path], existed: { _ in known }) {
            case .none: break
            case .all:
                messages.append(
                    StreamMessages.patch(
                        rev: entry.rev, encodedOps: entry.encodedOps, simulation: sub.simulation, sub: sub.id))
            case .some(let filtered):
                messages.append(
                    StreamMessages.patch(
                        rev: entry.rev, encodedOps: filtered.encoded, simulation: sub.simulation, sub: sub.id))
            }
            existed = PatchFilter.exists(sub.path, after: ops, existedBefore: existed)
        }
        return messages
    }

    private func activate(_ sub: StreamConnection.Subscription, in world: SimulationStream, on connection: StreamConnection) {
        guard var sub = connection.subscriptions[sub.id], !sub.isLive else { return }
        sub.isLive = true
        connection.subscriptions[sub.id] = sub
        let engine = world.simulation.engine
        world.presence.retain(sub.path, exists: engine.value(at: sub.path) != nil)
        if let array = sub.array { world.elementSubscriptions[connection.id, default: [:]][sub.id] = array }
        self.regroup(connection, in: world.id)
    }

    /// A live subscription ends (or waits for a resync).
    private func release(_ sub: StreamConnection.Subscription, of connection: StreamConnection) {
        guard let world = self.worlds[sub.simulation] else { return }
        world.presence.release(sub.path)
        world.elementSubscriptions[connection.id]?[sub.id] = nil
        if world.elementSubscriptions[connection.id]?.isEmpty == true { world.elementSubscriptions[connection.id] = nil }
    }

    private func regroup(_ connection: StreamConnection, in simulation: String) {
        let key = SubscriptionKey(
            connection.subscriptions.values.filter { $0.isLive && $0.simulation == simulation && $0.array == nil }
                .map(\.path))
        guard key != connection.keys[simulation, default: .empty] else { return }
        self.leaveGroup(connection, in: simulation)
        guard !key.paths.isEmpty, let world = self.worlds[simulation] else { return }
        connection.keys[simulation] = key
        world.groups[key, default: []].insert(connection.id)
    }

    private func leaveGroup(_ connection: StreamConnection, in simulation: String) {
        guard let key = connection.keys.removeValue(forKey: simulation), let world = self.worlds[simulation] else {
            return
        }
        world.groups[key]?.remove(connection.id)
        if world.groups[key]?.isEmpty == true { world.groups[key] = nil }
    }

    // MARK: Publishing

    /// Records a simulation's committed revisions in its history and sends each connection its patch.
    func publish(_ records: [RevisionRecord], in world: SimulationStream) {
        var elements: [ConnectionID: Set<String>] = [:]
        for record in records {
            let revision = record.revision
            world.history.append(rev: revision.rev, encodedOps: revision.encodedOps)
            // The operations are parsed only for subscriptions below the root, which narrow them.
            let narrowed =
                world.groups.keys.contains { !$0.isWholeDocument } || world.presence.tracksBelowRoot
                || !world.elementSubscriptions.isEmpty
            let ops = narrowed ? revision.ops : []
            if !world.groups.isEmpty { self.fanOut(revision, ops, in: world) }
            if !world.elementSubscriptions.isEmpty { Self.elements(changedBy: ops, in: world, into: &elements) }
            world.presence.apply(ops)
        }
        if !elements.isEmpty { self.resnapshot(elements) }
    }

    /// A subscription through an array element is sent a snapshot (reason `array_element`)
    /// whenever its array changes: an element's index shifts when one before it comes or goes,
    /// which a patch narrowed to the element's path cannot say (the value now at that index is
    /// not in the revision's operations). These are the ones `ops` concern.
    private static func elements(
        changedBy ops: [PatchOperation], in world: SimulationStream, into touched: inout [ConnectionID: Set<String>]
    ) {
        for (id, subs) in world.elementSubscriptions {
            for (sub, array) in subs where ops.contains(where: { $0.path.isWithin(array) || array.isWithin($0.path) }) {
                touched[id, default: []].insert(sub)
            }
        }
    }

    /// Queues the snapshots, sent at once when the simulation's pipeline is idle (the engine is
    /// at the revision just published), else as soon as it is.
    private func resnapshot(_ touched: [ConnectionID: Set<String>]) {
        for (id, subs) in touched {
            guard let connection = self.connections[id] else { continue }
            for sub in connection.order where subs.contains(sub) && !connection.pending.contains(where: { $0.sub == sub }) {
                connection.pending.append(.snapshot(sub: sub, reason: Self.arrayElement))
            }
            self.needsService.insert(id)
            self.service(id)
        }
    }

    static let arrayElement = "array_element"

    /// Starts from the history a restarted server recovered (before any client connects).
    func restore(history: RevisionHistory, in world: SimulationStream) {
        world.history = history
    }

    /// One patch per group of connections with equal subscription paths; equal filtered
    /// operation lists share one encoding.
    /// - Parameter ops: The revision's operations, when a group's paths are below the root.
    private func fanOut(_ revision: Revision, _ ops: [PatchOperation], in world: SimulationStream) {
        var whole: [UInt8]?
        var encoded: [[PatchOperation]: [UInt8]] = [:]
        var slow: [ConnectionID] = []
        for (key, members) in world.groups {
            let bytes: [UInt8]
            let filtered =
                key.isWholeDocument ? .all : PatchFilter.filter(ops, paths: key.paths, existed: { world.presence.existed($0) })
            switch filtered {
            case .none:
                continue
            case .all:
                bytes =
                    whole
                    ?? StreamMessages.patch(rev: revision.rev, encodedOps: revision.encodedOps, simulation: world.id)
                whole = bytes
            case .some(let ops):
                bytes =
                    encoded[ops] ?? StreamMessages.patch(rev: revision.rev, encodedOps: ops.encoded, simulation: world.id)
                encoded[ops] = bytes
            }
            let sent = self.transport.broadcast(.text(bytes), to: members)
            self.counters.patchFrames += UInt64(sent.queued)
            slow += sent.overCap
        }
        for id in slow {
            if let connection = self.connections[id] { self.slowConsumer(connection) }
        }
    }

    // MARK: Slow consumers

    /// Over the cap: drop the queued patches and snapshots (acks, errors and pongs stay), stop
    /// sending patches, and once the queue drains send `resync` and fresh snapshots of every
    /// subscription, in whichever simulation.
    private func slowConsumer(_ connection: StreamConnection) {
        self.transport.discardQueued(of: connection.id) { message in
            let bytes = message.bytes
            return !(bytes.starts(with: StreamMessages.patchPrefix) || bytes.starts(with: StreamMessages.snapshotPrefix))
        }
        if self.slowSince[connection.id] == nil {
            self.slowSince[connection.id] = self.clock.now
            self.logger.debug("slow consumer", metadata: ["islet.conn.id": "\(connection.id)"])
        }
        connection.dropping = true
        self.transport.requestDrainNotice(for: connection.id)
        connection.resyncReason = "slow_consumer"
        for id in connection.order {
            guard var sub = connection.subscriptions[id], sub.isLive else { continue }
            sub.isLive = false
            connection.subscriptions[id] = sub
            self.release(sub, of: connection)
        }
        connection.pending = connection.order.map { .snapshot(sub: $0, reason: nil) }
        for simulation in connection.keys.keys { self.leaveGroup(connection, in: simulation) }
        self.needsService.insert(connection.id)
    }

    /// A slow consumer's socket took everything: the replies it is owed go first, then it is
    /// resynced once its simulations are idle.
    func drained(_ id: ConnectionID) {
        guard let connection = self.connections[id], connection.dropping else { return }
        guard self.sendHeldReplies(connection) else {
            self.transport.requestDrainNotice(for: id)
            return
        }
        connection.dropping = false
        self.slowSince[id] = nil
        self.needsService.insert(id)
        for simulation in connection.simulations {
            self.worlds[simulation]?.simulation.whenPublished { [weak self] in self?.service(id) }
        }
    }

    private func closeSlowConsumers(now: Instant) {
        for (id, since) in self.slowSince where now.milliseconds(since: since) >= self.slowTimeoutMilliseconds {
            self.close(slowConsumer: id)
        }
    }

    private func close(slowConsumer id: ConnectionID) {
        self.slowSince[id] = nil
        self.needsService.remove(id)
        self.counters.slowConsumerCloses += 1
        self.logger.debug("slow consumer closed", metadata: ["islet.conn.id": "\(id)"])
        self.transport.discardQueued(of: id)
        self.transport.close(id, code: .tryAgainLater, reason: "slow consumer")
    }
}
