import IsletCore
import Logging
public import IsletStore

/// `islet store export`: a command log as a scenario file (see `ScenarioLine`).
///
/// The log is replayed from its genesis snapshot (the state the store started from) so that each
/// record's wall instant can be turned into the simulated instant its batch saw: a `.batch`
/// record becomes `{"at", "commands"}`, a `.tick` record `{"at", "commands": []}`.
public enum ScenarioExport {
    /// Writes one line per record of `log`, in order.
    /// - Returns: how many lines were written.
    /// - Throws: `ScenarioError` when the log was compacted (its beginning is gone) or does not
    ///   replay; a `StoreError` on a failed read; what `sink` throws.
    @discardableResult
    public static func export(_ log: any OrderedLog, to sink: (ScenarioLine) throws -> Void) throws -> Int {
        let first = try log.records(after: 0, limit: 1).first?.sequence
        guard first == nil || first == 1, let genesis = try log.snapshot(at: 0) else {
            throw ScenarioError(
                "\(log.path) no longer holds the start of its history (compacted up to revision "
                    + "\((first ?? log.lastSequence + 1) - 1)); a scenario file needs every revision from 1")
        }
        var engine = try StoreRecovery.restore(genesis, path: log.path)
        var count = 0
        do {
            try log.forEachRecord(after: 0) { record in
                let at = engine.simulatedInstant(atWall: Instant(millisecondsSinceEpoch: record.instant))
                let commands = record.kind == .batch ? try LogReplay.commands(of: record) : []
                try LogReplay.apply(record, to: &engine)
                try sink(ScenarioLine(at: at, commands: commands))
                count += 1
            }
        } catch let mismatch as LogReplay.Mismatch {
            throw ScenarioError("\(log.path): \(mismatch)")
        }
        return count
    }

    /// Writes simulation `name` of the world store beside the log at `path` (`islet store export
    /// --simulation`), read while a server may be using it.
    /// - Returns: how many lines were written, and the simulation's epoch.
    /// - Throws: `ScenarioError` when there is no such simulation, or it is a fork (its history
    ///   starts from a copy of its source's state, with its own clock and tokens, which scenario
    ///   lines cannot hold), besides what `export(_:to:)` throws.
    public static func exportSimulation(
        _ name: String, besides path: String, to sink: (ScenarioLine) throws -> Void
    ) throws -> (lines: Int, epoch: String) {
        let worldsPath = SimulationStorage.worldStorePath(besides: path)
        guard worldsPath != ":memory:", FileSystem.info(worldsPath) != nil else {
            throw ScenarioError("no simulation \"\(name)\": \(worldsPath), where simulations keep their logs, does not exist")
        }
        let store = try WorldStore(
            path: worldsPath, readOnly: true, logger: Logger(label: "islet.store") { _ in SwiftLogNoOpLogHandler() })
        guard try store.worlds().contains(where: { $0.name == name }) else {
            throw ScenarioError("\(worldsPath) holds no simulation \"\(name)\"")
        }
        if let fork = ForkReference(values: try store.values(of: name)) {
            throw ScenarioError(
                "simulation \(name) is a fork of \(fork.source) at revision \(fork.rev): its history starts from a copy "
                    + "of that state with its own clock and tokens, which a scenario file cannot hold; export "
                    + "\(fork.source) for the history up to the fork")
        }
        let log = try store.open(name)
        return (try Self.export(log, to: sink), log.epoch)
    }
}
