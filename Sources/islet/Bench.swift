import ArgumentParser

/// `islet bench …`: measurements of the budgets in DESIGN.md, kept apart from the tests, which
/// never time anything. Run them on a release build with nothing else building.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measures Islet's performance budgets (run on a release build).",
        subcommands: [
            BenchEngine.self, BenchStore.self, BenchIdle.self, BenchFanout.self, BenchCompression.self,
            BenchCommands.self, BenchRecovery.self, BenchSimulations.self,
        ])
}
