import Dispatch
package import IsletCore
import IsletStore
public import IsletTransport
package import Logging

/// Where the simulations other than `default` keep their command logs: all in one world store
/// (`WorldStore`), a SQLite file beside the default log (`islet.simulations.sqlite` next to
/// `islet.sqlite`) or in memory for `:memory:`; or nowhere, for a server without a store.
/// `default` keeps the log it always had.
public struct SimulationStorage: Sendable {
    enum Kind: Sendable {
        /// No log: an `ImmediateCommitStage` per simulation, and no fork of the past.
        case none
        /// The worlds of one store, opened at the first use.
        case worlds(Worlds)
    }

    let kind: Kind

    /// Simulations without logs.
    public static let none = SimulationStorage(kind: .none)

    /// The storage that goes with `configuration.store`: a world store beside its log, or in
    /// memory for `:memory:`. `loop` is the server's (nil: everything on the calling thread).
    /// `logID` binds the world store to the log (`WorldStore.claim`): checked when the store is
    /// first opened (at start, when it exists), so a server never takes another log's worlds.
    public static func beside(_ configuration: IsletConfiguration, loop: EventLoop?, logID: String? = nil) -> SimulationStorage {
        SimulationStorage(kind: .worlds(Worlds(settings: configuration.store, loop: loop, logID: logID)))
    }

    /// The world store's file, if it is a file.
    public var path: String? {
        guard case .worlds(let worlds) = self.kind, worlds.path != ":memory:" else { return nil }
        return worlds.path
    }

    /// The forks of `default` in the world store beside the log at `path` whose genesis snapshot
    /// is not written yet (a server stopped right after creating them): each needs `default`'s
    /// log from its revision on until a server starts and writes it.
    static func forksAwaitingGenesis(besides path: String, logger: Logger) throws -> [(id: String, rev: UInt64)] {
        let worldsPath = Self.worldStorePath(besides: path)
        guard worldsPath != ":memory:", FileSystem.info(worldsPath) != nil else { return [] }
        let store = try WorldStore(path: worldsPath, logger: logger)
        return try store.worlds().compactMap { world in
            guard let reference = ForkReference(values: try store.values(of: world.name)),
                reference.source == SimulationName.default, try store.open(world.name).latestSnapshot() == nil
            else { return nil }
            return (world.name, reference.rev)
        }
    }

    /// `islet.simulations.sqlite` beside `islet.sqlite` (`<db>.simulations.sqlite` for another name).
    public static func worldStorePath(besides path: String) -> String {
        guard path != ":memory:" else { return path }
        let base = path.hasSuffix(".sqlite") ? String(path.dropLast(".sqlite".count)) : path
        return base + ".simulations.sqlite"
    }

    /// The world store of a server, its queue and how its stages run. Every use of the store
    /// (and of its worlds' logs) happens on `queue`, since they share one SQLite connection.
    final class Worlds: @unchecked Sendable {
        let path: String
        let settings: IsletConfiguration.Store
        let loop: EventLoop?
        let logID: String?
        let queue = DispatchQueue(label: "islet.store.worlds", qos: .userInitiated)
        private var opened: WorldStore?

        init(settings: IsletConfiguration.Store, loop: EventLoop?, logID: String?) {
            self.path = SimulationStorage.worldStorePath(besides: settings.path)
            self.settings = settings
            self.loop = loop
            self.logID = logID
        }

        /// Runs `body` with the store on its queue, opening (or creating) the store first.
        func withStore<T>(logger: Logger, _ body: (WorldStore) throws -> T) throws -> T {
            try self.queue.sync {
                let store = try self.opened ?? self.open(logger: logger)
                self.opened = store
                return try body(store)
            }
        }

        private func open(logger: Logger) throws -> WorldStore {
            let store = try WorldStore(path: self.path, durability: self.settings.durability, logger: logger)
            if let logID = self.logID { try store.claim(for: logID) }
            return store
        }

        /// Closes the store (after every world's stage closed), so a new server may open it.
        func close() { self.queue.sync { self.opened = nil } }

        /// Whether a store file exists (or is open) to restore worlds from.
        var exists: Bool {
            self.queue.sync { self.opened != nil } || (self.path != ":memory:" && FileSystem.info(self.path) != nil)
        }

        /// The commit stage of a world's log: appends on the store's queue (or the loop's thread).
        func stage(_ log: WorldLog, state: RecoveredState, wall: Instant, logger: Logger, genesis: Engine?)
            -> StoreCommitStage
        {
            let threads: StoreCommitStage.Threads
            switch (self.loop, self.settings.writer) {
            case (nil, _): threads = .caller
            case (let loop?, .loop): threads = .loop(loop)
            case (let loop?, .thread): threads = .writer(loop)
            }
            return StoreCommitStage(
                log: log, settings: self.settings, threads: threads, lastSnapshot: (state.snapshotSequence, wall),
                logger: logger, writer: self.queue, genesis: genesis)
        }
    }
}

/// A simulation's log as the server gets it: the state to start from, the stage that continues
/// it, when it was created, and its own tokens.
package struct StoredSimulation {
    let id: String
    let state: RecoveredState
    package let stage: any CommitStage
    let created: Instant
    let tokens: SimulationTokens?
    /// A fork's revision 0 whose genesis snapshot is still to be written, and its source.
    let pendingGenesis: Engine?
    var pendingGenesisSource: String? = nil
}

/// Where a fork's revision 0 comes from until its genesis snapshot is written: the source and its
/// revision, and what the fork changed (clock, token salt), kept beside the fork's log so that a
/// restart in that window rebuilds the same revision 0.
package struct ForkReference: Equatable {
    var source: String
    var rev: UInt64
    /// `wall`, or `virtual` with `now` and `rate`; nil: the source's clock.
    var clock: (mode: SimulationClock.Mode, now: Instant, rate: Double)?
    var salt: UInt64

    package static func == (lhs: ForkReference, rhs: ForkReference) -> Bool {
        lhs.source == rhs.source && lhs.rev == rhs.rev && lhs.salt == rhs.salt
            && lhs.clock?.mode == rhs.clock?.mode && lhs.clock?.now == rhs.clock?.now && lhs.clock?.rate == rhs.clock?.rate
    }

    /// The fork's clock, anchored at its creation.
    func simulationClock(created: Instant) -> SimulationClock? {
        guard let clock = self.clock else { return nil }
        return clock.mode == .wall ? .wall(at: created) : .virtual(now: clock.now, rate: clock.rate, atWall: created)
    }

    var values: [String: String] {
        var values = ["fork.source": self.source, "fork.rev": String(self.rev), "fork.salt": String(self.salt)]
        if let clock = self.clock {
            values["fork.clock"] = "\(clock.mode.rawValue) \(clock.now.millisecondsSinceEpoch) \(clock.rate)"
        }
        return values
    }

    package init(source: String, rev: UInt64, clock: SimulationClock?, created: Instant, salt: UInt64) {
        self.source = source
        self.rev = rev
        self.salt = salt
        self.clock = clock.map { ($0.mode, $0.simulated(atWall: created), $0.rate) }
    }

    init?(values: [String: String]) {
        guard let source = values["fork.source"], let rev = values["fork.rev"].flatMap(UInt64.init),
            let salt = values["fork.salt"].flatMap(UInt64.init)
        else { return nil }
        self.source = source
        self.rev = rev
        self.salt = salt
        if let text = values["fork.clock"] {
            let parts = text.split(separator: " ")
            guard parts.count == 3, let mode = SimulationClock.Mode(rawValue: String(parts[0])),
                let now = Int64(parts[1]), let rate = Double(parts[2])
            else { return nil }
            self.clock = (mode, Instant(millisecondsSinceEpoch: now), rate)
        }
    }
}

extension SimulationStorage {
    /// Every stored simulation, recovered, in creation order. A fork whose genesis snapshot was never
    /// written is rebuilt from its source (`default`'s through `defaultEngine`), and its genesis
    /// is written again (`StoredSimulation.pendingGenesis`).
    func recoverAll(
        configuration: IsletConfiguration, logger: Logger,
        defaultEngine: (UInt64) -> Result<Engine, RevisionUnavailable>
    ) throws -> [StoredSimulation] {
        guard case .worlds(let worlds) = self.kind, worlds.exists else { return [] }
        let names = try worlds.withStore(logger: logger) { try $0.worlds() }
        var recovered: [String: StoredSimulation] = [:]
        func recover(_ world: WorldStore.World, depth: Int) throws -> StoredSimulation {
            if let done = recovered[world.name] { return done }
            let wall = Instant(millisecondsSinceEpoch: world.created)
            let (log, values, hasSnapshot) = try worlds.withStore(logger: logger) { store in
                let log = try store.open(world.name)
                return (log, try store.values(of: world.name), try log.latestSnapshot() != nil)
            }
            var genesis: Engine?
            if !hasSnapshot, let reference = ForkReference(values: values) {
                let source: Result<Engine, RevisionUnavailable>
                if reference.source == SimulationName.default {
                    source = defaultEngine(reference.rev)
                } else if let parent = names.first(where: { $0.name == reference.source }), depth < names.count {
                    source = try recover(parent, depth: depth + 1).stage.engine(at: reference.rev)
                } else {
                    source = .failure(RevisionUnavailable(earliest: nil))
                }
                guard case .success(let engine) = source else {
                    throw RecoveryError(
                        path: log.path,
                        "it is a fork of \(reference.source) at revision \(reference.rev), which cannot be rebuilt")
                }
                genesis = engine.forked(
                    clock: reference.simulationClock(created: wall), atWall: wall, tokenSalt: reference.salt)
            }
            let state = try worlds.withStore(logger: logger) { _ in
                try StoreRecovery.recover(log, configuration: configuration, wall: wall, logger: logger, genesis: genesis)
            }
            let stored = StoredSimulation(
                id: world.name, state: state,
                stage: worlds.stage(log, state: state, wall: wall, logger: logger, genesis: genesis), created: wall,
                tokens: Self.tokens(values), pendingGenesis: genesis,
                pendingGenesisSource: genesis == nil ? nil : ForkReference(values: values)?.source)
            recovered[world.name] = stored
            return stored
        }
        return try names.map { try recover($0, depth: 0) }
    }

    /// Creates a simulation whose revision 0 is `engine`, durably before it returns, in one
    /// transaction: when it fails, nothing is left behind. A fork (`fork`) stores only the
    /// reference to its source; its genesis snapshot is for the caller to write
    /// (`StoredSimulation.pendingGenesis`, through its stage's `writeGenesis`).
    package func create(
        _ id: String, engine: Engine, wall: Instant, tokens: SimulationTokens?, fork: ForkReference? = nil,
        configuration: IsletConfiguration, logger: Logger
    ) throws -> StoredSimulation {
        let history = RevisionHistory(
            maxRevisions: configuration.stream.historyRevisions, maxBytes: configuration.stream.historyBytes)
        guard case .worlds(let worlds) = self.kind else {
            let state = RecoveredState(
                engine: engine, epoch: randomEpoch(), snapshotSequence: 0, replayedRecords: 0, created: true,
                history: history)
            return StoredSimulation(
                id: id, state: state, stage: ImmediateCommitStage(), created: wall, tokens: tokens, pendingGenesis: nil)
        }
        let genesis = fork == nil ? SnapshotPayload(engine: engine.snapshotBytes, history: []).encoded() : nil
        var values = fork?.values ?? [:]
        if let tokens {
            values[Self.adminTokenKey] = tokens.admin
            values[Self.viewerTokenKey] = tokens.viewer
        }
        let log = try worlds.withStore(logger: logger) { store in
            try store.create(id, instant: wall.millisecondsSinceEpoch, genesis: genesis, values: values)
        }
        let state = RecoveredState(
            engine: engine, epoch: log.epoch, snapshotSequence: 0, replayedRecords: 0, created: true, history: history)
        let pending = fork == nil ? nil : engine
        return StoredSimulation(
            id: id, state: state, stage: worlds.stage(log, state: state, wall: wall, logger: logger, genesis: pending),
            created: wall, tokens: tokens, pendingGenesis: pending)
    }

    /// Closes the world store at shutdown, once every simulation's stage has closed.
    func close() {
        if case .worlds(let worlds) = self.kind { worlds.close() }
    }

    /// Removes a deleted simulation's log, in one transaction; its stage was closed.
    /// - Throws: the store's error when the deletion could not be written (the log is intact).
    func remove(_ id: String, logger: Logger) throws {
        guard case .worlds(let worlds) = self.kind else { return }
        try worlds.withStore(logger: logger) { try $0.delete(id) }
    }

    /// Bytes of a simulation's records and snapshots in the world store (of `default`: its log
    /// file and WAL), if stored.
    func bytes(of id: String, logger: Logger) -> Int64? {
        guard case .worlds(let worlds) = self.kind else { return nil }
        if id == SimulationName.default {
            let path = worlds.settings.path
            return path == ":memory:"
                ? nil
                : [path, path + "-wal"].compactMap { FileSystem.info($0).map { Int64($0.size) } }.reduce(0, +)
        }
        return try? worlds.withStore(logger: logger) { try $0.bytes(of: id) }
    }

    private static let adminTokenKey = "admin-token"
    private static let viewerTokenKey = "viewer-token"

    private static func tokens(_ values: [String: String]) -> SimulationTokens? {
        guard let admin = values[Self.adminTokenKey], let viewer = values[Self.viewerTokenKey] else { return nil }
        return SimulationTokens(admin: admin, viewer: viewer)
    }
}
