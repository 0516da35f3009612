import ArgumentParser
import IsletBench

/// The `islet` command: serves the simulator and offers the tools around it.
@main
struct Islet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "islet",
        abstract: "Simulates what an iPhone shows for Live Activities, widgets and Smart Stacks.",
        subcommands: [Serve.self, Sim.self, Store.self, Tail.self, Push.self, APNs.self, Snapshot.self, Bench.self])
}
