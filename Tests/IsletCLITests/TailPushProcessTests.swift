import Foundation
import IsletCore
import IsletTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `islet tail` and `islet push` as processes against `islet serve`.
@Suite("islet tail and islet push as processes")
struct TailPushProcessTests {
    static let setUp: [JSONValue] = [
        ["type": "clock.set", "mode": "virtual", "now": "2026-11-22T08:00:00Z", "rate": 0],
        ["type": "app.upsert", "id": "coffee", "foreground": true],
        [
            "type": "activity.request", "id": "a1", "app": "coffee", "attributesType": "CoffeeDeliveryAttributes",
            "content": ["state": ["status": "received"]], "pushType": "token",
        ],
    ]

    @Test("tail prints hello, the snapshot and each patch as one JSON line, resumes with --since, and stops at --limit")
    func tail() throws {
        let server = try IsletProcess(
            arguments: ["serve", "--port", "0", "--admin-token", "tail-admin-token-0123"] + TestServer.serveArguments)
        let port = try server.waitForListening()
        defer { server.send(signal: SIGTERM) }
        let auth = [("Authorization", "Bearer tail-admin-token-0123")]
        _ = try TestHTTP.commands(port: port, Self.setUp, headers: auth)
        let tail = try IsletProcess(
            arguments: ["tail", "--url", "ws://127.0.0.1:\(port)", "--path", "/activities/a1/content", "--limit", "3"],
            environment: ["ISLET_TOKEN": "tail-admin-token-0123"])
        let hello = try JSONParser().parse(try #require(try tail.readLine()))
        #expect(hello["type"] == "hello")
        let snapshot = try JSONParser().parse(try #require(try tail.readLine()))
        #expect(snapshot["type"] == "snapshot")
        #expect(snapshot["value"]?["state"]?["status"] == "received")
        let update: JSONValue = ["type": "activity.update", "id": "a1", "content": ["state": ["status": "brewing"]]]
        _ = try TestHTTP.commands(port: port, [update], headers: auth)
        let patch = try JSONParser().parse(try #require(try tail.readLine()))
        #expect(patch["type"] == "patch")
        #expect(patch["rev"] == 2)
        #expect(try tail.waitForExit() == 0)

        let resumed = try IsletProcess(
            arguments: [
                "tail", "--url", "http://127.0.0.1:\(port)/v1/stream", "--path", "/activities/a1/content",
                "--since", "1", "--limit", "3", "--token", "tail-admin-token-0123",
            ])
        #expect(try JSONParser().parse(try #require(try resumed.readLine()))["type"] == "hello")
        #expect(try JSONParser().parse(try #require(try resumed.readLine()))["type"] == "subscribed")
        let missed = try JSONParser().parse(try #require(try resumed.readLine()))
        #expect(missed["rev"] == 2)
        #expect(missed["sub"] == "tail-1")
        #expect(try resumed.waitForExit() == 0)
    }

    @Test("tail --limit prints exactly that many lines when several messages arrive together; a tail whose every subscription is refused exits 1 after printing the error")
    func tailLimitAndRefusal() throws {
        let server = try IsletProcess(arguments: ["serve", "--port", "0"] + TestServer.serveArguments)
        let port = try server.waitForListening()
        defer { server.send(signal: SIGTERM) }
        _ = try TestHTTP.commands(port: port, Self.setUp)
        // The three snapshots answer three subscriptions sent together: they arrive together.
        for _ in 0..<3 {
            let tail = try IsletProcess(arguments: [
                "tail", "--url", "ws://127.0.0.1:\(port)", "--path", "/clock", "--path", "/config", "--path", "/relevance",
                "--limit", "2",
            ])
            var lines: [String] = []
            while let line = try tail.readLine() { lines.append(line) }
            #expect(lines.count == 2, "\(lines)")
            #expect(try tail.waitForExit() == 0)
        }
        let unknown = try IsletProcess(arguments: [
            "tail", "--url", "ws://127.0.0.1:\(port)", "--simulation", "nosuch", "--since", "3",
        ])
        #expect(try unknown.waitForExit() == 1)
        #expect(unknown.standardError().contains(#"404 not_found: no simulation "nosuch""#), "\(unknown.standardError())")
        for arguments in [["--path", "no-slash"], ["--simulation", "nosuch"]] {
            let tail = try IsletProcess(arguments: ["tail", "--url", "ws://127.0.0.1:\(port)"] + arguments)
            #expect(try JSONParser().parse(try #require(try tail.readLine()))["type"] == "hello")
            let refusal = try JSONParser().parse(try #require(try tail.readLine()))
            #expect(refusal["type"] == "error" && refusal["id"] == "tail-1", "\(refusal)")
            #expect(try tail.waitForExit() == 1, "\(arguments)")
            #expect(tail.standardError().contains("refused every subscription"))
        }
    }

    @Test("tail --limit below 1 is a usage error (exit 64): it would print the hello and stop")
    func tailLimitBelowOne() throws {
        for limit in ["0", "-3"] {
            let run = try runIslet(["tail", "--url", "ws://127.0.0.1:9", "--limit=\(limit)"])
            #expect(run.status == 64, "\(run.errors)")
            #expect(run.errors.contains("--limit must be at least 1, not \(limit)"), "\(run.errors)")
        }
    }

    @Test("push sends a payload file as an APNs-style push and prints the status and apns-id")
    func push() throws {
        let server = try IsletProcess(arguments: ["serve", "--port", "0"] + TestServer.serveArguments)
        let port = try server.waitForListening()
        defer { server.send(signal: SIGTERM) }
        let results = try TestHTTP.commands(port: port, Self.setUp).json()["results"]!
        let token = try #require(results.arrayValue?[2]["pushToken"]?.stringValue)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("islet-push-\(getpid()).json").path
        defer { unlink(file) }
        let payload = #"{"aps":{"timestamp":1795766500,"event":"update","content-state":{"status":"onItsWay"}}}"#
        #expect(FileManager.default.createFile(atPath: file, contents: Data(payload.utf8)))
        let push = try IsletProcess(arguments: [
            "push", "--url", "http://127.0.0.1:\(port)", "--token", token, "--topic", "coffee.push-type.liveactivity",
            "--apns-id", "eabeae54-14a8-11e5-b60b-1697f925ec7b", file,
        ])
        #expect(try push.readLine() == "200 apns-id: eabeae54-14a8-11e5-b60b-1697f925ec7b")
        #expect(try push.waitForExit() == 0)
        let status = try TestHTTP.state(port: port, path: "/activities/a1/content/state/status").json()["value"]
        #expect(status == "onItsWay")
        let refused = try IsletProcess(arguments: [
            "push", "--url", "http://127.0.0.1:\(port)", "--token", token, "--topic", "other.push-type.liveactivity",
            file,
        ])
        #expect(try refused.readLine()?.hasPrefix("400 apns-id: ") == true)
        #expect(try refused.readLine() == #"{"reason":"DeviceTokenNotForTopic"}"#)
        #expect(try refused.waitForExit() == 1)
        // A fork holds the same token: --simulation pushes into it, and only it.
        #expect(try TestHTTP.createSimulation(port: port, ["id": "later", "from": ["simulation": "default"]]).status == 201)
        let arrived = #"{"aps":{"timestamp":1795766600,"event":"update","content-state":{"status":"arrived"}}}"#
        #expect(FileManager.default.createFile(atPath: file, contents: Data(arrived.utf8)))
        let intoFork = try IsletProcess(arguments: [
            "push", "--url", "http://127.0.0.1:\(port)", "--token", token, "--topic", "coffee.push-type.liveactivity",
            "--simulation", "later", file,
        ])
        #expect(try intoFork.readLine()?.hasPrefix("200 apns-id: ") == true)
        #expect(try intoFork.waitForExit() == 0)
        let path = "/activities/a1/content/state/status"
        #expect(try TestHTTP.state(port: port, path: path, simulation: "later").json()["value"] == "arrived")
        #expect(try TestHTTP.state(port: port, path: path).json()["value"] == "onItsWay")
        let badName = try IsletProcess(arguments: [
            "push", "--token", token, "--topic", "coffee.push-type.liveactivity", "--simulation", "../x", file,
        ])
        #expect(try badName.waitForExit() == 64)
    }
}
