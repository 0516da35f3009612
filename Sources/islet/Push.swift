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
            Environment: ISLET_URL, ISLET_ADMIN_TOKEN (sent as the provider token).
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

    @Option(help: "apns-expiration (Unix seconds).")
    var expiration: Int?

    @Option(help: "apns-collapse-id.")
    var collapseID: String?

    @Option(help: "apns-id (a UUID); the server generates one if absent.")
    var apnsID: String?

    @Option(help: "The provider token (ISLET_ADMIN_TOKEN), sent as Authorization: bearer.")
    var authToken: String?

    @Argument(help: "The payload file ({\"aps\": {…}}), or - for standard input.")
    var file: String

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
        if let auth = self.authToken ?? environment["ISLET_ADMIN_TOKEN"] {
            headers.append(("Authorization", "bearer \(auth)"))
        }
        let reply = try await HTTPClient.request(
            host: target.host, port: target.port, method: "POST", path: "/3/device/\(self.token)", headers: headers,
            body: body)
        print("\(reply.status) apns-id: \(reply.headers["apns-id"] ?? "-")")
        if !reply.body.isEmpty { print(String(decoding: reply.body, as: UTF8.self)) }
        if reply.status != 200 { throw ExitCode(1) }
    }
}
