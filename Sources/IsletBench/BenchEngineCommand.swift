import ArgumentParser
import IsletServer

/// `islet bench engine`: the options of `EngineBenchmark`, which measures in process.
struct BenchEngine: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "engine", abstract: "Times 24 h of transitions over many activities, and update → patch.")

    @Option(help: "Activities in the scale world.") var activities = 10_000
    @Option(help: "Apps the activities belong to.") var apps = 1000
    @Option(help: "Measured activity.update calls per diff row.") var updates = 20_000
    @Flag(help: "Skip the one-minute-steps run of the scale benchmark.") var skipStepped = false
    @Flag(help: "Only the small-world update → patch rows.") var diffOnly = false
    @Flag(help: "Only the update → patch rows in the scale world (for profiling them).") var scaleDiffOnly = false
    @Flag(help: "Print the last patch of each update → patch row.") var showPatch = false
    @Option(help: "Renderers for the small-world rows: mustache, plain or both.") var renderer = "both"
    @Option(help: "Widgets in the widget scale world (0 skips it); ten to a stack.") var widgets = 0
    @Option(help: "Timeline entries per widget.") var entries = 24
    @Flag(help: "Start each widget's hourly entries at its own minute instead of on the hour.") var stagger = false
    @Flag(help: "Only the widget scale rows.") var widgetsOnly = false
    @Flag(help: "Build the widget world into the activity scale world (the whole DESIGN.md budget).")
    var withActivities = false
    @Option(help: "Widget-world runs: single (one 24 h step), stepped (one-minute steps), both.") var widgetRuns =
        "single"

    func validate() throws {
        try requirePositive(["activities": self.activities, "apps": self.apps, "updates": self.updates, "entries": self.entries])
    }

    func run() throws {
        let benchmark = EngineBenchmark(
            activities: self.activities, apps: self.apps, updates: self.updates, skipStepped: self.skipStepped,
            diffOnly: self.diffOnly, scaleDiffOnly: self.scaleDiffOnly, showPatch: self.showPatch,
            renderer: self.renderer, widgets: self.widgets, entries: self.entries,
            stagger: self.stagger, widgetsOnly: self.widgetsOnly, withActivities: self.withActivities,
            widgetRuns: self.widgetRuns)
        try benchmark.run { print($0) }
    }
}
