public import ArgumentParser

/// `islet bench …`: measurements of the budgets in DESIGN.md, kept apart from the tests, which
/// never time anything, and apart from the server, which ships none of them. Run them on a
/// release build with nothing else building.
public struct Bench: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        abstract: "Measures Islet's performance budgets (run on a release build).",
        subcommands: [
            BenchEngine.self, BenchStore.self, BenchIdle.self, BenchFanout.self, BenchCompression.self,
            BenchCommands.self, BenchRecovery.self, BenchSimulations.self, BenchCluster.self, BenchBroadcast.self,
        ])

    public init() {}
}

/// Refuses a count a run cannot measure (a usage error, exit 64): zero subscribers, clients or
/// records would divide by zero or wait for ever.
func requirePositive(_ counts: KeyValuePairs<String, Int>) throws {
    for (name, value) in counts where value < 1 {
        throw ValidationError("--\(name) must be at least 1, not \(value)")
    }
}
