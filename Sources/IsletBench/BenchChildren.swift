import Foundation
import Synchronization

/// What a benchmark started (servers, redis-server, HAProxy) and the temporary directories it
/// made, stopped and removed with it when it is interrupted (SIGINT, SIGTERM): else the
/// processes would run on, reparented to init, holding their ports and memory, and the
/// directories would stay.
///
/// A child inherits the benchmark's ignored SIGINT and SIGTERM (Foundation's `Process` keeps
/// ignored dispositions across exec) until it installs its own handlers, so a signal sent in its
/// first moments is lost: children still running after `gracePeriod` are killed. Once
/// interrupted, the interruption owns the exit: a thread that would exit meanwhile (the benchmark
/// seeing its server go) waits for it, and the exit status is 128 + the signal.
enum BenchChildren {
    private struct State {
        var processes: [Int32: Process] = [:]
        var directories: Set<String> = []
        var signals: [any DispatchSourceSignal] = []
        var interrupted = false

        mutating func watchSignals() {
            guard self.signals.isEmpty else { return }
            self.signals = [SIGINT, SIGTERM].map(BenchChildren.watch)
            atexit { BenchChildren.waitForInterruption() }
        }
    }

    private static let state = Mutex(State())
    private static let gracePeriod: Duration = .seconds(5)

    /// Starts `process` as a child the benchmark stops when interrupted. The handlers are in
    /// place before the child exists, and a signal arriving meanwhile waits for its pid.
    static func run(_ process: Process) throws {
        try state.withLock { state in
            state.watchSignals()
            try process.run()
            state.processes[process.processIdentifier] = process
        }
    }

    /// The child `pid` was stopped by the benchmark.
    static func release(_ pid: Int32) { state.withLock { _ = $0.processes.removeValue(forKey: pid) } }

    /// A new directory `islet-bench-<name>-<pid>` under the temporary directory, removed by
    /// `removeDirectory` or when the benchmark is interrupted.
    static func makeDirectory(_ name: String) throws -> String {
        let directory = FileManager.default.temporaryDirectory.path + "/islet-bench-\(name)-\(getpid())"
        try state.withLock { state in
            state.watchSignals()
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            state.directories.insert(directory)
        }
        return directory
    }

    /// `given` (a `--dir`, created if missing and kept), else a new temporary directory that
    /// `removeDirectory` removes. Returns the path and whether it is temporary.
    static func directory(given: String?, else name: String) throws -> (path: String, isTemporary: Bool) {
        guard let given else { return (try self.makeDirectory(name), true) }
        try FileManager.default.createDirectory(atPath: given, withIntermediateDirectories: true)
        return (given, false)
    }

    static func removeDirectory(_ directory: String) {
        state.withLock { _ = $0.directories.remove(directory) }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func watch(_ number: Int32) -> any DispatchSourceSignal {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            let (children, directories) = Self.state.withLock { state in
                state.interrupted = true
                // One already reaped may have had its pid given to another process.
                return (state.processes.values.filter(\.isRunning), state.directories)
            }
            for child in children { kill(child.processIdentifier, SIGTERM) }
            let deadline = ContinuousClock.now + Self.gracePeriod
            while children.contains(where: \.isRunning) && ContinuousClock.now < deadline {
                usleep(20_000)
            }
            for child in children where child.isRunning { kill(child.processIdentifier, SIGKILL) }
            for directory in directories { try? FileManager.default.removeItem(atPath: directory) }
            fflush(nil)
            _exit(128 + number)
        }
        source.resume()
        return source
    }

    private static func waitForInterruption() {
        guard Self.state.withLock({ $0.interrupted }) else { return }
        while true { pause() }
    }
}
