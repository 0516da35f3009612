import Foundation
import IsletCore
import IsletRender
import IsletStore
public import IsletTransport
import Logging

/// Where the simulations other than `default` keep their command logs: one SQLite file each in a
/// directory beside the default log (`islet.sqlite.simulations/<id>.sqlite`), in memory, or
/// nowhere (a server without a store). `default` keeps the log it always had.
public struct SimulationStorage: Sendable {
    enum Kind: Sendable {
        /// No log: an `ImmediateCommitStage` per simulation, and no fork of the past.
        case none
        /// A log per simulation: SQLite files in `directory`, or `:memory:` logs when nil.
        case logs(directory: String?, settings: IsletConfiguration.Store, loop: EventLoop?)
    }

    let kind: Kind

    /// Simulations without logs.
    public static let none = SimulationStorage(kind: .none)

    /// The storage that goes with `configuration.store`: files beside its log, or in memory
    /// for `:memory:`. `loop` is the server's (nil: everything on the calling thread).
    public static func beside(_ configuration: IsletConfiguration, loop: EventLoop?) -> SimulationStorage {
        let path = configuration.store.path
        let directory = path == ":memory:" ? nil : path + ".simulations"
        return SimulationStorage(kind: .logs(directory: directory, settings: configuration.store, loop: loop))
    }

    /// The directory of the simulations' files, if they are files.
    public var directory: String? {
        guard case .logs(let directory?, _, _) = self.kind else { return nil }
        return directory
    }
}

/// A simulation's log as the server gets it: the state to start from, the stage that continues
/// it, and when it was created.
struct StoredSimulation {
    let id: String
    let state: RecoveredState
    let stage: any CommitStage
    let created: Instant
    let tokens: SimulationTokens?
}

extension SimulationStorage {
    /// Every stored simulation, recovered, sorted by id. A file whose creation never completed
    /// (no genesis snapshot: the server died before acknowledging it) is removed.
    func recoverAll(configuration: IsletConfiguration, logger: Logger) throws -> [StoredSimulation] {
        guard case .logs(let directory?, _, _) = self.kind else { return [] }
        let manager = FileManager.default
        guard manager.fileExists(atPath: directory) else { return [] }
        let names = try manager.contentsOfDirectory(atPath: directory)
        var stored: [StoredSimulation] = []
        for name in names.sorted() where name.hasSuffix(".sqlite") {
            let id = String(name.dropLast(".sqlite".count))
            guard SimulationName.isValid(id), id != SimulationName.default else { continue }
            let path = directory + "/" + name
            let log = try CommandLog(
                path: path, durability: configuration.store.durability, checkpointing: Self.checkpointing, logger: logger)
            guard let createdText = try log.metadata(Self.createdKey), let created = Int64(createdText) else {
                logger.warning("removing a simulation whose creation never completed", metadata: ["islet.sim": "\(id)"])
                Self.removeFiles(of: path)
                continue
            }
            let wall = Instant(millisecondsSinceEpoch: created)
            var tokens: SimulationTokens?
            if let admin = try log.metadata(Self.adminTokenKey), let viewer = try log.metadata(Self.viewerTokenKey) {
                tokens = SimulationTokens(admin: admin, viewer: viewer)
            }
            let state = try StoreRecovery.recover(log, configuration: configuration, wall: wall, logger: logger)
            stored.append(
                StoredSimulation(
                    id: id, state: state, stage: self.stage(log, state: state, wall: wall, logger: logger),
                    created: wall, tokens: tokens))
        }
        return stored
    }

    /// Creates a simulation whose revision 0 is `engine`, durably before it returns. When it
    /// fails, nothing is left behind.
    func create(
        _ id: String, engine: Engine, wall: Instant, tokens: SimulationTokens?, configuration: IsletConfiguration,
        logger: Logger
    ) throws -> StoredSimulation {
        let history = RevisionHistory(
            maxRevisions: configuration.stream.historyRevisions, maxBytes: configuration.stream.historyBytes)
        switch self.kind {
        case .none:
            let state = RecoveredState(
                engine: engine, epoch: randomEpoch(), snapshotSequence: 0, replayedRecords: 0, created: true,
                history: history)
            return StoredSimulation(id: id, state: state, stage: ImmediateCommitStage(), created: wall, tokens: tokens)
        case .logs(let directory, let settings, _):
            let path: String
            if let directory {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                path = directory + "/" + id + ".sqlite"
            } else {
                path = ":memory:"
            }
            let log = try CommandLog(
                path: path, durability: settings.durability, checkpointing: Self.checkpointing, logger: logger)
            guard log.lastSequence == 0, try log.latestSnapshot() == nil else {
                throw APIError(.conflict, "the log of simulation \"\(id)\" exists already (\(path))", field: "/id")
            }
            do {
                let payload = SnapshotPayload(engine: engine.snapshotBytes, history: [])
                try log.writeSnapshot(sequence: 0, instant: wall.millisecondsSinceEpoch, payload: payload.encoded())
                if let tokens {
                    try log.setMetadata(Self.adminTokenKey, tokens.admin)
                    try log.setMetadata(Self.viewerTokenKey, tokens.viewer)
                }
                // Written last: a file without it is a creation that never completed.
                try log.setMetadata(Self.createdKey, String(wall.millisecondsSinceEpoch))
            } catch {
                Self.removeFiles(of: path)
                throw error
            }
            let state = RecoveredState(
                engine: engine, epoch: log.epoch, snapshotSequence: 0, replayedRecords: 0, created: true,
                history: history)
            return StoredSimulation(
                id: id, state: state, stage: self.stage(log, state: state, wall: wall, logger: logger), created: wall,
                tokens: tokens)
        }
    }

    /// Removes a deleted simulation's files; its stage was closed.
    func removeFiles(ofSimulation id: String) {
        guard let directory = self.directory else { return }
        Self.removeFiles(of: directory + "/" + id + ".sqlite")
    }

    /// Bytes on disk of a simulation's log (database and WAL), if it is a file.
    func bytes(of id: String) -> Int64? {
        guard case .logs(let directory?, let settings, _) = self.kind else { return nil }
        let path = id == SimulationName.default ? settings.path : directory + "/" + id + ".sqlite"
        return [path, path + "-wal"].compactMap { file in
            (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int64
        }.reduce(0, +)
    }

    /// Checkpoints run with the appends, on the stage's writer queue: a background checkpointer
    /// would hold a second SQLite connection (about 100 KiB) for every simulation.
    private static let checkpointing = Checkpointing.inline
    private static let createdKey = "simulation.created"
    private static let adminTokenKey = "simulation.admin-token"
    private static let viewerTokenKey = "simulation.viewer-token"

    private func stage(_ log: CommandLog, state: RecoveredState, wall: Instant, logger: Logger) -> StoreCommitStage {
        guard case .logs(_, let settings, let loop) = self.kind else { preconditionFailure("only logs have stages") }
        let threads: StoreCommitStage.Threads
        switch (loop, settings.writer) {
        case (nil, _): threads = .caller
        case (let loop?, .loop): threads = .loop(loop)
        case (let loop?, .thread): threads = .writer(loop)
        }
        return StoreCommitStage(
            log: log, settings: settings, threads: threads, lastSnapshot: (state.snapshotSequence, wall),
            logger: logger)
    }

    /// Removes the database with its WAL, shared-memory and lock files (an open log keeps
    /// working on the unlinked files until it is closed).
    private static func removeFiles(of path: String) {
        guard path != ":memory:" else { return }
        for suffix in ["", "-wal", "-shm", "-journal", "-lock"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
