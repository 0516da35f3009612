import ArgumentParser
import IsletClient
import IsletServer

/// `islet sim`: creates, forks, lists and deletes simulations on a running server.
struct Sim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sim",
        abstract: "Create, fork, list and delete the simulations (isolated worlds) of a running server.",
        discussion: """
            Environment: ISLET_URL, ISLET_ADMIN_TOKEN (sent as Authorization: bearer).
            Exit status: 0 on success; 1 when the server refuses (its error is printed on standard error).
            """,
        subcommands: [Create.self, Fork.self, List.self, Delete.self])

    /// The server and token every subcommand takes.
    struct Connection: ParsableArguments {
        @Option(help: "The server URL, http:// (ISLET_URL). Default: http://127.0.0.1:8080.")
        var url: String?

        @Option(help: "The admin token (ISLET_ADMIN_TOKEN), sent as Authorization: bearer.")
        var token: String?

        /// Sends one request and returns the body of a 2xx reply; anything else exits 1 after
        /// printing the error, prefixed with `command`.
        func send(_ method: String, _ path: String, body: [UInt8] = [], command: String = "islet sim") async throws
            -> [UInt8]
        {
            let environment = Environment.current
            let target = try StreamURL(self.url ?? environment["ISLET_URL"] ?? "http://127.0.0.1:8080")
            var headers = [("Content-Type", "application/json")]
            if let token = self.token ?? environment["ISLET_ADMIN_TOKEN"] {
                headers.append(("Authorization", "bearer \(token)"))
            }
            let reply = try await HTTPClient.request(
                host: target.host, port: target.port, method: method, path: path, headers: headers, body: body)
            guard (200..<300).contains(reply.status) else {
                printError("\(command): \(reply.status) \(SimulationRequests.errorMessage(reply.body))")
                throw ExitCode(1)
            }
            return reply.body
        }
    }

    /// The clock options of `create` and `fork`.
    struct ClockOptions: ParsableArguments {
        @Option(help: "Start a paused virtual clock at this RFC 3339 instant, e.g. 2026-01-01T08:00:00Z.")
        var virtualClock: String?

        // `.unconditional`: a negative value is a value (the server says why it is refused), not
        // an unknown option.
        @Option(parsing: .unconditional, help: "Simulated seconds per wall second of the virtual clock (0 pauses it).")
        var rate: Double?

        @Flag(help: "Follow the wall clock.")
        var wallClock = false

        func validate() throws {
            if self.wallClock && (self.virtualClock != nil || self.rate != nil) {
                throw ValidationError("--wall-clock takes neither --virtual-clock nor --rate")
            }
            if let text = self.virtualClock {
                var probe = IsletConfiguration()
                do { try probe.setVirtualClockStart(rfc3339: text) } catch {
                    throw ValidationError("--virtual-clock must be an RFC 3339 date such as 2026-01-01T08:00:00Z: \(error)")
                }
            }
        }
    }

    /// Refuses an id that is no simulation id before it goes into a URL path.
    static func check(_ id: String) throws {
        guard SimulationRequests.isValidID(id) else {
            throw ValidationError("\(id) is not a simulation id (1 to 64 of a-z, 0-9 and -)")
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an empty simulation and print {\"id\",\"epoch\",\"rev\"}.")

        @Argument(help: "Its id ([a-z0-9-], 1 to 64); the server picks one if absent.")
        var id: String?

        @OptionGroup var clock: ClockOptions

        @Flag(help: "Load the demo scenario into it.")
        var demo = false

        @OptionGroup var connection: Connection

        func run() async throws {
            let body = SimulationRequests.createBody(
                id: self.id, virtualClock: self.clock.virtualClock, rate: self.clock.rate,
                wallClock: self.clock.wallClock, demo: self.demo, from: nil, rev: nil)
            print(String(decoding: try await self.connection.send("POST", "/v1/simulations", body: body), as: UTF8.self))
        }
    }

    struct Fork: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fork a simulation: a new one that starts as an exact copy of SOURCE at --rev (default: its latest).")

        @Argument(help: "The simulation to copy.")
        var source: String

        @Argument(help: "The new simulation's id; the server picks one if absent.")
        var id: String?

        @Option(help: "The source's revision to start from (default: its latest).")
        var rev: UInt64?

        @OptionGroup var clock: ClockOptions

        @OptionGroup var connection: Connection

        func validate() throws { try Sim.check(self.source) }

        func run() async throws {
            let body = SimulationRequests.createBody(
                id: self.id, virtualClock: self.clock.virtualClock, rate: self.clock.rate,
                wallClock: self.clock.wallClock, demo: false, from: self.source, rev: self.rev)
            print(String(decoding: try await self.connection.send("POST", "/v1/simulations", body: body), as: UTF8.self))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the simulations as a table.")

        @Flag(help: "Print the server's JSON instead of a table.")
        var json = false

        @OptionGroup var connection: Connection

        func run() async throws {
            let reply = try await self.connection.send("GET", "/v1/simulations")
            print(self.json ? String(decoding: reply, as: UTF8.self) : try SimulationRequests.table(reply))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a simulation with its log; its streams get resync (deleted).")

        @Argument(help: "The simulation to delete.")
        var id: String

        @OptionGroup var connection: Connection

        func validate() throws { try Sim.check(self.id) }

        func run() async throws {
            _ = try await self.connection.send("DELETE", "/v1/simulations/\(self.id)")
            print("deleted \(self.id)")
        }
    }
}
