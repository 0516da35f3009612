import ArgumentParser
import Foundation
import IsletClient
import IsletServer
import IsletSnapshot

/// `islet snapshot`: a PNG of one view of one device, drawn by the real dashboard in headless
/// Chromium, and with `--compare` a visual regression check against a baseline.
struct Snapshot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render one view of one device with the dashboard in headless Chromium and write a PNG.",
        discussion: """
            Needs Debian's chromium (ISLET_CHROMIUM names another). With --at, the view is drawn from a \
            throwaway fork of the simulation on a paused clock at that instant (the simulation itself is \
            untouched). With --compare, exits 1 when more than --threshold of the pixels differ from the \
            baseline, and writes OUT.diff.png (differences in red) when any pixel differs. The device \
            is read first: an unreachable server, a refused token, or a simulation or device that is \
            not there exits 1 with the server's words.
            Environment: ISLET_URL, ISLET_ADMIN_TOKEN.
            """)

    @Option(help: "The server URL, http:// (ISLET_URL). Default: http://127.0.0.1:8080.")
    var url: String?

    @Option(
        help:
            "The admin or viewer token; --at needs an admin token. Prefer ISLET_ADMIN_TOKEN: an option is visible to every user in ps."
    )
    var token: String?

    @Option(help: "The simulation.") var simulation = "default"

    @Option(help: "The device id.") var device: String

    @Option(help: "island, lockScreen, standby or home.") var view: String

    @Option(
        help:
            "Draw the world moved forward to this RFC 3339 instant (a throwaway fork, its clock set there; an earlier instant does not undo what happened)."
    ) var at: String?

    @Option(help: "A baseline PNG to compare with.") var compare: String?

    @Option(help: "The share of pixels (0…1) that may differ from the baseline.") var threshold = 0.0

    @Argument(help: "Where to write the PNG.") var output: String

    func validate() throws {
        guard DashboardSnapshot.views[self.view] != nil else {
            throw ValidationError("--view must be one of island, lockScreen, standby, home")
        }
        guard (0...1).contains(self.threshold) else { throw ValidationError("--threshold is a share between 0 and 1") }
    }

    func run() async throws {
        let environment = Environment.current
        let base = (self.url ?? environment["ISLET_URL"] ?? "http://127.0.0.1:8080").trimmingSuffix("/")
        let token = self.token ?? environment["ISLET_ADMIN_TOKEN"]
        let server = Server(base: base, token: token)
        // Asked first, so that an unreachable server, a refused token, or a simulation or device
        // that is not there is said as such (the dashboard would draw another device, or nothing).
        try await server.checkDevice(self.device, in: self.simulation)
        if let baselinePath = self.compare, !FileManager.default.isReadableFile(atPath: baselinePath) {
            throw ValidationError("cannot read the baseline \(baselinePath)")
        }
        var simulation = self.simulation
        if let at = self.at { simulation = try await server.fork(self.simulation, at: at) }
        let image: PNGImage
        do {
            image = try DashboardSnapshot.render(
                baseURL: base, simulation: simulation, device: self.device, view: self.view, token: token,
                chromium: Chromium())
        } catch {
            if self.at != nil { try? await server.delete(simulation) }
            printError("islet snapshot: \(error)")
            throw ExitCode(1)
        }
        if self.at != nil { try await server.delete(simulation) }
        do { try Data(image.png).write(to: URL(fileURLWithPath: self.output)) } catch {
            printError("islet snapshot: cannot write \(self.output): \(error.localizedDescription)")
            throw ExitCode(1)
        }
        guard let baselinePath = self.compare else { return }
        try self.compareWith(baselinePath, image)
    }

    private func compareWith(_ baselinePath: String, _ image: PNGImage) throws {
        guard let data = FileManager.default.contents(atPath: baselinePath) else {
            throw ValidationError("cannot read the baseline \(baselinePath)")
        }
        let diff = ImageDiff(baseline: try PNGImage(png: [UInt8](data)), actual: image)
        let stem = self.output.hasSuffix(".png") ? String(self.output.dropLast(4)) : self.output
        let diffPath = stem + ".diff.png"
        if let marked = diff.image, diff.differing > 0 { try Data(marked.png).write(to: URL(fileURLWithPath: diffPath)) }
        let share = String(format: "%.4f", diff.ratio)
        guard diff.ratio <= self.threshold else {
            let sizes = diff.image == nil ? " (the sizes differ)" : ", see \(diffPath)"
            printError("islet snapshot: \(diff.differing) of \(diff.total) pixels differ (\(share))\(sizes)")
            throw ExitCode(1)
        }
        print("islet snapshot: \(diff.differing) of \(diff.total) pixels differ (\(share)), within \(self.threshold)")
    }

    /// The two requests `--at` needs: a fork on a paused clock, and its deletion.
    struct Server {
        let base: String
        let token: String?

        func fork(_ source: String, at: String) async throws -> String {
            let body = SimulationRequests.createBody(
                id: nil, virtualClock: at, rate: 0, wallClock: false, demo: false, from: source, rev: nil)
            let reply = try await self.send("POST", "/v1/simulations", body: body)
            guard let id = SimulationRequests.id(reply) else {
                throw ValidationError("the server's reply names no simulation")
            }
            return id
        }

        func delete(_ id: String) async throws { _ = try await self.send("DELETE", "/v1/simulations/\(id)") }

        /// Reads the device in the simulation: exits 1 with the server's own words (`no simulation
        /// "x"`, `nothing at /devices/x`, a refused token) or why the server cannot be reached.
        func checkDevice(_ device: String, in simulation: String) async throws {
            guard SimulationRequests.isValidID(simulation) else {
                throw ValidationError("--simulation must be 1 to 64 of a-z, 0-9 and -, not \"\(simulation)\"")
            }
            let prefix = simulation == "default" ? "/v1" : "/v1/simulations/\(simulation)"
            _ = try await self.send("GET", "\(prefix)/state?path=\(queryEncoded("/devices/" + device))")
        }

        private func send(_ method: String, _ path: String, body: [UInt8] = []) async throws -> [UInt8] {
            let target = try StreamURL(self.base)
            var headers = [("Content-Type", "application/json")]
            if let token { headers.append(("Authorization", "bearer \(token)")) }
            let reply: HTTPClient.Reply
            do {
                reply = try await HTTPClient.request(
                    host: target.host, port: target.port, method: method, path: path, headers: headers, body: body)
            } catch {
                printError("islet snapshot: \(error)")
                throw ExitCode(1)
            }
            guard (200..<300).contains(reply.status) else {
                let message = SimulationRequests.errorMessage(reply.body)
                printError("islet snapshot: \(method) \(path): \(reply.status) \(message)")
                throw ExitCode(1)
            }
            return reply.body
        }
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        self.hasSuffix(suffix) ? String(self.dropLast(suffix.count)) : self
    }
}
