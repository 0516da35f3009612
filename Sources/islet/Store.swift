import ArgumentParser
import IsletServer

#if canImport(Glibc)
import Glibc
#endif

/// `islet store …`: tools for the command log a server keeps (`--db`).
struct Store: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export, import, compact or describe a command log.",
        discussion: """
            A database that cannot be used is reported with a message naming it and exit code 2.
            export reads a log a server is using; import and compact need the file to themselves.
            """,
        subcommands: [StoreExport.self, StoreImport.self, StoreCompact.self, StoreRepair.self, StoreInfo.self])
}

/// `islet store export`: the log as a scenario file.
struct StoreExport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the log as JSON Lines of {\"at\", \"commands\"} (a scenario file).",
        discussion: """
            "at" is the simulated instant each batch took effect at; "commands": [] is a clock step \
            that fired scheduled transitions. Replay the file with islet serve --replay FILE or \
            islet store import FILE --db NEW. The whole history is needed: a compacted log is refused. \
            --simulation NAME exports another simulation from the world store beside the log (a fork \
            is refused: its history starts from a copy of its source's state).
            """)

    @Option(help: "The command log (ISLET_DB). Default: ./islet.sqlite.")
    var db: String?

    @Option(help: "Write here instead of standard output.")
    var out: String?

    @Option(help: "The simulation to export (default: default), from the world store beside --db.")
    var simulation: String?

    func run() throws {
        let path = self.db ?? Environment.current["ISLET_DB"] ?? "./islet.sqlite"
        try requireExistingLog(path, "export")
        try withStoreErrors("export") {
            let files = [path, SimulationStorage.worldStorePath(besides: path)].flatMap { [$0, $0 + "-wal", $0 + "-shm"] }
            if let out = self.out, files.contains(where: { isSameFile(out, $0) }) {
                throw ScenarioError("--out \(out) is the log itself (or its WAL): writing there would truncate it")
            }
            let output = try OutputFile(path: self.out)
            let write = { (line: ScenarioLine) in try output.write(line.encoded + [0x0A]) }
            if let simulation = self.simulation, simulation != "default" {
                let exported = try ScenarioExport.exportSimulation(simulation, besides: path, to: write)
                try output.close()
                printError("exported \(exported.lines) lines of simulation \(simulation) (epoch \(exported.epoch))")
            } else {
                let log = try CommandLogFile(path: path, readOnly: true)
                let lines = try log.exportScenario(to: write)
                try output.close()
                printError("exported \(lines) lines from \(path) (epoch \(log.epoch))")
            }
        }
    }
}

/// `islet store import`: a scenario file replayed into a new log.
struct StoreImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Replay a scenario file into a new command log, on a virtual clock.",
        discussion: """
            The clock starts paused at --virtual-clock, or at the first line's "at". The log must \
            hold no revision yet. Serve it afterwards with islet serve --db NEW.
            """)

    @Argument(help: "The scenario file (JSON Lines of {\"at\", \"commands\"}).")
    var file: String

    @Option(help: "The new command log.")
    var db: String

    @Option(help: "Start the virtual clock at this RFC 3339 instant instead of the first line's.")
    var virtualClock: String?

    func run() throws {
        var configuration = IsletConfiguration()
        if let text = self.virtualClock {
            do {
                try configuration.setVirtualClockStart(rfc3339: text)
            } catch {
                throw ValidationError("--virtual-clock must be an RFC 3339 date: \(error)")
            }
        }
        try withStoreErrors("import") {
            // Checked first: a scenario that does not replay leaves no log behind.
            try ScenarioImport.check(file: self.file, configuration: configuration)
            let log = try CommandLogFile(path: self.db)
            let summary = try log.importScenario(file: self.file, configuration: configuration)
            let revisions = summary.revisions == 0 ? "no revisions" : "revisions 1–\(summary.revisions)"
            print(
                "imported \(summary.lines) lines into \(self.db): \(revisions), "
                    + "\(summary.clockAdvances) clock advances added, epoch \(log.epoch)")
        }
    }
}

/// `islet store compact`: drops records the latest snapshot makes unnecessary.
struct StoreCompact: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Delete log records before the latest snapshot and shrink the file.",
        discussion: """
            Records after the latest snapshot are always kept (startup replays them), and so are the \
            --keep newest records before it. Stream clients resume from the history stored with each \
            snapshot, so compaction does not shorten what they can resume. An export needs the whole \
            log: export first if you want a scenario file. Refused while a fork of default has no \
            snapshot of its own yet (start the server once first). Stop the server first.
            """)

    @Option(help: "The command log (ISLET_DB). Default: ./islet.sqlite.")
    var db: String?

    @Option(help: "Records before the latest snapshot to keep.")
    var keep = 0

    func run() throws {
        guard self.keep >= 0 else { throw ValidationError("--keep must not be negative") }
        let path = self.db ?? Environment.current["ISLET_DB"] ?? "./islet.sqlite"
        try requireExistingLog(path, "compact")
        try withStoreErrors("compact") {
            let log = try CommandLogFile(path: path)
            let report = try log.compact(keepingRecords: self.keep)
            let through = report.removedThrough.map { "records 1…\($0)" } ?? "nothing"
            print(
                "compacted \(path): removed \(report.removedRecords) records (\(through)); "
                    + "\(report.bytesBefore) → \(report.bytesAfter) bytes")
        }
    }
}

/// `islet store repair`: a log cut back to its last record that replays.
struct StoreRepair: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Cut a log that does not replay back to its last good record, keeping a copy.",
        discussion: """
            Replays the log as islet serve does. When a record does not replay (islet serve names it \
            and exits with code 2), a copy of the whole file is written first (--copy, default \
            DB.before-repair-<time>), then that record and every later one are deleted, and the rest \
            is replayed again to check it. The log gets a new epoch (stream clients resync). A log \
            that replays is left as it is. Stop the server first.
            """)

    @Option(help: "The command log (ISLET_DB). Default: ./islet.sqlite.")
    var db: String?

    @Option(help: "Where to keep the copy of the file before it is cut. Default: DB.before-repair-<Unix time>.")
    var copy: String?

    func run() throws {
        let path = self.db ?? Environment.current["ISLET_DB"] ?? "./islet.sqlite"
        let copy = self.copy ?? "\(path).before-repair-\(time(nil))"
        try requireExistingLog(path, "repair")
        var existing = stat()
        if stat(copy, &existing) == 0 {
            printError("islet store repair: \(copy) exists: --copy names the new file the log is copied to")
            throw ExitCode(2)
        }
        try withStoreErrors("repair") {
            let log = try CommandLogFile(path: path)
            let repair = try log.repair(keepingCopyAt: copy)
            guard let bad = repair.firstBadRecord else {
                print("\(path) replays to revision \(repair.lastSequence): nothing to repair")
                return
            }
            print(
                "repaired \(path): record \(bad) did not replay; removed \(repair.removedRecords) records "
                    + "(\(bad)…), the log now ends at revision \(repair.lastSequence) "
                    + "under a new epoch \(log.epoch); "
                    + "the file as it was: \(copy)")
        }
    }
}

/// `islet store info`: what a log holds.
struct StoreInfo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info", abstract: "Print a command log's epoch, records and snapshots (one \"key: value\" a line)."
    )

    @Option(help: "The command log (ISLET_DB). Default: ./islet.sqlite.")
    var db: String?

    func run() throws {
        let path = self.db ?? Environment.current["ISLET_DB"] ?? "./islet.sqlite"
        try requireExistingLog(path, "info")
        try withStoreErrors("info") {
            let log = try CommandLogFile(path: path, readOnly: true)
            print("path: \(path)")
            print("epoch: \(log.epoch)")
            print("last revision: \(log.lastSequence)")
            print("records: \(try log.recordCount())")
            print("first record: \(try log.firstRecordSequence().map(String.init) ?? "(none)")")
            print("snapshots: \(try log.snapshotSequences().map(String.init).joined(separator: ", "))")
        }
    }
}

/// Runs `body`, turning the errors an operator must act on into a message and exit code 2.
private func withStoreErrors(_ command: String, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error where CommandLogFile.isOperatorError(error) {
        printError("islet store \(command): \(error)")
        throw ExitCode(2)
    }
}

/// Refuses (exit code 2) a `--db` that names no file: opening it would create an empty log (and a
/// mistyped `--db` would "succeed" on it), or SQLite would call a directory an I/O error.
private func requireExistingLog(_ path: String, _ command: String) throws {
    var info = stat()
    if stat(path, &info) != 0 {
        printError("islet store \(command): there is no command log at \(path) (check --db or ISLET_DB)")
        throw ExitCode(2)
    }
    if (info.st_mode & S_IFMT) == S_IFDIR {
        printError("islet store \(command): \(path) is a directory: --db names the command log file")
        throw ExitCode(2)
    }
}

/// Whether both paths name one existing file (the same device and inode, through any link).
private func isSameFile(_ a: String, _ b: String) -> Bool {
    var first = stat()
    var second = stat()
    guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino
}

/// Standard output, or a file at `path`, written without Foundation. A regular file is written
/// in full or not at all: the lines go to a file beside it, renamed over `path` by `close()`, so
/// an export refused or failed midway leaves what `path` held (a device or a pipe is written in
/// place).
private final class OutputFile {
    private let descriptor: Int32
    private let path: String
    /// The file being written, until `close()` renames it to `path`.
    private var partial: String?
    private var isClosed = false

    init(path: String?) throws {
        self.path = path ?? "standard output"
        guard let path else {
            self.descriptor = 1
            return
        }
        var existing = stat()
        let inPlace = stat(path, &existing) == 0 && (existing.st_mode & S_IFMT) != S_IFREG
        let target = inPlace ? path : path + ".partial-\(getpid())"
        let flags = inPlace ? O_WRONLY | O_TRUNC | O_CLOEXEC : O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
        self.descriptor = open(target, flags, 0o644)
        guard self.descriptor >= 0 else {
            throw ScenarioError("cannot write \(target): \(String(cString: strerror(errno)))")
        }
        self.partial = inPlace ? nil : target
    }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(self.descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw ScenarioError("cannot write \(self.path): \(String(cString: strerror(errno)))") }
            offset += n
        }
    }

    func close() throws {
        guard self.descriptor != 1 else { return }
        // A device or a pipe has nothing to sync (fsync fails there with EINVAL).
        let synced = self.partial == nil || fsync(self.descriptor) == 0
        let closed = Glibc.close(self.descriptor) == 0
        self.isClosed = true
        guard synced, closed else {
            throw ScenarioError("cannot write \(self.path): \(String(cString: strerror(errno)))")
        }
        if let partial = self.partial {
            guard rename(partial, self.path) == 0 else {
                throw ScenarioError("cannot write \(self.path): \(String(cString: strerror(errno)))")
            }
            self.partial = nil
        }
    }

    deinit {
        guard let partial = self.partial else { return }
        if !self.isClosed { Glibc.close(self.descriptor) }
        unlink(partial)
    }
}
