import ArgumentParser

/// `islet bench …`: benchmarks, kept apart from the tests. Budgets are checked here, never in
/// timed unit tests.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a benchmark.",
        subcommands: [BenchIdle.self])
}
