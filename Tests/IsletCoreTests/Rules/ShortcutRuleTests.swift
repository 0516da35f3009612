import IsletCore
import Testing

/// SC-1, SC-2.
@Suite struct ShortcutRuleTests {
    static func upsert(_ id: String, phrases: [String], parameter: JSONValue? = nil, intent: JSONValue? = nil)
        -> JSONValue
    {
        var command: JSONObject = [
            "type": "shortcut.upsert", "app": "timer", "id": .string(id),
            "phrases": .array(phrases.map(JSONValue.string)),
            "intent": intent ?? [
                "type": "liveActivity", "attributesType": "TimerAttributes", "attributes": ["name": "Timer"],
                "content": ["state": ["remainingSeconds": 300]],
            ],
        ]
        if let parameter { command["parameter"] = parameter }
        return .object(command)
    }

    static func world() throws -> Simulation {
        var sim = Simulation()
        try sim.setUp(apps: [])
        try sim.run(["type": "app.upsert", "id": "timer", "name": "Timer", "foreground": false])
        return sim
    }

    @Test(
        "SC-1 at most 10 App Shortcuts per app; every phrase names the app; at most one parameter, from a finite list")
    func sc1Rules() throws {
        var sim = try Self.world()
        let noName = #expect(throws: APIError.self) { try sim.run(Self.upsert("x", phrases: ["Start a countdown"])) }
        #expect(noName?.field == "/commands/0/phrases/0")
        #expect(noName?.message.hasPrefix("SC-3") == true)
        let two = #expect(throws: APIError.self) {
            try sim.run(
                Self.upsert(
                    "x", phrases: ["Start ${duration} ${sound} in ${applicationName}"],
                    parameter: ["name": "duration", "values": ["5 minutes"]]))
        }
        #expect(two?.message.contains("at most one parameter") == true)
        #expect(throws: APIError.self) {
            try sim.run(Self.upsert("x", phrases: ["${applicationName}"], parameter: ["name": "duration", "values": []]))
        }
        #expect(throws: APIError.self) { try sim.run(Self.upsert("x", phrases: ["Start ${duration} with ${applicationName}"])) }
        try sim.run(
            Self.upsert(
                "start", phrases: ["Start a ${duration} timer with ${applicationName}", "New timer in ${applicationName}"],
                parameter: ["name": "duration", "values": ["3 minutes", "5 minutes"]]))
        for index in 1..<10 { try sim.run(Self.upsert("s\(index)", phrases: ["${applicationName} \(index)"])) }
        let eleventh = #expect(throws: APIError.self) { try sim.run(Self.upsert("s10", phrases: ["${applicationName} 10"])) }
        #expect(eleventh?.code == .limitExceeded)
        #expect(sim.get("/apps/timer/shortcuts")?.arrayValue?.count == 10)
        let value = #expect(throws: APIError.self) {
            try sim.run(["type": "shortcut.run", "app": "timer", "id": "start", "parameterValue": "an hour"])
        }
        #expect(value?.field == "/commands/0/parameterValue")
        try sim.run(["type": "shortcut.delete", "app": "timer", "id": "s9"])
        try sim.run(Self.upsert("s10", phrases: ["${applicationName} 10"]))
        try sim.expectPatchesReplay()
    }

    @Test("SC-3 every phrase holds ${applicationName} exactly once; the app's name as plain text does not count")
    func sc3ApplicationNameToken() throws {
        var sim = try Self.world()
        for (phrase, message) in [
            ("Start a timer with Timer", "SC-3: every phrase contains ${applicationName} once"),
            ("${applicationName}, start ${applicationName}", "SC-3: ${applicationName} appears 2 times"),
        ] {
            let before = sim.engine.documentValue
            let error = #expect(throws: APIError.self) { try sim.run(Self.upsert("x", phrases: ["Hi ${applicationName}", phrase])) }
            #expect(error?.field == "/commands/0/phrases/1")
            #expect(error?.message.hasPrefix(message) == true, "\(error?.message ?? "")")
            #expect(sim.engine.documentValue == before)
        }
        // A revision-1 log kept plain-name phrases (SC-1); replaying it must not refuse them.
        _ = try sim.engine.apply([Self.upsert("old", phrases: ["Start a timer with Timer"])], at: sim.wall, admission: .logged)
        #expect(sim.get("/apps/timer/shortcuts/0/phrases") == ["Start a timer with Timer"])
        let stillSC1 = #expect(throws: APIError.self) {
            try sim.engine.apply([Self.upsert("y", phrases: ["Start a countdown"])], at: sim.wall, admission: .logged)
        }
        #expect(stillSC1?.message.hasPrefix("SC-1") == true)
    }

    @Test(
        "SC-2 a Live Activity intent starts an activity while the app is in the background; ordering is declared, then by use"
    )
    func sc2Run() throws {
        var sim = try Self.world()
        let visibility = #expect(throws: APIError.self) {
            try sim.run([
                "type": "activity.request", "app": "timer", "attributesType": "TimerAttributes",
                "content": ["state": [:]],
            ])
        }
        #expect(visibility?.message.hasPrefix("visibility") == true)
        try sim.run(
            Self.upsert(
                "start", phrases: ["Start a ${duration} timer with ${applicationName}"],
                parameter: ["name": "duration", "values": ["3 minutes", "5 minutes"]]))
        try sim.run(Self.upsert("open", phrases: ["Open ${applicationName}"], intent: ["type": "openApp"]))
        try sim.run(Self.upsert("log", phrases: ["Log a break in ${applicationName}"], intent: ["type": "action"]))
        #expect(sim.get("/apps/timer/shortcuts")?.arrayValue?.map { $0["id"] } == ["start", "open", "log"])
        let result = try sim.run([
            "type": "shortcut.run", "app": "timer", "id": "start", "parameterValue": "5 minutes", "activityId": "t1",
        ]).results[0]
        #expect(result == ["activity": "t1"])
        #expect(sim.state(of: "t1") == "active")
        #expect(sim.get("/activities/t1/source") == "intent")
        #expect(sim.get("/activities/t1/attributes") == ["name": "Timer", "duration": "5 minutes"])
        #expect(sim.get("/apps/timer/foreground") == false)
        for _ in 0..<2 { try sim.run(["type": "shortcut.run", "app": "timer", "id": "log"]) }
        #expect(sim.get("/apps/timer/shortcuts")?.arrayValue?.map { $0["id"] } == ["log", "start", "open"])
        #expect(sim.get("/apps/timer/shortcuts/0/runs") == 2)
        // LA-16: opening the app brings it to the foreground of the run's device (default: d1).
        try sim.run(["type": "shortcut.run", "app": "timer", "id": "open"])
        #expect(sim.get("/devices/d1/foregroundApp") == "timer")
        #expect(sim.get("/apps/timer/foreground") == false)
        try sim.expectPatchesReplay()
    }
}
