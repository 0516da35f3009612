import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

/// APNs provider authentication over HTTP/1.1: keys registered through `/v1/apns/keys`, pushes
/// signed with real ES256 JWTs, on a wall clock the test sets.
@Suite("APNs provider authentication (live)")
struct LiveProviderAuthTests {
    static let start = Instant(secondsSinceEpoch: 1_795_766_400)
    static let update = LiveAPNsTests.update

    static func putKey(
        _ port: Int, keyID: String = ProviderKeyFixtures.keyID, body: JSONValue, simulation: String? = nil,
        headers: [(String, String)] = []
    ) throws -> TestHTTPResponse {
        try TestHTTP.request(
            port: port, "PUT", TestHTTP.route("/v1/apns/keys/\(keyID)", in: simulation),
            headers: [("Content-Type", "application/json")] + headers, body: body.encoded)
    }

    static func keyBody(team: String = ProviderKeyFixtures.teamID, publicKey: String = ProviderKeyFixtures.publicKey)
        -> JSONValue
    {
        ["teamId": .string(team), "publicKey": .string(publicKey)]
    }

    /// `authorization: bearer` with a token signed at `issuedAt`.
    static func jwt(
        _ issuedAt: Instant, keyID: String = ProviderKeyFixtures.keyID,
        privateKey: String = ProviderKeyFixtures.privateKey
    ) throws -> [(String, String)] {
        let token = try ProviderToken.signed(
            keyID: keyID, teamID: ProviderKeyFixtures.teamID, issuedAt: issuedAt.secondsSinceEpoch,
            privateKeyPEM: privateKey)
        return [("authorization", "bearer \(token)")]
    }

    static func revision(_ port: Int, simulation: String? = nil) throws -> Double? {
        try TestHTTP.state(port: port, path: "/clock", simulation: simulation).json()["rev"]?.numberValue
    }

    @Test("a simulation with a key takes only pushes signed by it, refusing the others with APNs' reasons")
    func signedPushes() async throws {
        let time = SettableTimeSource(now: Self.start)
        try await withRunningServer(timeSource: time) { server in
            let world = try LiveAPNsTests.world(server.port)
            #expect(try world.push(world.activityToken, Self.update).status == 200, "no key: open as before")
            let put = try Self.putKey(server.port, body: Self.keyBody())
            #expect(put.status == 200, "\(put.text)")
            #expect(try put.json()[pointer: "/result/keyId"] == "ABC123DEFG")

            let rev = try Self.revision(server.port)
            let other = ProviderKeyFixtures.otherPrivateKey
            let refusals: [([(String, String)], Int, String)] = [
                ([], 403, "MissingProviderToken"),
                ([("authorization", "bearer")], 403, "MissingProviderToken"),
                (try Self.jwt(Self.start, privateKey: other), 403, "InvalidProviderToken"),
                (try Self.jwt(Self.start, keyID: ProviderKeyFixtures.otherKeyID), 403, "InvalidProviderToken"),
                (try Self.jwt(Self.start.adding(seconds: 7200)), 403, "InvalidProviderToken"),
                (try Self.jwt(Self.start.adding(seconds: -7200)), 403, "ExpiredProviderToken"),
            ]
            for (headers, status, reason) in refusals {
                let reply = try world.push(world.activityToken, Self.update, extra: headers)
                #expect(reply.status == status, "\(reply.text)")
                #expect(try reply.json()["reason"] == .string(reason), "\(reply.text)")
                #expect(reply.headers["apns-id"] != nil)
            }
            #expect(try Self.revision(server.port) == rev, "refused pushes change nothing")

            let token = try Self.jwt(Self.start)
            #expect(try world.push(world.activityToken, Self.update, extra: token).status == 200)
            #expect(try world.push(world.activityToken, Self.update, extra: token).status == 200, "the same token")
            let newer = try Self.jwt(Self.start.adding(seconds: 30))
            let early = try world.push(world.activityToken, Self.update, extra: newer)
            #expect(early.status == 429, "\(early.text)")
            #expect(try early.json()["reason"] == "TooManyProviderTokenUpdates", "\(early.text)")
            time.advance(seconds: 1200)
            let renewed = try Self.jwt(Self.start.adding(seconds: 1200))
            #expect(try world.push(world.activityToken, Self.update, extra: renewed).status == 200)

            let deleted = try TestHTTP.request(port: server.port, "DELETE", "/v1/apns/keys/ABC123DEFG")
            #expect(deleted.status == 200, "\(deleted.text)")
            #expect(try world.push(world.activityToken, Self.update).status == 200, "no key left: open again")
        }
    }

    @Test("PUT /v1/apns/keys refuses what OpenSSL cannot use at its field; GET lists no key material")
    func keyRoutes() async throws {
        try await withRunningServer(timeSource: SettableTimeSource(now: Self.start)) { server in
            let port = server.port
            let rev = try Self.revision(port)
            let unreadable = "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"
            let extra: JSONValue = [
                "teamId": "DEF123GHIJ", "publicKey": .string(ProviderKeyFixtures.publicKey), "p8": "x",
            ]
            let refusals: [(String, JSONValue, Int, String?)] = [
                ("ABC123DEFG", Self.keyBody(publicKey: unreadable), 400, "/publicKey"),
                ("ABC123DEFG", Self.keyBody(publicKey: ProviderKeyFixtures.privateKey), 400, "/publicKey"),
                ("ABC123DEFG", Self.keyBody(publicKey: String(repeating: "A", count: 2000)), 400, "/publicKey"),
                ("ABC123DEFG", ["teamId": "DEF123GHIJ"], 400, "/publicKey"),
                ("ABC123DEFG", Self.keyBody(team: "DEF-123"), 400, "/teamId"),
                ("ABC123", Self.keyBody(), 400, "/keyId"),
                ("ABC123DEFG", extra, 400, "/p8"),
            ]
            for (keyID, body, status, field) in refusals {
                let reply = try Self.putKey(port, keyID: keyID, body: body)
                #expect(reply.status == status && reply.errorCode == "invalid_argument", "\(reply.text)")
                #expect(try reply.json()[pointer: "/error/field"]?.stringValue == field, "\(reply.text)")
            }
            #expect(try TestHTTP.request(port: port, "DELETE", "/v1/apns/keys/ABC123DEFG").status == 404)
            #expect(try Self.revision(port) == rev, "refused key commands change nothing")

            let crlf = ProviderKeyFixtures.publicKey.split(separator: "\n").joined(separator: "\r\n") + "\r\n"
            #expect(try Self.putKey(port, body: Self.keyBody(publicKey: crlf)).status == 200)
            let list = try TestHTTP.request(port: port, "/v1/apns/keys")
            #expect(list.status == 200)
            // `addedAt` is the simulation's instant (the test configuration's virtual clock).
            let now = try TestHTTP.state(port: port, path: "/clock/now").json()["value"]
            #expect(try list.json()["keys"] == [["keyId": "ABC123DEFG", "teamId": "DEF123GHIJ", "addedAt": now!]])
            #expect(!list.text.contains("BEGIN"), "no key material is listed: \(list.text)")
        }
    }

    @Test("with an admin token, keys need it, and a keyed simulation's ingress takes a JWT but not the admin token")
    func withAdminToken() async throws {
        var configuration = IsletConfiguration.testing()
        configuration.adminToken = "admin-token-0123456789"
        let time = SettableTimeSource(now: Self.start)
        try await withRunningServer(configuration, timeSource: time) { server in
            let admin = [("Authorization", "Bearer admin-token-0123456789")]
            let reply = try TestHTTP.commands(
                port: server.port,
                [Fixture.pauseClock, Fixture.device, Fixture.app, Fixture.request("a1", pushToken: true)],
                headers: admin)
            let token = try reply.json()[pointer: "/results/3/pushToken"]!.stringValue!
            let world = LiveAPNsTests.World(port: server.port, pushToStart: "", activityToken: token)
            #expect(try Self.putKey(server.port, body: Self.keyBody()).status == 401)
            #expect(try TestHTTP.request(port: server.port, "/v1/apns/keys").status == 401)
            #expect(try Self.putKey(server.port, body: Self.keyBody(), headers: admin).status == 200)
            let refused = try world.push(token, Self.update, extra: admin)
            #expect(refused.status == 403)
            #expect(try refused.json()["reason"] == "InvalidProviderToken")
            #expect(try world.push(token, Self.update, extra: try Self.jwt(Self.start)).status == 200)
        }
    }

    @Test("channel management and broadcasts into a simulation with a key take only its JWTs")
    func broadcasts() async throws {
        let time = SettableTimeSource(now: Self.start)
        try await withRunningServer(timeSource: time) { server in
            let world = try LiveBroadcastTests.world(server.port)
            let channel = try #require(try world.createChannel().headers["apns-channel-id"])
            #expect(try Self.putKey(server.port, body: Self.keyBody()).status == 200)
            let rev = try world.rev()
            let missing = try world.broadcast(channel)
            #expect(missing.status == 403, "\(missing.text)")
            #expect(try missing.json()["reason"] == "MissingProviderToken")
            let unsigned = try world.createChannel()
            #expect(unsigned.status == 403 && unsigned.headers["apns-request-id"] == LiveBroadcastTests.requestID)
            #expect(try world.rev() == rev, "refused requests change nothing")
            let jwt = try Self.jwt(Self.start)
            #expect(try world.broadcast(channel, extra: jwt).status == 200)
            let created = try TestHTTP.request(
                port: server.port, "POST", "/1/apps/coffee/channels", headers: jwt,
                body: Array(#"{"message-storage-policy":0,"push-type":"LiveActivity"}"#.utf8))
            #expect(created.status == 201, "\(created.text)")
        }
    }

    @Test("a fork keeps the keys, and each world checks its own")
    func forks() async throws {
        let time = SettableTimeSource(now: Self.start)
        try await withRunningServer(timeSource: time) { server in
            let world = try LiveAPNsTests.world(server.port)
            #expect(try Self.putKey(server.port, body: Self.keyBody()).status == 200)
            let created = try TestHTTP.createSimulation(
                port: server.port, ["id": "f", "from": ["simulation": "default"]])
            #expect(created.status == 201 || created.status == 200, "\(created.text)")
            let keys = try TestHTTP.request(port: server.port, "/v1/simulations/f/apns/keys").json()["keys"]
            #expect(keys?[pointer: "/0/keyId"] == "ABC123DEFG")

            func pushToFork(_ headers: [(String, String)]) throws -> TestHTTPResponse {
                try TestHTTP.request(
                    port: server.port, "POST", "/v1/simulations/f/3/device/\(world.activityToken)",
                    headers: [("apns-push-type", "liveactivity"), ("apns-topic", world.topic)] + headers,
                    body: Array(Self.update.utf8))
            }
            #expect(try pushToFork([]).status == 403)
            #expect(try pushToFork(try Self.jwt(Self.start)).status == 200)
            let deleted = try TestHTTP.request(port: server.port, "DELETE", "/v1/simulations/f/apns/keys/ABC123DEFG")
            #expect(deleted.status == 200, "\(deleted.text)")
            #expect(try pushToFork([]).status == 200, "the fork has no key left")
            #expect(try world.push(world.activityToken, Self.update).status == 403, "the source still has its key")
        }
    }
}
