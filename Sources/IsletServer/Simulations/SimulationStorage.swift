import Dispatch
import Foundation
import IsletCore
import IsletStore
public import IsletTransport
import Logging

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
    public static func beside(_ configuration: IsletConfiguration, loop: EventLoop?) -> SimulationStorage {
        SimulationStorage(kind: .worlds(Worlds(settings: configuration.store, loop: loop)))
    }

    /// The world store's file, if it is a file.
    public var path: String? {
        guard case .worlds(let worlds) = self.kind, worlds.path != ":memory:" else { return nil }
        return worlds.path
    }

    /// `islet.simulations.sqlite` beside `islet.sqlite` (`<db>.simulations.sqlite` for another name).
    static func worldStorePath(besides path: String) -> String {
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
        let queue = DispatchQueue(label: "islet.store.worlds", qos: .userInitiated)
        private var opened: WorldStore?

        init(settings: IsletConfiguration.Store, loop: EventLoop?) {
            self.path = SimulationStorage.worldStorePath(besides: settings.path)
            self.settings = settings
            self.loop = loop
        }

        /// Runs `body` with the store on its queue, opening (or creating) the store first.
        func withStore<T>(logger: Logger, _ body: (WorldStore) throws -> T) throws -> T {
            try self.queue.sync {
                let store = try self.opened ?? WorldStore(path: self.path, durability: self.settings.durability, logger: logger)
                self.opened = store
                return try body(store)
            }
        }

        /// Closes the store (after every world's stage closed), so a new server may open it.
        func close() { self.queue.sync { self.opened = nil } }

        /// Whether a store file exists (or is open) to restore worlds from.
        var exists: Bool {
            self.queue.sync { self.opened != nil } || (self.path != ":memory:" && FileManager.default.fileExists(atPath: self.path))
        }

        /// The commit stage of a world's log: appends on the store's queue (or the loop's thread).
        func stage(_ log: WorldLog, state: RecoveredState, wall: Instant, logger: Logger) -> StoreCommitStage {
            let threads: StoreCommitStage.Threads
            switch (self.loop, self.settings.writer) {
            case (nil, _): threads = .caller
            case (let loop?, .loop): threads = .loop(loop)
            case (let loop?, .thread): threads = .writer(loop)
            }
            return StoreCommitStage(
                log: log, settings: self.settings, threads: threads, lastSnapshot: (state.snapshotSequence, wall),
                logger: logger, writer: self.queue)
        }
    }
}

/// A simulation's log as the server gets it: the state to start from, the stage that continues
/// it, when it was created, and its own tokens.
struct StoredSimulation {
    let id: String
    let state: RecoveredState
    let stage: any CommitStage
    let created: Instant
    let tokens: SimulationTokens?
}

extension SimulationStorage {
    /// Every stored simulation, recovered, sorted by id.
    func recoverAll(configuration: IsletConfiguration, logger: Logger) throws -> [StoredSimulation] {
        guard case .worlds(let worlds) = self.kind, worlds.exists else { return [] }
        let recovered = try worlds.withStore(logger: logger) { store in
            try store.worlds().map { world in
                let log = try store.open(world.name)
                let wall = Instant(millisecondsSinceEpoch: world.created)
                let state = try StoreRecovery.recover(log, configuration: configuration, wall: wall, logger: logger)
                return (world.name, log, state, wall, Self.tokens(try store.values(of: world.name)))
            }
        }
        return recovered.map { id, log, state, wall, tokens in
            StoredSimulation(
                id: id, state: state, stage: worlds.stage(log, state: state, wall: wall, logger: logger), created: wall,
                tokens: tokens)
        }
    }

    /// Creates a simulation whose revision 0 is `engine`, durably before it returns, in one
    /// transaction: when it fails, nothing is left behind.
    func create(
        _ id: String, engine: Engine, wall: Instant, tokens: SimulationTokens?, configuration: IsletConfiguration,
        logger: Logger
    ) throws -> StoredSimulation {
        let history = RevisionHistory(
            maxRevisions: configuration.stream.historyRevisions, maxBytes: configuration.stream.historyBytes)
        guard case .worlds(let worlds) = self.kind else {
            let state = RecoveredState(
                engine: engine, epoch: randomEpoch(), snapshotSequence: 0, replayedRecords: 0, created: true,
                history: history)
            return StoredSimulation(id: id, state: state, stage: ImmediateCommitStage(), created: wall, tokens: tokens)
        }
        let genesis = SnapshotPayload(engine: engine.snapshotBytes, history: []).encoded()
        var values: [String: String] = [:]
        if let tokens {
            values[Self.adminTokenKey] = tokens.admin
            values[Self.viewerTokenKey] = tokens.viewer
        }
        let log = try worlds.withStore(logger: logger) { store in
            try store.create(id, instant: wall.millisecondsSinceEpoch, genesis: genesis, values: values)
        }
        let state = RecoveredState(
            engine: engine, epoch: log.epoch, snapshotSequence: 0, replayedRecords: 0, created: true, history: history)
        return StoredSimulation(
            id: id, state: state, stage: worlds.stage(log, state: state, wall: wall, logger: logger), created: wall,
            tokens: tokens)
    }

    /// Closes the world store at shutdown, once every simulation's stage has closed.
    func close() {
        if case .worlds(let worlds) = self.kind { worlds.close() }
    }

    /// Removes a deleted simulation's log; its stage was closed.
    func remove(_ id: String, logger: Logger) {
        guard case .worlds(let worlds) = self.kind else { return }
        do {
            try worlds.withStore(logger: logger) { try $0.delete(id) }
        } catch {
            logger.error("removing a simulation's log failed", metadata: ["islet.sim": "\(id)", "error": "\(error)"])
        }
    }

    /// Bytes of a simulation's records and snapshots in the world store (of `default`: its log
    /// file and WAL), if stored.
    func bytes(of id: String, logger: Logger) -> Int64? {
        guard case .worlds(let worlds) = self.kind else { return nil }
        if id == SimulationName.default {
            let path = worlds.settings.path
            return path == ":memory:"
                ? nil
                : [path, path + "-wal"].compactMap { (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? Int64 }
                    .reduce(0, +)
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
