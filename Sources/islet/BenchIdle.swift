import ArgumentParser

struct BenchIdle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "idle", abstract: "placeholder")
    func run() async throws {}
}
