import Dispatch
import IsletCore
import IsletRender
import IsletTransport
import Logging

/// This process as one node of a cluster: every simulation's order lives in Redis Streams
/// (`ClusterLog`), and this node replays all of them with the same engine, so `(epoch, rev)`
/// names the same document on every node.
///
/// Two connections on the server's loop: `writer` appends (batches, ticks, creations,
/// snapshots, leases) and `reader` waits in `XREAD BLOCK` on the control stream and every
/// world's stream; a change of the set of worlds wakes it with `CLIENT UNBLOCK`. When Redis
/// goes away, proposals are answered `unavailable`, reads keep serving the last applied state,
/// and the node reconnects with backoff and reads on from where it was. Loop-confined.
final class ClusterNode {
    let settings: IsletConfiguration.Cluster
    private let loop: EventLoop
    private let logger: Logger
    private unowned let server: IsletServer
    private var writer: RedisConnection?
    private var reader: RedisConnection?
    private var readerID: Int64?
    private var connections = 0
    /// Both connections are up (and the database selected).
    private(set) var isConnected = false
    private var backoff = Duration.milliseconds(100)
    /// Attempts to reach Redis that failed since the connection was lost (0 while connected).
    private var failedAttempts = 0
    private var retryTimer: LoopTimer?
    private var leaseTimer: LoopTimer?
    private var isClosed = false
    /// The control stream was numbered from 1 again (`controlLost(_:seq:)`).
    private var controlLost = false

    /// Every world this node replays, by simulation id.
    private var worlds: [String: ClusterWorld] = [:]
    private var control = ClusterLog.Cursor.start
    /// Creations applied from the control stream whose genesis snapshot is being loaded.
    private var loading: [String: String] = [:]
    private var reading = false
    /// True once the control stream and every world were read to their end at least once.
    private(set) var hasJoined = false
    /// True while the last read came back full (more is waiting) or worlds are loading.
    private(set) var isLagging = true
    private var nextRequest: UInt64 = 1
    private var creations: [UInt64: (Result<Simulation, APIError>) -> Void] = [:]
    private var deletions: [UInt64: (Result<Void, APIError>) -> Void] = [:]
    /// Set when this node created `default` with the demo: it loads the demo once `default` is served.
    private var loadsDemo = false
    /// Work waiting until this node has applied its streams up to some entries (`catchUp`).
    private var catchUpWaiters: [CatchUp] = []
    /// Counts connection attempts, so a late callback of an abandoned attempt is ignored.
    private var generation = 0

    /// Entries read per stream per `XREAD`.
    static let readCount = 1000

    /// Who this process's proposals are from (`n` of an entry): the node id and a random
    /// incarnation. A reply is matched to its request by `n` and `r`, and `r` counts from 1 again
    /// when a node restarts under its id: without the incarnation, a restarted node took its old
    /// entries (another simulation's creation, with its tokens; an old refusal) as the answers to
    /// its new requests.
    let proposer: String

    /// `NODE/<random>`: one process of the node `nodeID`.
    static func incarnation(of nodeID: String) -> String {
        nodeID + "/" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
    }

    init(settings: IsletConfiguration.Cluster, server: IsletServer, loop: EventLoop, logger: Logger) {
        self.proposer = Self.incarnation(of: settings.nodeID)
        self.settings = settings
        self.server = server
        self.loop = loop
        var logger = logger
        logger[metadataKey: "islet.node"] = "\(settings.nodeID)"
        self.logger = logger
    }

    /// Connects, creates `default` if no node has yet (with the demo when `demo` is set), and
    /// starts reading.
    func start(demo: Bool) {
        self.connect { [self] in
            self.ensureDefault(demo: demo)
        }
        let interval = Duration.milliseconds(max(50, self.settings.leaseMilliseconds / 3))
        self.leaseTimer = self.loop.scheduleTimer(after: interval, repeating: interval) { [weak self] in self?.sweepLeases() }
    }

    /// Stops for good (at shutdown); the clock leases this node holds are given up first, so another node takes each
    /// world's clock at once rather than when the lease expires (at most `closeTimeout`).
    func close(then completion: @escaping () -> Void) {
        self.isClosed = true
        self.leaseTimer?.cancel()
        self.retryTimer?.cancel()
        var finished = false
        var timeout: LoopTimer?
        let finish = { [self] in
            guard !finished else { return }
            finished = true
            timeout?.cancel()
            self.writer?.close()
            self.reader?.close()
            completion()
        }
        let holding = self.worlds.values.filter(\.leased)
        // No tick is proposed once the lease is on its way back.
        for world in holding {
            world.leased = false
            world.simulation?.live.refreshWakeUp()
        }
        let held = holding.map { ClusterLog.lease($0.epoch) }.sorted()
        guard !held.isEmpty, self.isConnected else { return finish() }
        timeout = self.loop.scheduleTimer(after: Self.closeTimeout) { finish() }
        let arguments = ["EVAL", ClusterLog.releaseScript, String(held.count)] + held + [self.settings.nodeID]
        self.write(arguments.map { Array($0.utf8) }) { _ in finish() }
    }

    /// How long a stop waits for Redis to give up its leases.
    static let closeTimeout = Duration.seconds(1)

    /// `ok`, `lagging` (behind the log: the balancer should take this node out) or `unavailable`
    /// (Redis cannot be reached: every node is as far as this one, so reads stay served).
    var health: String {
        if !self.isConnected { return self.hasJoined ? "unavailable" : "lagging" }
        return self.isLagging || !self.hasJoined ? "lagging" : "ok"
    }

    /// `GET /v1/cluster`: who this node is, how it stands, and the clocks it holds.
    var summary: JSONValue {
        let held = self.worlds.values.filter(\.leased).map(\.id).sorted()
        return [
            "node": .string(self.settings.nodeID), "status": .string(self.health),
            "redis": .string("redis://\(self.settings.host):\(self.settings.port)/\(self.settings.database)"),
            "simulations": .number(Double(self.worlds.count)), "clockLeases": .array(held.map(JSONValue.string)),
            "control": .string(self.control.entry), "reconnectAttempts": .number(Double(self.failedAttempts)),
        ]
    }

    // MARK: Connections

    private func connect(then: @escaping () -> Void) {
        guard !self.isClosed else { return }
        self.connections = 0
        self.generation += 1
        let generation = self.generation
        let settings = self.settings
        let up: (RedisConnectionError?) -> Void = { [weak self] error in
            guard let self, self.generation == generation else { return }
            if let error { return self.lost(error) }
            self.connections += 1
            guard self.connections == 2 else { return }
            self.selectDatabase(then: then)
        }
        let down: (RedisConnectionError?) -> Void = { [weak self] error in
            guard let self, self.generation == generation else { return }
            self.lost(error ?? RedisConnectionError("closed"))
        }
        self.writer = RedisConnection(loop: self.loop, host: settings.host, port: settings.port, connected: up, disconnected: down)
        self.reader = RedisConnection(loop: self.loop, host: settings.host, port: settings.port, connected: up, disconnected: down)
    }

    private func selectDatabase(then: @escaping () -> Void) {
        let database = String(self.settings.database)
        var pending = 3
        var failed: String?
        let step: (Result<RedisReply, RedisConnectionError>) -> Void = { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(.error(let message)): failed = message
            case .failure(let error): failed = error.message
            case .success(.integer(let id)): self.readerID = id
            default: break
            }
            pending -= 1
            guard pending == 0 else { return }
            if let failed { return self.lost(RedisConnectionError(failed)) }
            self.isConnected = true
            self.backoff = .milliseconds(100)
            self.failedAttempts = 0
            self.logger.info("cluster connected", metadata: ["islet.redis": "\(self.settings.host):\(self.settings.port)"])
            for world in self.worlds.values { world.simulation?.live.refreshWakeUp() }
            then()
            self.sweepLeases()
            self.read()
        }
        self.writer?.send(["SELECT", database], reply: step)
        self.reader?.send(["SELECT", database], reply: step)
        self.reader?.send(["CLIENT", "ID"], reply: step)
    }

    /// A connection ended: everything waiting on the log is answered `unavailable`, the node
    /// keeps serving what it has applied, and reconnects after a backoff.
    private func lost(_ error: RedisConnectionError) {
        guard self.writer != nil || self.reader != nil else { return }
        let wasConnected = self.isConnected
        self.isConnected = false
        self.reading = false
        let writer = self.writer
        let reader = self.reader
        self.writer = nil
        self.reader = nil
        writer?.close()
        reader?.close()
        let unavailable = APIError(.unavailable, "the cluster's log (Redis) cannot be reached: \(error.message); retry later")
        for world in self.worlds.values {
            world.leased = false
            world.simulation?.live.abandonProposals(unavailable)
        }
        let creations = self.creations
        let deletions = self.deletions
        let waiters = self.catchUpWaiters
        self.catchUpWaiters = []
        for waiter in waiters { waiter.body() }
        self.creations = [:]
        self.deletions = [:]
        for request in creations.keys.sorted() { creations[request]?(.failure(unavailable)) }
        for request in deletions.keys.sorted() { deletions[request]?(.failure(unavailable)) }
        guard !self.isClosed else { return }
        if wasConnected {
            self.logger.error("cluster connection lost", metadata: ["error": "\(error)"])
        } else {
            self.failedAttempts += 1
        }
        let delay = self.backoff
        self.backoff = min(self.backoff * 2, .seconds(5))
        self.retryTimer = self.loop.scheduleTimer(after: delay) { [weak self] in
            self?.connect { [weak self] in
                guard let self, !self.hasJoined else { return }
                self.ensureDefault(demo: false)
            }
        }
    }

    /// Sends a command on the writer; a Redis error reply becomes a failure.
    private func write(_ arguments: [[UInt8]], reply: @escaping (Result<RedisReply, APIError>) -> Void) {
        guard let writer = self.writer, self.isConnected else {
            return reply(.failure(APIError(.unavailable, "the cluster's log (Redis) cannot be reached; retry later")))
        }
        writer.send(arguments) { result in
            switch result {
            case .success(.error(let message)): reply(.failure(APIError(.unavailable, "Redis refused: \(message)")))
            case .success(let value): reply(.success(value))
            case .failure(let error): reply(.failure(APIError(.unavailable, "Redis: \(error.message)")))
            }
        }
    }

    /// Appends entries (each its fields) to `stream` in one script call; to a world's stream
    /// (`world` set) only while the world's snapshot is there (else the world is lost: `lose`).
    private func append(
        to stream: String, _ entries: [[[UInt8]]], world: ClusterWorld? = nil,
        reply: @escaping (Result<RedisReply, APIError>) -> Void
    ) {
        var keys = [stream, ClusterLog.sequence(stream)]
        if let world { keys.append(ClusterLog.snapshot(world.epoch)) }
        let arguments: [[UInt8]] =
            [Array("EVAL".utf8), Array(ClusterLog.appendScript.utf8), Array(String(keys.count).utf8)]
            + keys.map { Array($0.utf8) } + ClusterLog.appendArguments(entries)
        self.write(arguments) { result in
            // The script's refusal, after the code Redis puts before it (`ERR`).
            guard let world, case .failure(let error) = result, error.message.hasSuffix("ISLET_GONE") else {
                return reply(result)
            }
            reply(.failure(self.lose(world, because: "its snapshot is gone")))
        }
    }

    /// The end of a loop turn: each world's proposals of the turn go to Redis in one call.
    func flush() {
        for world in self.worlds.values where !world.proposed.isEmpty {
            let proposed = world.proposed
            world.proposed = []
            self.append(to: ClusterLog.stream(world.epoch), proposed.map(\.fields), world: world) { result in
                guard case .failure(let error) = result else { return }
                for proposal in proposed { proposal.completion(error) }
            }
        }
    }

    // MARK: Creating and deleting worlds

    /// `default` is the control stream's entry `0-1`: the first node to start writes it (and its
    /// genesis snapshot); the others find it there.
    private func ensureDefault(demo: Bool) {
        let epoch = randomEpoch()
        let genesis = IsletServer.freshEngine(self.server.configuration, at: self.server.now)
        self.writeGenesis(genesis, epoch: epoch) { [self] error in
            if let error { return self.logger.error("cluster: default's genesis not written", metadata: ["error": "\(error)"]) }
            let fields = ClusterLog.fields(
                .create(id: SimulationName.default, epoch: epoch, created: self.server.now, tokens: nil),
                node: self.proposer, request: 0)
            let arguments = [Array("XADD".utf8), Array(ClusterLog.control.utf8), Array("0-1".utf8), Array("s".utf8),
                             Array("0".utf8)] + fields
            self.write(arguments) { [self] result in
                guard case .success = result else {
                    // Another node created it first: its genesis is the one in the log.
                    self.write(["DEL", ClusterLog.snapshot(epoch)].map { Array($0.utf8) }) { _ in }
                    return
                }
                self.logger.info("cluster: created the default simulation", metadata: ["islet.sim.epoch": "\(epoch)"])
                // Its load (a reply on this same connection) comes after this one.
                self.loadsDemo = demo
            }
        }
    }

    private func writeGenesis(_ engine: Engine, epoch: String, completion: @escaping (APIError?) -> Void) {
        let payload = SnapshotPayload(engine: engine.snapshotBytes, history: []).encoded()
        let arguments: [[UInt8]] = [
            Array("HSET".utf8), Array(ClusterLog.snapshot(epoch).utf8), Array("entry".utf8), Array("0-0".utf8),
            Array("seq".utf8), Array("0".utf8), Array("wall".utf8), Array(String(self.server.now.millisecondsSinceEpoch).utf8),
            Array("payload".utf8), payload,
        ]
        self.write(arguments) { result in
            if case .failure(let error) = result { return completion(error) }
            completion(nil)
        }
    }

    /// Creates a world on every node: its genesis snapshot, then its creation in the control
    /// stream; `reply` runs once this node has applied that creation.
    func create(
        _ id: String, genesis: Engine, tokens: SimulationTokens?, reply: @escaping (Result<Simulation, APIError>) -> Void
    ) {
        guard !self.controlLost else { return reply(.failure(Self.controlLostError)) }
        let epoch = randomEpoch()
        self.writeGenesis(genesis, epoch: epoch) { [self] error in
            if let error { return reply(.failure(error)) }
            let request = self.nextRequest
            self.nextRequest += 1
            self.creations[request] = reply
            let fields = ClusterLog.fields(
                .create(id: id, epoch: epoch, created: self.server.now, tokens: tokens), node: self.proposer,
                request: request)
            self.append(to: ClusterLog.control, [fields]) { [self] result in
                guard case .failure(let error) = result else { return }
                self.write(["DEL", ClusterLog.snapshot(epoch)].map { Array($0.utf8) }) { _ in }
                self.creations.removeValue(forKey: request)?(.failure(error))
            }
        }
    }

    /// Deletes a world on every node; `reply` runs once this node has applied the deletion.
    func delete(_ simulation: Simulation, reply: @escaping (Result<Void, APIError>) -> Void) {
        guard let world = self.worlds[simulation.id] else {
            return reply(.failure(APIError(.notFound, "no simulation \"\(simulation.id)\"")))
        }
        guard !self.controlLost else { return reply(.failure(Self.controlLostError)) }
        let request = self.nextRequest
        self.nextRequest += 1
        self.deletions[request] = reply
        let fields = ClusterLog.fields(.delete(id: world.id, epoch: world.epoch), node: self.proposer, request: request)
        self.append(to: ClusterLog.control, [fields]) { [self] result in
            guard case .failure(let error) = result else { return }
            self.deletions.removeValue(forKey: request)?(.failure(error))
        }
    }

    /// The error creations and deletions get once the control stream is lost.
    private static let controlLostError = APIError(
        .unavailable, "the cluster's log lost its simulations (Redis lost its data): restart every node")

    /// A control entry numbered from 1 again: Redis lost the control stream, so this node's worlds
    /// and the log no longer agree. From now on creations and deletions are refused (the nodes
    /// must be restarted); the entry's proposer, if this node, is answered.
    private func controlLost(_ entry: ClusterLog.Entry, seq: UInt64) {
        if !self.controlLost {
            self.controlLost = true
            self.logger.error(
                "cluster: the control stream is numbered from \(seq) again (Redis lost its data); creations and deletions are refused until the nodes restart")
        }
        guard let request = ClusterLog.request(entry, node: self.proposer) else { return }
        self.creations.removeValue(forKey: request)?(.failure(Self.controlLostError))
        self.deletions.removeValue(forKey: request)?(.failure(Self.controlLostError))
    }

    /// Applies one control entry, in the control stream's order.
    private func apply(control entry: ClusterLog.Entry) {
        let change: ClusterLog.Change
        do throws(APIError) { change = try ClusterLog.change(entry) } catch {
            return self.logger.error("cluster: a control entry is skipped", metadata: ["error": "\(error)"])
        }
        let request = ClusterLog.request(entry, node: self.proposer)
        switch change {
        case .create(let id, let epoch, let created, let tokens):
            let exists = id != SimulationName.default && (self.worlds[id] != nil || self.loading[id] != nil)
            if exists || (self.worlds.count + self.loading.count >= self.server.configuration.maxSimulations) {
                let error =
                    exists
                    ? APIError(.conflict, "simulation \"\(id)\" exists", field: "/id")
                    : self.server.simulationLimitError
                if let request {
                    // The refused world's genesis was this node's to write, and is its to delete.
                    self.write((["DEL"] + ClusterLog.keys(of: epoch)).map { Array($0.utf8) }) { _ in }
                    self.creations.removeValue(forKey: request)?(.failure(error))
                }
                return
            }
            self.loading[id] = epoch
            self.load(id, epoch: epoch, created: created, tokens: tokens, request: request)
        case .delete(let id, let epoch):
            if self.loading[id] == epoch { self.loading[id] = nil }
            if let world = self.worlds[id], world.epoch == epoch {
                self.worlds[id] = nil
                self.server.detach(id)
                self.logger.info("simulation deleted", metadata: ["islet.sim": "\(id)"])
                self.wakeReader()
            }
            guard let request, let reply = self.deletions.removeValue(forKey: request) else { return }
            self.write((["DEL"] + ClusterLog.keys(of: epoch)).map { Array($0.utf8) }) { _ in }
            reply(.success(()))
        }
    }

    /// Loads a created world's latest snapshot (its genesis, or a later one on a node that joins
    /// late) and starts replaying its stream from there.
    private func load(_ id: String, epoch: String, created: Instant, tokens: SimulationTokens?, request: UInt64?) {
        self.readSnapshot(epoch) { [self] result in
            guard self.loading[id] == epoch else { return }
            self.loading[id] = nil
            switch result {
            case .failure(let error):
                self.logger.error("cluster: a simulation cannot be loaded", metadata: ["islet.sim": "\(id)", "error": "\(error)"])
                if let request { self.creations.removeValue(forKey: request)?(.failure(error)) }
            case .success(let snapshot):
                let world = ClusterWorld(node: self, id: id, epoch: epoch, cursor: snapshot.cursor)
                let simulation = self.server.serve(
                    id, engine: snapshot.engine, epoch: epoch, history: snapshot.history, created: created, tokens: tokens)
                simulation.live.reload(snapshot.engine, wall: snapshot.wall)
                world.simulation = simulation
                simulation.live.sharedOrder = world
                self.worlds[id] = world
                self.wakeReader()
                self.sweepLeases()
                if let request { self.creations.removeValue(forKey: request)?(.success(simulation)) }
                if id == SimulationName.default, self.loadsDemo {
                    self.loadsDemo = false
                    self.server.loadDemo(into: simulation)
                }
            }
            self.updateLag(full: false)
        }
    }

    private struct LoadedSnapshot {
        var engine: Engine
        var history: RevisionHistory
        var cursor: ClusterLog.Cursor
        var wall: Instant
    }

    private func readSnapshot(
        _ epoch: String, previous: Bool = false, completion: @escaping (Result<LoadedSnapshot, APIError>) -> Void
    ) {
        let configuration = self.server.configuration
        let key = previous ? ClusterLog.previousSnapshot(epoch) : ClusterLog.snapshot(epoch)
        self.write(["HGETALL", key].map { Array($0.utf8) }) { result in
            let reply: RedisReply
            switch result {
            case .failure(let error): return completion(.failure(error))
            case .success(let value): reply = value
            }
            let fields = ClusterLog.fields(of: reply.elements ?? [])
            func text(_ name: String) -> String? { fields[name].map { String(decoding: $0, as: UTF8.self) } }
            guard let entry = text("entry"), let seq = text("seq").flatMap({ UInt64($0) }),
                let wall = text("wall").flatMap({ Int64($0) }), let payload = fields["payload"]
            else {
                return completion(.failure(APIError(.internal, "no snapshot of \(epoch) in Redis")))
            }
            do {
                let decoded = try SnapshotPayload(decoding: payload)
                let engine = try Engine(snapshot: try decoded.engineValue(), renderer: MustacheRenderer())
                var history = RevisionHistory(
                    maxRevisions: configuration.stream.historyRevisions, maxBytes: configuration.stream.historyBytes)
                for item in decoded.history { history.append(rev: item.rev, encodedOps: item.encodedOps) }
                completion(
                    .success(
                        LoadedSnapshot(
                            engine: engine, history: history, cursor: ClusterLog.Cursor(entry: entry, seq: seq),
                            wall: Instant(millisecondsSinceEpoch: wall))))
            } catch {
                completion(.failure(APIError(.internal, "the snapshot of \(epoch) cannot be restored (\(error))")))
            }
        }
    }

    /// Runs `body` once this node has applied every creation and deletion the control stream
    /// holds now and, with `worlds`, every entry each world's stream holds now (at once when
    /// Redis cannot be reached: there is nothing newer to wait for).
    /// With `worlds`, a world created meanwhile (found by the control stream's catch-up) is
    /// caught up in a second round, so what its first entries made is known too.
    func catchUp(worlds: Bool = false, _ body: @escaping () -> Void) {
        guard worlds else { return self.catchUp(streams: [], body) }
        self.worldCatchUps += 1
        let done = { [weak self] in
            self?.worldCatchUps -= 1
            body()
        }
        let known = self.worlds.values.filter { !$0.lost }.sorted { $0.id < $1.id }
        self.catchUp(streams: known) { [weak self] in
            guard let self else { return done() }
            let new = self.worlds.values.filter { world in !world.lost && !known.contains { $0 === world } }
            guard !new.isEmpty else { return done() }
            self.catchUp(streams: new.sorted { $0.id < $1.id }, done)
        }
    }

    /// Whether a push to an unknown token may still wait for a catch-up of every stream: an open
    /// route must not grow the work without bound (past this, the push is answered 503).
    var acceptsCatchUp: Bool { self.worldCatchUps < Self.maxWorldCatchUps }
    static let maxWorldCatchUps = 256
    /// Catch-ups of every stream from their call until their body ran.
    private var worldCatchUps = 0

    private func catchUp(streams: [ClusterWorld], _ body: @escaping () -> Void) {
        let keys = [ClusterLog.control] + streams.map { ClusterLog.stream($0.epoch) }
        let arguments = ["EVAL", ClusterLog.lastEntriesScript, String(keys.count)] + keys
        self.write(arguments.map { Array($0.utf8) }) { [weak self] result in
            guard let self, case .success(let reply) = result, let last = reply.elements?.compactMap(\.text),
                last.count == keys.count
            else { return body() }
            self.catchUpWaiters.append(
                CatchUp(control: last[0], streams: Array(zip(streams, last.dropFirst())), body: body))
            self.runCaughtUp()
        }
    }

    /// Work waiting until this node has applied its streams up to the entries they held.
    private struct CatchUp {
        var control: String
        var streams: [(world: ClusterWorld, entry: String)]
        var body: () -> Void
    }

    private func runCaughtUp() {
        guard !self.catchUpWaiters.isEmpty, self.loading.isEmpty else { return }
        let applied = ClusterLog.order(self.control.entry)
        let caughtUp = { (waiter: CatchUp) in
            ClusterLog.order(waiter.control) <= applied
                && waiter.streams.allSatisfy { world, entry in
                    // A world deleted or lost meanwhile has nothing more to wait for.
                    self.worlds[world.id] !== world || world.lost
                        || ClusterLog.order(entry) <= ClusterLog.order(world.cursor.entry)
                }
        }
        let ready = self.catchUpWaiters.filter(caughtUp)
        self.catchUpWaiters.removeAll(where: caughtUp)
        for waiter in ready { waiter.body() }
    }

    /// A world's engine at an earlier revision `rev` (a fork of the past): the newest of its
    /// two snapshots in Redis at or before it, then its stream's entries up to it, applied as
    /// every node applied them.
    func engine(of simulation: Simulation, at rev: UInt64, completion: @escaping (Result<Engine, APIError>) -> Void) {
        guard let world = self.worlds[simulation.id] else {
            return completion(.failure(APIError(.notFound, "no simulation \"\(simulation.id)\"")))
        }
        let published = simulation.live.publishedRev
        let unavailable = { (earliest: UInt64?) in
            APIError(
                .conflict,
                "simulation \"\(simulation.id)\" has no revision \(rev) to fork from: the earliest available is \(earliest ?? published), the latest \(published)",
                field: "/from/rev")
        }
        self.readSnapshot(world.epoch, previous: true) { [self] previous in
            self.readSnapshot(world.epoch) { [self] latest in
                let snapshots = [previous, latest].compactMap { try? $0.get() }
                // A revision yet to come names the earliest too: that of the oldest snapshot.
                guard rev < published else { return completion(.failure(unavailable(snapshots.map(\.engine.rev).min()))) }
                guard let base = snapshots.filter({ $0.engine.rev <= rev }).max(by: { $0.engine.rev < $1.engine.rev }) else {
                    return completion(.failure(unavailable(snapshots.map(\.engine.rev).min())))
                }
                self.replay(world, from: base, to: rev) { engine in
                    completion(engine.map(Result.success) ?? .failure(unavailable(base.engine.rev)))
                }
            }
        }
    }

    /// Applies the stream's entries after `base` until the engine is at `rev` (nil: the stream
    /// does not reach it, or Redis failed).
    private func replay(_ world: ClusterWorld, from base: LoadedSnapshot, to rev: UInt64, completion: @escaping (Engine?) -> Void) {
        var engine = base.engine
        var wall = base.wall
        let stream = ClusterLog.stream(world.epoch)
        func page(after entry: String) {
            self.write(["XRANGE", stream, "(" + entry, "+", "COUNT", String(Self.readCount)].map { Array($0.utf8) }) { result in
                guard case .success(let reply) = result else { return completion(nil) }
                let entries = (reply.elements ?? []).compactMap(ClusterLog.entry)
                for entry in entries {
                    guard let ordered = try? ClusterLog.orderedEntry(entry, node: "") else { continue }
                    _ = ordered.apply(to: &engine, after: &wall)
                    if engine.rev >= rev { return completion(engine.rev == rev ? engine : nil) }
                }
                guard let last = entries.last, entries.count == Self.readCount else { return completion(nil) }
                page(after: last.id)
            }
        }
        if engine.rev == rev { return completion(engine) }
        page(after: base.cursor.entry)
    }

    // MARK: Reading

    /// One `XREAD BLOCK` over the control stream and every loaded world; each reply is applied
    /// and the next read sent.
    private func read() {
        guard let reader = self.reader, self.isConnected, !self.reading else { return }
        self.reading = true
        // A world being reloaded is read again from the snapshot's position once it is loaded.
        let worlds = self.worlds.values.filter { !$0.lost && !$0.reloading }.sorted { $0.id < $1.id }
        var arguments = ["XREAD", "COUNT", String(Self.readCount), "BLOCK", "2000", "STREAMS", ClusterLog.control]
        arguments += worlds.map { ClusterLog.stream($0.epoch) }
        arguments.append(self.control.entry)
        arguments += worlds.map(\.cursor.entry)
        reader.send(arguments) { [weak self] result in
            guard let self, self.reading else { return }
            self.reading = false
            switch result {
            case .failure(let error): return self.lost(error)
            case .success(.error(let message)): return self.lost(RedisConnectionError(message))
            case .success(let reply): self.received(ClusterLog.streams(reply))
            }
            self.read()
        }
    }

    /// Wakes the reader's `XREAD` so the next one covers the current set of worlds.
    private func wakeReader() {
        guard self.reading, let id = self.readerID else { return }
        self.write(["CLIENT", "UNBLOCK", String(id)].map { Array($0.utf8) }) { _ in }
    }

    private func received(_ streams: [String: [ClusterLog.Entry]]) {
        var full = false
        if let entries = streams[ClusterLog.control] {
            full = full || entries.count >= Self.readCount
            for entry in entries {
                // `default`'s entry 0-1 is numbered 0; every later one from 1 up.
                if let seq = entry.seq, self.controlLost || (entry.id != "0-1" && seq <= self.control.seq) {
                    self.control.entry = entry.id
                    self.controlLost(entry, seq: seq)
                    continue
                }
                self.control = ClusterLog.Cursor(entry: entry.id, seq: entry.seq ?? self.control.seq)
                self.apply(control: entry)
            }
        }
        for world in self.worlds.values {
            guard let entries = streams[ClusterLog.stream(world.epoch)], !entries.isEmpty else { continue }
            full = full || entries.count >= Self.readCount
            self.apply(entries, to: world)
        }
        self.updateLag(full: full)
    }

    private func updateLag(full: Bool) {
        self.runCaughtUp()
        self.isLagging = full || !self.loading.isEmpty
        guard !self.isLagging, !self.hasJoined, self.isConnected, self.worlds[SimulationName.default] != nil else { return }
        self.hasJoined = true
        self.logger.info("cluster joined", metadata: ["islet.sims": "\(self.worlds.count)"])
    }

    private func apply(_ entries: [ClusterLog.Entry], to world: ClusterWorld) {
        guard let live = world.simulation?.live, !world.lost, !world.reloading else { return }
        var ordered: [OrderedEntry] = []
        for entry in entries {
            if let seq = entry.seq, seq != world.cursor.seq + 1 {
                live.applyOrdered(ordered)
                // Numbered from 1 again: Redis lost the stream (its counter with it).
                guard seq > world.cursor.seq else {
                    _ = self.lose(world, because: "its entries are numbered from \(seq) again")
                    return
                }
                // The stream was trimmed past this node's position: start again from the snapshot.
                return self.reloadAfterGap(world, expected: world.cursor.seq + 1, found: seq)
            }
            world.cursor = ClusterLog.Cursor(entry: entry.id, seq: entry.seq ?? world.cursor.seq + 1)
            world.sinceSnapshot += 1
            do throws(APIError) {
                ordered.append(try ClusterLog.orderedEntry(entry, node: self.proposer))
            } catch {
                self.logger.error("cluster: an entry is skipped", metadata: ["islet.sim": "\(world.id)", "error": "\(error)"])
                // Its proposer, if this node, is answered (else it and the reads behind it wait for ever).
                guard let request = ClusterLog.request(entry, node: self.proposer) else { continue }
                live.applyOrdered(ordered)
                ordered = []
                live.refuseProposal(request, error)
            }
        }
        live.applyOrdered(ordered)
        self.snapshotIfDue(world)
    }

    /// The log no longer holds the world's history (it was deleted on another node, or Redis lost
    /// its data): this node stops reading and proposing for it, refuses its commands and keeps
    /// serving its last state. Answers the error its proposals get.
    private func lose(_ world: ClusterWorld, because reason: String) -> APIError {
        let error = APIError(
            .unavailable,
            "simulation \"\(world.id)\" is no longer in the cluster's log (deleted on another node, or Redis lost its data); its last state stays readable")
        guard !world.lost else { return error }
        self.logger.error("cluster: a simulation's log is lost", metadata: ["islet.sim": "\(world.id)", "reason": "\(reason)"])
        world.lost = true
        world.leased = false
        world.proposed = []
        world.simulation?.live.logLost(error)
        self.wakeReader()
        return error
    }

    private func reloadAfterGap(_ world: ClusterWorld, expected: UInt64, found: UInt64) {
        self.logger.warning(
            "cluster: the log was trimmed past this node; reloading from the snapshot",
            metadata: ["islet.sim": "\(world.id)", "islet.expected": "\(expected)", "islet.found": "\(found)"])
        world.reloading = true
        self.readSnapshot(world.epoch) { [self] result in
            switch result {
            case .failure(let error) where error.code == .unavailable:
                // Redis refused or went away: read again (and find the gap again) in a second.
                _ = self.loop.scheduleTimer(after: .seconds(1)) { [weak self, weak world] in
                    guard let self, let world, !self.isClosed, self.worlds[world.id] === world else { return }
                    world.reloading = false
                    self.wakeReader()
                }
                return
            case .failure(let error):
                world.reloading = false
                _ = self.lose(world, because: error.message)
                return
            case .success: world.reloading = false
            }
            guard case .success(let snapshot) = result, let simulation = world.simulation else { return }
            world.cursor = snapshot.cursor
            simulation.live.reload(snapshot.engine, wall: snapshot.wall)
            self.server.hub.restore(history: snapshot.history, in: simulation.stream)
            self.server.closeStreams(of: simulation.id, reason: "replica reloaded")
            self.wakeReader()
        }
    }

    // MARK: Clock leases and snapshots

    /// Renews this node's clock leases and takes the free ones.
    private func sweepLeases() {
        let worlds = self.worlds.values.filter { !$0.lost }.sorted { $0.id < $1.id }
        guard self.isConnected, !self.isClosed, !worlds.isEmpty else { return }
        var arguments = ["EVAL", ClusterLog.leaseScript, String(worlds.count)]
        arguments += worlds.map { ClusterLog.lease($0.epoch) }
        arguments += [self.settings.nodeID, String(self.settings.leaseMilliseconds)]
        self.write(arguments.map { Array($0.utf8) }) { [weak self] result in
            guard let self, !self.isClosed, case .success(let reply) = result, let held = reply.elements else { return }
            for (world, flag) in zip(worlds, held) {
                let holds = flag == .integer(1)
                guard world.leased != holds else { continue }
                world.leased = holds
                world.simulation?.live.refreshWakeUp()
                if holds { self.logger.info("cluster: clock lease taken", metadata: ["islet.sim": "\(world.id)"]) }
            }
        }
    }

    /// The clock holder writes a snapshot every `snapshotEveryEntries` entries (encoded off the
    /// loop), and the stream is trimmed below the snapshot before it.
    private func snapshotIfDue(_ world: ClusterWorld) {
        // A replica applies nothing ahead of the log, so its engine is always at the cursor.
        guard world.leased, !world.snapshotInFlight, world.sinceSnapshot >= self.settings.snapshotEveryEntries,
            let simulation = world.simulation
        else { return }
        world.snapshotInFlight = true
        world.sinceSnapshot = 0
        let cursor = world.cursor
        let wall = simulation.live.orderedWall
        let state = simulation.publishedState(wall: wall)
        let epoch = world.epoch
        let this = Unchecked(self)
        let target = Unchecked(world)
        DispatchQueue.global(qos: .utility).async { [loop] in
            let payload = SnapshotPayload(engine: state.engine.snapshotBytes, history: state.history.allEntries).encoded()
            _ = loop.execute {
                let arguments: [[UInt8]] = [
                    Array("EVAL".utf8), Array(ClusterLog.snapshotScript.utf8), Array("3".utf8),
                    Array(ClusterLog.snapshot(epoch).utf8), Array(ClusterLog.previousSnapshot(epoch).utf8),
                    Array(ClusterLog.stream(epoch).utf8), Array(cursor.entry.utf8), Array(String(cursor.seq).utf8),
                    Array(String(wall.millisecondsSinceEpoch).utf8), payload,
                ]
                this.value.write(arguments) { result in
                    target.value.snapshotInFlight = false
                    if case .failure(let error) = result {
                        this.value.logger.error(
                            "cluster: snapshot failed", metadata: ["islet.sim": "\(target.value.id)", "error": "\(error)"])
                    }
                }
            }
        }
    }
}

/// One world as a cluster node replays it: where it is in its stream, whether this node holds
/// its clock. It is the world's `SharedOrder`.
final class ClusterWorld: SharedOrder {
    unowned let node: ClusterNode
    let id: String
    let epoch: String
    var cursor: ClusterLog.Cursor
    weak var simulation: Simulation?
    var leased = false
    var sinceSnapshot = 0
    var snapshotInFlight = false
    var reloading = false
    /// The log no longer holds this world's history (`ClusterNode.lose`).
    var lost = false
    /// This turn's proposals, appended together at the end of the turn (`ClusterNode.flush`).
    var proposed: [(fields: [[UInt8]], completion: (APIError?) -> Void)] = []

    init(node: ClusterNode, id: String, epoch: String, cursor: ClusterLog.Cursor) {
        self.node = node
        self.id = id
        self.epoch = epoch
        self.cursor = cursor
    }

    var isAvailable: Bool { self.node.isConnected && !self.reloading && !self.lost }
    var holdsClock: Bool { self.leased && self.node.isConnected }

    func append(_ cause: RevisionRecord.Cause, wall: Instant, request: UInt64, completion: @escaping (APIError?) -> Void) {
        self.proposed.append(
            (ClusterLog.fields(cause, wall: wall, node: self.node.proposer, request: request), completion))
    }
}
