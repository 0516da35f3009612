import ArgumentParser
import Foundation
import IsletServer

/// `islet apns`: APNs provider authentication of a running server.
struct APNs: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns",
        abstract: "APNs provider authentication: the keys pushes must be signed with.",
        subcommands: [Key.self])

    /// The server, token and simulation every key subcommand takes.
    struct Connection: ParsableArguments {
        @OptionGroup var server: Sim.Connection

        @Option(help: "The simulation whose keys these are (default: the default simulation).")
        var simulation: String?

        func validate() throws {
            if let simulation { try Sim.check(simulation) }
        }

        /// Sends one request about the keys (or key `keyID`); returns the body of a 2xx reply.
        func send(_ method: String, keyID: String? = nil, body: [UInt8] = []) async throws -> [UInt8] {
            try await self.server.send(
                method, ProviderKeyRequests.path(keyID: keyID, simulation: self.simulation), body: body,
                command: "islet apns key")
        }
    }

    /// Refuses a key or team id that is not Apple's shape before it goes into a URL or a body.
    static func check(_ id: String, _ what: String) throws {
        guard ProviderKeyRequests.isValidID(id) else {
            throw ValidationError("\(id) is not a \(what) (10 ASCII letters and digits, e.g. ABC123DEFG)")
        }
    }

    struct Key: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "key",
            abstract: "Register, list and delete APNs provider keys.",
            discussion: """
                A simulation that holds any key accepts a push only with authorization: bearer <JWT> signed by one \
                of them (ES256, as APNs); one that holds none keeps the admin token as provider token.
                Environment: ISLET_URL, ISLET_ADMIN_TOKEN (sent as Authorization: bearer).
                Exit status: 0 on success; 1 when the server refuses (its error is printed on standard error).
                """,
            subcommands: [Add.self, List.self, Delete.self])
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a key from its .p8: only its public key is sent; the private key stays here.")

        @Option(help: "The team id (10 letters and digits): the tokens' iss.")
        var team: String

        @Option(help: "The key id (10 letters and digits): the tokens' kid.")
        var keyID: String

        @Option(help: "The private key file, Apple's AuthKey_<key id>.p8.")
        var p8: String

        @OptionGroup var connection: Connection

        func validate() throws {
            try APNs.check(self.team, "team id")
            try APNs.check(self.keyID, "key id")
        }

        func run() async throws {
            let body: [UInt8]
            do {
                body = try ProviderKeyRequests.putBody(teamID: self.team, privateKeyPEM: try readKey(self.p8))
            } catch let error as ValidationError {
                throw error
            } catch {
                throw ValidationError("\(self.p8): \(error)")
            }
            let reply = try await self.connection.send("PUT", keyID: self.keyID, body: body)
            print(String(decoding: reply, as: UTF8.self))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the keys as a table (no key material).")

        @Flag(help: "Print the server's JSON instead of a table.")
        var json = false

        @OptionGroup var connection: Connection

        func run() async throws {
            let reply = try await self.connection.send("GET")
            print(self.json ? String(decoding: reply, as: UTF8.self) : try ProviderKeyRequests.table(reply))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a key; its tokens are refused from now on.")

        @Argument(help: "The key id.")
        var keyID: String

        @OptionGroup var connection: Connection

        func validate() throws { try APNs.check(self.keyID, "key id") }

        func run() async throws {
            _ = try await self.connection.send("DELETE", keyID: self.keyID)
            print("deleted \(self.keyID)")
        }
    }
}

/// The text of a key file.
/// - Throws: `ValidationError` when it cannot be read.
func readKey(_ path: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
    return String(decoding: data, as: UTF8.self)
}
