import IsletCore
import Testing

/// Commands are validated field by field; a batch applies whole or not at all.
@Suite struct CommandValidationTests {
    @Test(
        "invalid commands name the offending field as a JSON Pointer under /commands/<i>",
        arguments: [
            (#"{"type":"device.upsert"}"#, "/commands/1/id"),
            (#"{"type":"device.upsert","id":"bad id"}"#, "/commands/1/id"),
            (#"{"type":"device.upsert","id":"d2","model":"iphone-3g"}"#, "/commands/1/model"),
            (#"{"type":"device.upsert","id":"d2","locked":"yes"}"#, "/commands/1/locked"),
            (#"{"type":"device.upsert","id":"d2","colour":"red"}"#, "/commands/1/colour"),
            (
                #"{"type":"activity.request","app":"coffee","attributesType":"T","content":{"state":3}}"#,
                "/commands/1/content/state"
            ),
            (#"{"type":"activity.request","app":"coffee","attributesType":"T"}"#, "/commands/1/content"),
            (
                #"{"type":"activity.request","app":"coffee","attributesType":"T","content":{"state":{},"staleDate":"soon"}}"#,
                "/commands/1/content/staleDate"
            ),
            (
                #"{"type":"activity.request","app":"nope","attributesType":"T","content":{"state":{}}}"#,
                "/commands/1/app"
            ),
            (#"{"type":"activity.update","id":"ghost","content":{"state":{}}}"#, "/commands/1/id"),
            (
                #"{"type":"activity.update","id":"a1","content":{"state":{}},"delivery":{"priority":7}}"#,
                "/commands/1/delivery/priority"
            ),
            (
                #"{"type":"activity.update","id":"a1","content":{"state":{}},"alert":{"title":5}}"#,
                "/commands/1/alert/title"
            ),
            (#"{"type":"activity.end","id":"a1","dismissalPolicy":"later"}"#, "/commands/1/dismissalPolicy"),
            (
                #"{"type":"activity.end","id":"a1","dismissalPolicy":{"after":"x"}}"#,
                "/commands/1/dismissalPolicy/after"
            ),
            (#"{"type":"config.set","values":{"noSuchNumber":1}}"#, "/commands/1/values/noSuchNumber"),
            (#"{"type":"config.set","values":{"maxActivitiesPerApp":2.5}}"#, "/commands/1/values/maxActivitiesPerApp"),
            (#"{"type":"clock.advance"}"#, "/commands/1/seconds"),
            (#"{"type":"clock.advance","seconds":-1}"#, "/commands/1/seconds"),
            (
                #"{"type":"template.put","app":"coffee","target":"activity:T","slot":"hero","html":""}"#,
                "/commands/1/slot"
            ),
            (#"{"type":"template.put","app":"coffee","target":"T","slot":"minimal","html":""}"#, "/commands/1/target"),
            (
                #"{"type":"template.put","app":"coffee","target":"activity:T","slot":"minimal","html":"{{{raw}}}"}"#,
                "/commands/1/html"
            ),
            (#"{"type":"widget.upsert","id":"w"}"#, "/commands/1/app"),
            (
                #"{"type":"widget.upsert","id":"w","app":"coffee","kind":"k","family":"systemExtraLarge"}"#,
                "/commands/1/family"
            ),
            (
                #"{"type":"widget.setTimeline","id":"w","entries":[{"date":"2026-11-22T09:00:00Z"}]}"#,
                "/commands/1/entries/0/content"
            ),
            (#"{"type":"stack.upsert","id":"s","family":"accessoryCircular"}"#, "/commands/1/family"),
            (#"{"type":"relevance.setWeights","weights":{"luck":1}}"#, "/commands/1/weights/luck"),
            (
                #"{"type":"shortcut.upsert","app":"coffee","id":"x","phrases":["Order"],"intent":{"type":"action"}}"#,
                "/commands/1/phrases/0"
            ),
            (#"{"type":"teleport"}"#, "/commands/1/type"),
            (#"{"id":"x"}"#, "/commands/1/type"),
            (#""not an object""#, "/commands/1"),
        ])
    func fieldPointers(text: String, field: String) throws {
        let command = try JSONParser().parse(text)
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1")
        let before = sim.engine.documentBytes
        let error = #expect(throws: APIError.self) {
            try sim.run(["type": "device.upsert", "id": "d9"], command)
        }
        #expect(error?.field?.description == field, "\(error?.message ?? "")")
        #expect(sim.engine.documentBytes == before, "a rejected batch changes nothing")
        #expect(sim.engine.value(at: "/devices/d9") == nil)
    }

    @Test("a field name only canonically equivalent to a known one (K and KELVIN SIGN) is an unknown field")
    func canonicallyEquivalentFieldName() throws {
        var sim = Simulation()
        try sim.setUp()
        let command = try JSONParser().parse(
            #"{"type":"apns.keyPut","keyId":"ABC123DEFG","teamId":"DEF123GHIJ","public\u212Aey":"x"}"#)
        let error = #expect(throws: APIError.self) { try sim.run(command) }
        #expect(error?.message.hasPrefix("unknown field") == true, "\(error?.message ?? "")")
        #expect(error.map { Array(($0.field?.description ?? "").utf8) } == Array("/commands/0/public\u{212A}ey".utf8))
    }

    @Test("a batch is atomic: one revision for all commands, nothing when one fails, including deadlines it passed")
    func atomicBatch() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1", extra: ["content": ["state": [:], "staleDate": sim.date(after: 10)]])
        let rev = sim.engine.rev
        let snapshot = sim.engine.snapshotBytes
        #expect(throws: APIError.self) {
            try sim.run(
                ["type": "clock.advance", "seconds": 60],
                ["type": "activity.update", "id": "a1", "content": ["state": ["x": 1]]],
                ["type": "activity.update", "id": "missing", "content": ["state": [:]]])
        }
        #expect(sim.engine.rev == rev)
        #expect(sim.engine.snapshotBytes == snapshot)
        #expect(sim.state(of: "a1") == "active")
        let revision = try sim.run(
            ["type": "clock.advance", "seconds": 60],
            ["type": "activity.update", "id": "a1", "content": ["state": ["x": 1]]])
        #expect(revision.rev == rev + 1)
        #expect(
            revision.results == [["now": "2026-11-22T08:01:00Z", "transitions": 1], ["applied": true, "reason": nil]])
        #expect(sim.state(of: "a1") == "active", "the update after the stale date makes it active again")
    }

    @Test("a lone activity.update runs on the engine itself, and a refused one changes nothing: not the document, the clock's now, nor a deadline due before it")
    func loneUpdateInPlace() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("a1", extra: ["content": ["state": [:], "staleDate": sim.date(after: 10)]])
        try sim.run(["type": "clock.set", "mode": "virtual", "rate": 1])
        let rev = sim.engine.rev
        let snapshot = sim.engine.snapshotBytes
        let document = sim.engine.documentBytes
        let big: JSONValue = .string(String(repeating: "x", count: 5000))
        let refused: [JSONValue] = [
            ["type": "activity.update", "id": "missing", "content": ["state": [:]]],
            ["type": "activity.update", "id": "a1", "content": ["state": ["p": big]]],
        ]
        // 5 s later no deadline is due (the update runs in place); 60 s later the stale date is.
        for seconds in [5, 60] {
            sim.wall = Simulation.start.adding(seconds: Double(seconds))
            for command in refused {
                #expect(throws: APIError.self) { try sim.run(command) }
                #expect(sim.engine.rev == rev)
                #expect(sim.engine.snapshotBytes == snapshot, "after \(seconds) s: \(command)")
                #expect(sim.engine.documentBytes == document)
                #expect(sim.state(of: "a1") == "active")
            }
        }
        sim.wall = Simulation.start.adding(seconds: 5)
        let revision = try sim.run(["type": "activity.update", "id": "a1", "content": ["state": ["x": 1]]])
        #expect(revision.rev == rev + 1)
        #expect(sim.get("/activities/a1/content/state/x") == 1)
        #expect(sim.get("/clock/now") == .string(Simulation.start.adding(seconds: 5).rfc3339))
    }

    @Test("an empty batch is refused")
    func emptyBatch() throws {
        var sim = Simulation()
        let error = #expect(throws: APIError.self) { try sim.run(batch: []) }
        #expect(error?.field == "/commands")
        #expect(sim.engine.rev == 0)
    }

    @Test("generated activity ids are deterministic and skip ids in use")
    func generatedIDs() throws {
        var sim = Simulation()
        try sim.setUp()
        try sim.request("activity-2")
        let first = try sim.run([
            "type": "activity.request", "app": "coffee", "attributesType": "T", "content": ["state": [:]],
        ])
        let second = try sim.run([
            "type": "activity.request", "app": "coffee", "attributesType": "T", "content": ["state": [:]],
        ])
        #expect(first.results[0]["id"] == "activity-1")
        #expect(second.results[0]["id"] == "activity-3")
        let duplicate = #expect(throws: APIError.self) { try sim.request("activity-1") }
        #expect(duplicate?.code == .conflict)
    }

    @Test("deleting an app removes its activities and tokens; deleting a device removes it")
    func deletes() throws {
        var sim = Simulation()
        try sim.setUp()
        let token = try #require(try sim.request("a1", extra: ["pushType": "token"])["pushToken"]?.stringValue)
        try sim.run(["type": "app.delete", "id": "coffee"], ["type": "device.delete", "id": "d1"])
        #expect(sim.get("/apps/coffee") == nil)
        #expect(sim.get("/activities/a1") == nil)
        #expect(sim.get("/devices/d1") == nil)
        #expect(sim.engine.resolve(token: token) == nil)
        #expect(throws: APIError.notFound) { try sim.run(["type": "app.delete", "id": "coffee"]) }
        try sim.expectPatchesReplay()
    }
}
