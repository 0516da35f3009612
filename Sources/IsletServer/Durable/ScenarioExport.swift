import IsletCore
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
    public static func export(_ log: CommandLog, to sink: (ScenarioLine) throws -> Void) throws -> Int {
        let first = try log.firstRecordSequence()
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
}
