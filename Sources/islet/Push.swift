import ArgumentParser
import Foundation
import IsletClient
import IsletServer

/// `islet push`: sends an APNs-style payload file to a device token.
struct Push: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send an APNs-style Live Activity push (POST /3/device/<token>) from a JSON file.",
        discussion: """
            Prints the status and apns-id, and the reply body when there is one (APNs' {"reason"}).
            With --p8, --key-id and --team it signs a provider token (ES256 JWT) as a provider does, and
            reuses it for 50 minutes as APNs asks (a new token more often than every 20 minutes is 429
            TooManyProviderTokenUpdates): the token is kept, readable by you only, in
            $XDG_CACHE_HOME/islet/provider-tokens (default ~/.cache/islet/…). Else the provider token is
            the admin token.
            Environment: ISLET_URL, ISLET_ADMIN_TOKEN (sent as the provider token without --p8).
            Exit status: 0 when the push was accepted (200), else 1.
            """)

    @Option(help: "The server URL, http:// (ISLET_URL). Default: http://127.0.0.1:8080.")
    var url: String?

    @Option(help: "The device token: an activity's push token or an app's push-to-start token (hex).")
    var token: String

    @Option(help: "apns-topic, e.g. com.example.app.push-type.liveactivity.")
    var topic: String

    @Option(help: "apns-priority: 5 or 10.")
    var priority: Int = 10

    @Option(help: "apns-push-type.")
    var pushType = "liveactivity"

    @Option(parsing: .unconditional, help: "apns-expiration (Unix seconds).")
    var expiration: Int?

    @Option(help: "apns-collapse-id.")
    var collapseID: String?

    @Option(help: "apns-id (a UUID); the server generates one if absent.")
    var apnsID: String?

    @Option(help: "The provider token (ISLET_ADMIN_TOKEN), sent as Authorization: bearer.")
    var authToken: String?

    @Option(help: "Sign a provider token (ES256 JWT) with this private key file, Apple's AuthKey_<key id>.p8.")
    var p8: String?

    @Option(help: "The key id of --p8 (the token's kid).")
    var keyID: String?

    @Option(help: "The team id of --p8 (the token's iss).")
    var team: String?

    @Option(help: "Push into this simulation only (POST /v1/simulations/ID/3/device/…); default: the one holding the token.")
    var simulation: String?

    @Argument(help: "The payload file ({\"aps\": {…}}), or - for standard input.")
    var file: String

    func validate() throws {
        if let simulation = self.simulation, !SimulationRequests.isValidID(simulation) {
            throw ValidationError("--simulation must be 1 to 64 of a-z, 0-9 and -, not \"\(simulation)\"")
        }
        guard self.p8 != nil || self.keyID != nil || self.team != nil else { return }
        guard let keyID = self.keyID, let team = self.team, self.p8 != nil else {
            throw ValidationError("--p8, --key-id and --team go together")
        }
        guard self.authToken == nil else {
            throw ValidationError("--p8 signs the provider token: leave out --auth-token")
        }
        try APNs.check(keyID, "key id")
        try APNs.check(team, "team id")
    }

    /// `bearer <token>`: a JWT signed now with `--p8`, else the admin token, if any.
    private func authorization(_ environment: Environment) throws -> String? {
        guard let p8 = self.p8, let keyID = self.keyID, let team = self.team else {
            return (self.authToken ?? environment["ISLET_ADMIN_TOKEN"]).map { "bearer \($0)" }
        }
        do {
            let now = Int64(Date().timeIntervalSince1970)
            let pem = try readKey(p8)
            let cache = ProviderTokenCache(keyID: keyID, team: team, pem: pem, environment: environment)
            if let kept = cache?.token(at: now) { return "bearer " + kept }
            let token = try ProviderToken.signed(keyID: keyID, teamID: team, issuedAt: now, privateKeyPEM: pem)
            cache?.keep(token, issuedAt: now)
            return "bearer " + token
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("\(p8): \(error)")
        }
    }

    func run() async throws {
        let environment = Environment.current
        let target = try StreamURL(self.url ?? environment["ISLET_URL"] ?? "http://127.0.0.1:8080")
        let body: [UInt8]
        if self.file == "-" {
            body = [UInt8](FileHandle.standardInput.readDataToEndOfFile())
        } else {
            guard let data = FileManager.default.contents(atPath: self.file) else {
                throw ValidationError("cannot read \(self.file)")
            }
            body = [UInt8](data)
        }
        var headers = [
            ("apns-push-type", self.pushType), ("apns-topic", self.topic), ("apns-priority", String(self.priority)),
            ("Content-Type", "application/json"),
        ]
        if let expiration { headers.append(("apns-expiration", String(expiration))) }
        if let collapseID { headers.append(("apns-collapse-id", collapseID)) }
        if let apnsID { headers.append(("apns-id", apnsID)) }
        if let authorization = try self.authorization(environment) { headers.append(("Authorization", authorization)) }
        let prefix = self.simulation.map { "/v1/simulations/\($0)" } ?? ""
        let reply = try await HTTPClient.request(
            host: target.host, port: target.port, method: "POST", path: "\(prefix)/3/device/\(self.token)",
            headers: headers, body: body)
        print("\(reply.status) apns-id: \(reply.headers["apns-id"] ?? "-")")
        if !reply.body.isEmpty { print(String(decoding: reply.body, as: UTF8.self)) }
        if reply.status != 200 { throw ExitCode(1) }
    }
}

/// The provider token `islet push --p8` signed last for a key, kept between runs: a provider
/// reuses its token for up to an hour, and APNs refuses a new one within 20 minutes of the last
/// (`TooManyProviderTokenUpdates`), so a fresh token per push would allow one push per 20 minutes.
/// One file per team, key id and key (a hash of the PEM), mode 0600: `<iat> <token>`. Reused
/// while younger than 50 minutes, so a new one (then more than 20 minutes after the last) is
/// still well within APNs' hour. Any failure to read or write it only means signing anew.
struct ProviderTokenCache {
    static let reuseSeconds: Int64 = 50 * 60
    let path: String

    init?(keyID: String, team: String, pem: String, environment: Environment) {
        let base =
            environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].map { $0 + "/.cache" }
        guard let base else { return nil }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325  // FNV-1a, to tell two keys with one id apart
        for byte in pem.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        self.path = "\(base)/islet/provider-tokens/\(team).\(keyID).\(String(hash, radix: 16))"
    }

    /// The kept token, if it was issued at most `reuseSeconds` before `now` (and not after it).
    func token(at now: Int64) -> String? {
        guard let data = FileManager.default.contents(atPath: self.path) else { return nil }
        let parts = String(decoding: data, as: UTF8.self).split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let issuedAt = Int64(parts[0]), (0...Self.reuseSeconds).contains(now - issuedAt)
        else { return nil }
        return parts[1].trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func keep(_ token: String, issuedAt: Int64) {
        let directory = (self.path as NSString).deletingLastPathComponent
        let files = FileManager.default
        let privateDirectory: [FileAttributeKey: Any] = [.posixPermissions: 0o700]
        let privateFile: [FileAttributeKey: Any] = [.posixPermissions: 0o600]
        let partial = self.path + ".partial-\(getpid())"
        guard
            (try? files.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: privateDirectory)) != nil,
            files.createFile(atPath: partial, contents: Data("\(issuedAt) \(token)".utf8), attributes: privateFile)
        else { return }
        if rename(partial, self.path) != 0 { unlink(partial) }
    }
}
