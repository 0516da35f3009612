import IsletCore
import IsletTestSupport
import Testing

/// `apns.keyPut` and `apns.keyDelete`: the APNs provider keys a simulation checks pushes with.
@Suite struct ProviderKeyTests {
    static let keyID = ProviderKeyFixtures.keyID
    static let teamID = ProviderKeyFixtures.teamID

    static func put(
        _ keyID: String = keyID, team: String = teamID, publicKey: String = ProviderKeyFixtures.publicKey
    ) -> JSONValue {
        ["type": "apns.keyPut", "keyId": .string(keyID), "teamId": .string(team), "publicKey": .string(publicKey)]
    }

    @Test("a key is registered, listed, replaced and deleted, and the document never shows it")
    func lifecycle() throws {
        var sim = Simulation()
        try sim.setUp()
        #expect(!sim.engine.hasProviderKeys)
        let before = sim.engine.documentBytes
        let put = try sim.run(Self.put())
        #expect(put.ops.map(\.path) == ["/clock/now"], "every revision names its instant; nothing else changes")
        #expect(sim.engine.documentBytes == before)
        #expect(put.results[0] == ["keyId": "ABC123DEFG", "teamId": "DEF123GHIJ", "addedAt": "2026-11-22T08:00:00Z"])
        #expect(sim.engine.hasProviderKeys)
        #expect(sim.engine.providerKey(Self.keyID)?.publicKey == ProviderKeyFixtures.publicKey)

        try sim.advance(seconds: 60)
        try sim.run(Self.put())
        #expect(sim.engine.providerKey(Self.keyID)?.addedAt == Simulation.start, "the same key again changes nothing")
        try sim.run(Self.put(team: "ZZZ999ZZZZ", publicKey: ProviderKeyFixtures.otherPublicKey))
        let replaced = try #require(sim.engine.providerKey(Self.keyID))
        #expect(replaced.teamID == "ZZZ999ZZZZ" && replaced.addedAt == Simulation.start.adding(seconds: 60))

        try sim.run(Self.put(ProviderKeyFixtures.otherKeyID))
        #expect(sim.engine.providerKeys.map(\.keyID) == ["ABC123DEFG", "XYZ987WXYZ"])
        try sim.run(["type": "apns.keyDelete", "keyId": .string(Self.keyID)])
        try sim.run(["type": "apns.keyDelete", "keyId": .string(ProviderKeyFixtures.otherKeyID)])
        #expect(!sim.engine.hasProviderKeys)
        let missing = #expect(throws: APIError.self) {
            try sim.run(["type": "apns.keyDelete", "keyId": .string(Self.keyID)])
        }
        #expect(missing?.code == .notFound && missing?.field == "/commands/0/keyId")
    }

    @Test(
        "malformed keys are refused at their field and change nothing",
        arguments: [
            (put("ABC123DEF"), "/commands/0/keyId"),
            (put("ABC123DEF-"), "/commands/0/keyId"),
            (put("ABC123DEFÉ"), "/commands/0/keyId"),
            (put(team: "DEF123GHIJK"), "/commands/0/teamId"),
            (put(publicKey: ProviderKeyFixtures.privateKey), "/commands/0/publicKey"),
            (put(publicKey: "-----BEGIN PUBLIC KEY-----\nMFkw\n"), "/commands/0/publicKey"),
            (put(publicKey: "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n"), "/commands/0/publicKey"),
            (put(publicKey: "-----BEGIN PUBLIC KEY-----\nMF kw\n-----END PUBLIC KEY-----"), "/commands/0/publicKey"),
            (
                put(publicKey: ProviderKeyFixtures.publicKey + String(repeating: "\n", count: 1000)),
                "/commands/0/publicKey"
            ),
            (["type": "apns.keyPut", "keyId": "ABC123DEFG", "teamId": "DEF123GHIJ"], "/commands/0/publicKey"),
            (
                ["type": "apns.keyPut", "keyId": "ABC123DEFG", "teamId": "DEF123GHIJ", "publicKey": "x", "p8": "x"],
                "/commands/0/p8"
            ),
            (["type": "apns.keyDelete"], "/commands/0/keyId"),
        ] as [(JSONValue, String)])
    func refusals(command: JSONValue, field: String) throws {
        var sim = Simulation()
        let before = sim.engine.snapshotBytes
        let error = #expect(throws: APIError.self) { try sim.run(command) }
        #expect(error?.code == .invalidArgument && error?.field?.description == field, "\(error?.message ?? "")")
        #expect(sim.engine.snapshotBytes == before)
    }

    @Test("CRLF line ends and a PEM without its final line end have the shape of a public key")
    func pemShapes() throws {
        var sim = Simulation()
        let crlf = ProviderKeyFixtures.publicKey.split(separator: "\n").joined(separator: "\r\n") + "\r\n"
        try sim.run(Self.put(publicKey: crlf))
        try sim.run(
            Self.put(ProviderKeyFixtures.otherKeyID, publicKey: String(ProviderKeyFixtures.publicKey.dropLast())))
        #expect(sim.engine.providerKeys.count == 2)
    }

    @Test("a simulation holds at most EngineLimits.providerKeys keys")
    func limit() throws {
        var sim = Simulation()
        let keys = (0..<EngineLimits.providerKeys).map { index in
            Self.put("KEY" + String(1_000_000 + index))
        }
        try sim.run(batch: keys)
        let error = #expect(throws: APIError.self) { try sim.run(Self.put("KEYOVERMAX")) }
        #expect(error?.code == .limitExceeded && error?.field == "/commands/0/keyId")
        try sim.run(Self.put("KEY1000000", team: "ZZZ999ZZZZ"))
    }

    @Test("keys survive a snapshot and a fork; without keys the snapshot has no providerKeys member")
    func snapshotAndFork() throws {
        var sim = Simulation()
        try sim.setUp()
        #expect(sim.engine.snapshot()["providerKeys"] == nil)
        try sim.run(Self.put(), Self.put(ProviderKeyFixtures.otherKeyID, publicKey: ProviderKeyFixtures.otherPublicKey))
        let bytes = sim.engine.snapshotBytes
        let restored = try Engine(snapshot: try JSONParser().parse(bytes), renderer: TestRenderer())
        #expect(restored.providerKeys == sim.engine.providerKeys)
        #expect(restored.snapshotBytes == bytes)
        #expect(restored.documentBytes == sim.engine.documentBytes)
        let fork = sim.engine.forked(clock: nil, atWall: sim.wall, tokenSalt: 7)
        #expect(fork.providerKeys == sim.engine.providerKeys)

        try sim.run(["type": "apns.keyDelete", "keyId": .string(Self.keyID)])
        try sim.run(["type": "apns.keyDelete", "keyId": .string(ProviderKeyFixtures.otherKeyID)])
        #expect(sim.engine.snapshot()["providerKeys"] == nil)
    }
}
