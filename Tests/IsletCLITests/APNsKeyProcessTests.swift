import Foundation
import IsletCore
import IsletTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `islet apns key` and `islet push --p8` as processes against `islet serve`.
@Suite("islet apns key and islet push --p8 as processes")
struct APNsKeyProcessTests {
    @Test("key add sends only the public key; push --p8 signs a token the server accepts; list and delete")
    func keys() throws {
        let server = try IsletProcess(arguments: ["serve", "--port", "0"] + TestServer.serveArguments)
        let port = try server.waitForListening()
        defer { server.send(signal: SIGTERM) }
        let results = try TestHTTP.commands(port: port, TailPushProcessTests.setUp).json()["results"]!
        let token = try #require(results.arrayValue?[2]["pushToken"]?.stringValue)
        try withTemporaryDirectory { directory in
            let p8 = directory.file("AuthKey_ABC123DEFG.p8")
            let payload = directory.file("update.json")
            #expect(FileManager.default.createFile(atPath: p8, contents: Data(ProviderKeyFixtures.privateKey.utf8)))
            let update = #"{"aps":{"timestamp":1795766500,"event":"update","content-state":{"status":"onItsWay"}}}"#
            #expect(FileManager.default.createFile(atPath: payload, contents: Data(update.utf8)))
            let url = "http://127.0.0.1:\(port)"
            let signing = ["--p8", p8, "--key-id", "ABC123DEFG", "--team", "DEF123GHIJ"]
            let push = ["push", "--url", url, "--token", token, "--topic", "coffee.push-type.liveactivity"]

            let add = try IsletProcess(arguments: ["apns", "key", "add", "--url", url] + signing)
            let added = try JSONParser().parse(try #require(try add.readLine()))
            #expect(added["result"]?["keyId"] == "ABC123DEFG" && added["result"]?["teamId"] == "DEF123GHIJ")
            #expect(try add.waitForExit() == 0)

            let unsigned = try IsletProcess(arguments: push + [payload])
            #expect(try unsigned.readLine()?.hasPrefix("403 apns-id: ") == true)
            #expect(try unsigned.readLine() == #"{"reason":"MissingProviderToken"}"#)
            #expect(try unsigned.waitForExit() == 1)
            // The signed token is kept (0600) and reused by the next push, as APNs asks: a new one
            // within 20 minutes would be 429 TooManyProviderTokenUpdates. A kept token older than
            // 50 minutes is signed anew.
            let cache = ["XDG_CACHE_HOME": directory.file("cache")]
            let tokens = directory.file("cache/islet/provider-tokens")
            try FileManager.default.createDirectory(atPath: tokens, withIntermediateDirectories: true)
            let stale = "\(Int(Date().timeIntervalSince1970) - 3600) not-a-token"
            let name = "DEF123GHIJ.ABC123DEFG.\(fnv1a(ProviderKeyFixtures.privateKey))"
            try stale.write(toFile: tokens + "/" + name, atomically: false, encoding: .utf8)
            var kept: [String] = []
            for _ in 0..<3 {
                let signed = try IsletProcess(arguments: push + signing + [payload], environment: cache)
                #expect(try signed.readLine()?.hasPrefix("200 apns-id: ") == true, "\(signed.standardError())")
                #expect(try signed.waitForExit() == 0)
                let files = try FileManager.default.contentsOfDirectory(atPath: tokens)
                #expect(files.count == 1)
                let file = tokens + "/" + (files.first ?? "")
                kept.append(try String(contentsOfFile: file, encoding: .utf8))
                let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
                #expect(mode == 0o600)
            }
            #expect(kept[0] != stale && kept[1] == kept[0] && kept[2] == kept[0], "signed once, then reused")
            let status = try TestHTTP.state(port: port, path: "/activities/a1/content/state/status").json()["value"]
            #expect(status == "onItsWay")

            let list = try IsletProcess(arguments: ["apns", "key", "list", "--url", url])
            #expect(try list.readLine() == "KEY ID      TEAM ID     ADDED")
            #expect(try list.readLine()?.hasPrefix("ABC123DEFG  DEF123GHIJ  20") == true)
            #expect(try list.waitForExit() == 0)
            let delete = try IsletProcess(arguments: ["apns", "key", "delete", "ABC123DEFG", "--url", url])
            #expect(try delete.readLine() == "deleted ABC123DEFG")
            #expect(try delete.waitForExit() == 0)
            let missing = try IsletProcess(arguments: ["apns", "key", "delete", "ABC123DEFG", "--url", url])
            #expect(try missing.waitForExit() == 1)
            #expect(missing.standardError().contains("islet apns key: 404 not_found"))
        }
    }

    @Test("key add --simulation registers in that simulation; a bad id or key file is refused before any request")
    func simulationAndRefusals() throws {
        let server = try IsletProcess(arguments: ["serve", "--port", "0"] + TestServer.serveArguments)
        let port = try server.waitForListening()
        defer { server.send(signal: SIGTERM) }
        #expect(try TestHTTP.createSimulation(port: port, ["id": "w1"]).status < 300)
        try withTemporaryDirectory { directory in
            let p8 = directory.file("AuthKey.p8")
            #expect(FileManager.default.createFile(atPath: p8, contents: Data(ProviderKeyFixtures.privateKey.utf8)))
            let url = "http://127.0.0.1:\(port)"
            let add = try IsletProcess(arguments: [
                "apns", "key", "add", "--team", "DEF123GHIJ", "--key-id", "ABC123DEFG", "--p8", p8, "--url", url,
                "--simulation", "w1",
            ])
            #expect(try add.waitForExit() == 0)
            let keys = try TestHTTP.request(port: port, "/v1/simulations/w1/apns/keys").json()["keys"]
            #expect(keys?.arrayValue?.first?["keyId"] == "ABC123DEFG")
            #expect(try TestHTTP.request(port: port, "/v1/apns/keys").json()["keys"] == [])

            let badTeam = try IsletProcess(arguments: [
                "apns", "key", "add", "--team", "DEF-123", "--key-id", "ABC123DEFG", "--p8", p8, "--url", url,
            ])
            #expect(try badTeam.waitForExit() != 0)
            #expect(badTeam.standardError().contains("not a team id"))
            let publicOnly = directory.file("public.pem")
            let publicKey = Data(ProviderKeyFixtures.publicKey.utf8)
            #expect(FileManager.default.createFile(atPath: publicOnly, contents: publicKey))
            let notAKey = try IsletProcess(arguments: [
                "apns", "key", "add", "--team", "DEF123GHIJ", "--key-id", "ABC123DEFG", "--p8", publicOnly, "--url",
                url,
            ])
            #expect(try notAKey.waitForExit() != 0)
            #expect(notAKey.standardError().contains("unreadable_key"))
        }
    }
}

/// The cache's name for a key (`ProviderTokenCache`): FNV-1a of the PEM, in hexadecimal.
private func fnv1a(_ text: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return String(hash, radix: 16)
}
