import IsletCore
import Testing

/// WK-1 … WK-9 on the virtual clock.
@Suite struct WidgetRuleTests {
    @Test(
        "WK-1 sizes come from the device's row of the table; accessory widgets go on the Lock Screen, system ones on the Home Screen, systemSmall also in StandBy"
    )
    func wk1Families() throws {
        var sim = Simulation()
        try sim.setUp(
            devices: ["d1": "iphone-15-pro", "max": "iphone-16-pro-max", "se": "iphone-se-3"], apps: ["coffee"])
        try sim.addWidget("small", family: "systemSmall")
        try sim.addWidget("circle", family: "accessoryCircular")
        try sim.addWidget("medium", family: "systemMedium", device: "se")
        try sim.addWidget("big", family: "systemLarge", device: "max")
        try sim.addWidget("loose", family: "accessoryInline", device: nil)
        #expect(sim.get("/widgets/small/size") == ["width": 158, "height": 158, "derived": false])
        #expect(sim.get("/widgets/circle/size") == ["width": 72, "height": 72, "derived": false])
        #expect(sim.get("/widgets/medium/size") == ["width": 321, "height": 148, "derived": false])
        #expect(sim.get("/widgets/big/size") == ["width": 364, "height": 382, "derived": true])
        #expect(sim.get("/widgets/loose/size") == .null)
        #expect(sim.get("/devices/d1/scene/lockScreen/widgets") == ["circle"])
        #expect(sim.get("/devices/d1/scene/home/widgets") == ["small"])
        #expect(sim.get("/devices/se/scene/home/widgets") == ["medium"])
        #expect(sim.get("/devices/d1/scene/standby") == .null)
        try sim.run(["type": "device.upsert", "id": "d1", "standby": true])
        #expect(sim.get("/devices/d1/scene/standby/widgets") == ["small"])
        let error = #expect(throws: APIError.self) {
            try sim.run([
                "type": "widget.upsert", "id": "x", "app": "coffee", "kind": "k", "family": "systemExtraLarge",
            ])
        }
        #expect(error?.field == "/commands/0/family")
        try sim.expectPatchesReplay()
    }

    @Test(
        "WK-1 every catalog model's small and circular sizes: its own row of the table (the iPhone 16e's 390×844 is one), else the widest not wider, flagged derived",
        arguments: [
            ("iphone-se-3", 148.0, 68.0, false), ("iphone-16e", 158, 72, false), ("iphone-15-pro", 158, 72, false),
            ("iphone-16-pro", 158, 72, true), ("iphone-air", 169, 76, true), ("iphone-15-pro-max", 170, 76, false),
            ("iphone-16-pro-max", 170, 76, true),
        ])
    func wk1EveryModel(model: String, small: Double, circular: Double, derived: Bool) throws {
        var sim = Simulation()
        try sim.setUp(devices: ["d": model], apps: ["coffee"])
        try sim.addWidget("s", family: "systemSmall", device: "d")
        try sim.addWidget("c", family: "accessoryCircular", device: "d")
        #expect(sim.get("/widgets/s/size") == ["width": .number(small), "height": .number(small), "derived": .bool(derived)])
        #expect(sim.get("/widgets/c/size") == ["width": .number(circular), "height": .number(circular), "derived": .bool(derived)])
    }

    @Test(
        "WK-2 the current entry is the latest with date ≤ now; before the first, the previous content or the placeholder"
    )
    func wk2CurrentEntry() throws {
        var sim = try Simulation.widgets()
        try sim.addWidget("w")
        #expect(sim.get("/widgets/w/current") == ["index": nil, "date": nil, "placeholder": true, "previous": false])
        try sim.setTimeline("w", [sim.entry(600), sim.entry(1200), sim.entry(1200)])
        #expect(sim.get("/widgets/w/current/placeholder") == true)
        try sim.advance(seconds: 600)
        #expect(sim.get("/widgets/w/current/index") == 0)
        #expect(sim.get("/widgets/w/current/date") == "2026-11-22T08:10:00Z")
        let shown = sim.get("/widgets/w/render/html")
        #expect(shown?.stringValue?.contains("10") == true)
        try sim.advance(seconds: 700)
        #expect(sim.get("/widgets/w/current/index") == 2, "of equal dates, the last")
        // A new timeline that starts later keeps the previous content on screen.
        let before = sim.get("/widgets/w/render/html")
        try sim.setTimeline("w", [sim.entry(900)])
        #expect(
            sim.get("/widgets/w/current") == [
                "index": nil, "date": "2026-11-22T08:20:00Z", "placeholder": false, "previous": true,
            ])
        #expect(sim.get("/widgets/w/render/html") == before)
        try sim.advance(seconds: 900)
        #expect(sim.get("/widgets/w/current/index") == 0)
        try sim.expectPatchesReplay()
    }

    @Test(
        "WK-3 reload policies: atEnd at the last entry (single entry: 30 min after it), after(d) at d, never only on request"
    )
    func wk3Policies() throws {
        var sim = try Simulation.widgets()
        try sim.addWidget("w")
        try sim.setTimeline("w", [sim.entry(0), sim.entry(3600)])
        #expect(sim.get("/widgets/w/reload/nextAt") == "2026-11-22T09:00:00Z")
        try sim.setTimeline("w", [sim.entry(0)])
        #expect(sim.get("/widgets/w/reload/nextAt") == "2026-11-22T08:30:00Z")
        try sim.setTimeline("w", [sim.entry(0)], policy: ["after": sim.date(after: 7200)])
        #expect(sim.get("/widgets/w/reload/nextAt") == "2026-11-22T10:00:00Z")
        try sim.setTimeline("w", [sim.entry(0)], policy: "never")
        #expect(sim.get("/widgets/w/reload/nextAt") == .null)
        try sim.advance(seconds: 86_400)
        #expect(sim.get("/widgets/w/reload/pending") == false)
        let result = try sim.run(["type": "widget.reload", "id": "w", "reason": "app"]).results[0]
        #expect(result == ["scheduledAt": "2026-11-23T08:00:00Z"])
        #expect(sim.get("/widgets/w/reload/pending") == true)
        try sim.expectPatchesReplay()
    }

    @Test(
        "WK-4 the 73rd reload within 24 h is deferred to the instant the oldest charged reload leaves the window; free reasons are not charged"
    )
    func wk4Budget() throws {
        var sim = try Simulation.widgets()
        try sim.addWidget("w")
        try sim.setTimeline("w", [sim.entry(0)], policy: "never")
        let first = sim.engine.now
        for index in 0..<72 {
            let result = try sim.run(["type": "widget.reload", "id": "w", "reason": "app"]).results[0]
            #expect(result["scheduledAt"] == .string(sim.engine.now.rfc3339), "reload \(index + 1) happens at once")
            try sim.advance(seconds: 300)
        }
        #expect(
            sim.get("/widgets/w/reload/budget") == [
                "limit": 72, "used": 72, "windowHours": 24, "nextSlotAt": "2026-11-23T08:00:00Z",
            ])
        let free = try sim.run(["type": "widget.reload", "id": "w", "reason": "foreground"]).results[0]
        #expect(free["scheduledAt"] == .string(sim.engine.now.rfc3339), "a free reload happens at once")
        #expect(sim.get("/widgets/w/reload/budget/used") == 72)
        try sim.advance(seconds: 300)
        let deferred = try sim.run(["type": "widget.reload", "id": "w", "reason": "app"]).results[0]
        #expect(deferred["scheduledAt"] == .string(first.adding(seconds: 86_400).rfc3339))
        #expect(sim.get("/widgets/w/reload/nextAt") == .string(first.adding(seconds: 86_400).rfc3339))
        let count = sim.get("/widgets/w/reload/count")
        try sim.advance(to: first.adding(seconds: 86_400 - 1))
        #expect(sim.get("/widgets/w/reload/count") == count)
        try sim.advance(seconds: 1)
        #expect(sim.get("/widgets/w/reload/count") == .number((count?.numberValue ?? 0) + 1))
        #expect(sim.get("/widgets/w/reload/budget/used") == 72, "one charge left the window, one came in")
        #expect(sim.get("/widgets/w/reload/lastAt") == .string(first.adding(seconds: 86_400).rfc3339))
        try sim.expectPatchesReplay()
    }

    @Test(
        "WK-5 a charged reload happens at least 5 minutes after the previous one, never before the instant asked; free ones without the spacing, but not before the instant asked either"
    )
    func wk5Spacing() throws {
        var sim = try Simulation.widgets()
        try sim.addWidget("w")
        try sim.setTimeline("w", [sim.entry(0)], policy: "never")
        try sim.run(["type": "widget.reload", "id": "w", "reason": "app"])
        try sim.advance(seconds: 60)
        let spaced = try sim.run(["type": "widget.reload", "id": "w", "reason": "push"]).results[0]
        #expect(spaced == ["scheduledAt": "2026-11-22T08:05:00Z"])
        let later = try sim.run([
            "type": "widget.reload", "id": "w", "reason": "app", "at": sim.date(after: 3600),
        ]).results[0]
        #expect(later == ["scheduledAt": "2026-11-22T08:05:00Z"], "a later request joins the waiting one")
        try sim.advance(seconds: 239)
        #expect(sim.get("/widgets/w/reload/count") == 2, "WK-10's request at creation and the first")
        try sim.advance(seconds: 1)
        #expect(sim.get("/widgets/w/reload/count") == 3)
        #expect(sim.get("/widgets/w/reload/lastAt") == "2026-11-22T08:05:00Z")
        let free = try sim.run(["type": "widget.reload", "id": "w", "reason": "intent"]).results[0]
        #expect(free == ["scheduledAt": "2026-11-22T08:05:00Z"])
        #expect(sim.get("/widgets/w/reload/count") == 4)
        // A free reload skips the spacing, never the instant asked for.
        let asked = try sim.run([
            "type": "widget.reload", "id": "w", "reason": "system", "at": "2026-11-22T09:00:00Z",
        ]).results[0]
        #expect(asked == ["scheduledAt": "2026-11-22T09:00:00Z"])
        try sim.advance(seconds: 3299)
        #expect(sim.get("/widgets/w/reload/count") == 4)
        try sim.advance(seconds: 1)
        #expect(sim.get("/widgets/w/reload/count") == 5)
        #expect(sim.get("/widgets/w/reload/lastAt") == "2026-11-22T09:00:00Z")
        #expect(sim.get("/widgets/w/reload/lastReason") == "system")
        try sim.expectPatchesReplay()
    }

    @Test(
        "WK-10 a new widget and a reconfigured one ask their provider at once (free), showing the placeholder until it answers"
    )
    func wk10FirstTimeline() throws {
        var sim = try Simulation.widgets()
        try sim.addWidget("w", extra: ["configuration": ["city": "Paris"]])
        #expect(sim.get("/widgets/w/reload/pending") == true)
        #expect(sim.get("/widgets/w/reload/lastReason") == "created")
        #expect(sim.get("/widgets/w/reload/budget/used") == 0, "free")
        #expect(sim.get("/widgets/w/current/placeholder") == true)
        try sim.setTimeline("w", [sim.entry(0)], policy: "never")
        #expect(sim.get("/widgets/w/reload/pending") == false)
        #expect(sim.get("/widgets/w/current/placeholder") == false)
        // Not a refresh: a charged reload right after it need not wait WK-5's 5 minutes.
        let reload = try sim.run(["type": "widget.reload", "id": "w", "reason": "app"]).results[0]
        #expect(reload["scheduledAt"] == .string(sim.engine.now.rfc3339))
        try sim.setTimeline("w", [sim.entry(0)], policy: "never")
        try sim.run(["type": "widget.upsert", "id": "w", "configuration": ["city": "Paris"]])
        #expect(sim.get("/widgets/w/reload/pending") == false, "the same configuration changes nothing")
        try sim.run(["type": "widget.upsert", "id": "w", "configuration": ["city": "Tokyo"]])
        #expect(sim.get("/widgets/w/reload/pending") == true)
        #expect(sim.get("/widgets/w/reload/lastReason") == "configured")
        #expect(sim.get("/widgets/w/current/placeholder") == true, "the old timeline was for Paris")
        #expect(sim.get("/widgets/w/timeline/entries") == [])
        #expect(sim.get("/widgets/w/reload/budget/used") == 1, "only the app's reload was charged")
        try sim.expectPatchesReplay()
    }

    @Test("WK-6 a due reload marks the widget pending until whoever sends the next timeline answers it")
    func wk6Pending() throws {
        var sim = try Simulation.widgets()
        try sim.addWidget("w")
        try sim.setTimeline("w", [sim.entry(0), sim.entry(600)])
        #expect(sim.get("/widgets/w/reload/pending") == false)
        try sim.advance(seconds: 600)
        #expect(sim.get("/widgets/w/reload/pending") == true)
        #expect(sim.get("/widgets/w/reload/pendingSince") == "2026-11-22T08:10:00Z")
        #expect(sim.get("/widgets/w/reload/lastReason") == "policy")
        try sim.advance(seconds: 7200)
        #expect(sim.get("/widgets/w/reload/pending") == true, "nobody answered: still pending, no second reload")
        #expect(sim.get("/widgets/w/reload/count") == 2, "WK-10's request at creation, then this one")
        try sim.setTimeline("w", [sim.entry(0), sim.entry(1800)])
        #expect(sim.get("/widgets/w/reload/pending") == false)
        #expect(sim.get("/widgets/w/reload/nextAt") == "2026-11-22T10:40:00Z")
        try sim.expectPatchesReplay()
    }

    @Test(
        "WK-7 more than 400 entries are refused; the placeholder shows shapes, not text; layout margins and logo corner are stated"
    )
    func wk7Limits() throws {
        var sim = try Simulation.widgets()
        try sim.addWidget("w", extra: ["placeholder": ["temperature": 20, "condition": "Sunny"]])
        let placeholder = try #require(sim.get("/widgets/w/render/html")?.stringValue)
        #expect(placeholder.contains("islet-redacted"))
        #expect(stripTags(placeholder).trimmingWhitespace().isEmpty, "no text: \(placeholder)")
        let many = (0..<401).map { sim.entry(Double($0) * 60) }
        let error = #expect(throws: APIError.self) { try sim.setTimeline("w", many) }
        #expect(error?.code == .limitExceeded)
        #expect(error?.field == "/commands/0/entries")
        try sim.setTimeline("w", Array(many.prefix(400)))
        #expect(sim.get("/widgets/w/timeline/entries")?.arrayValue?.count == 400)
        #expect(sim.get("/widgets/w/layout") == ["margin": 16, "graphicalMargin": 11, "logo": "topRight"])
        try sim.run(["type": "config.set", "values": ["widgetMaxTimelineEntries": 10]])
        #expect(throws: APIError.self) { try sim.setTimeline("w", Array(many.prefix(11))) }
    }

    @Test(
        "WK-8 rendering mode by place: Home Screen full color or accented under a tint, Lock Screen vibrant, StandBy background removed and red at night"
    )
    func wk8RenderingModes() throws {
        var sim = try Simulation.widgets()
        try sim.addWidget("home")
        try sim.addWidget("lock", family: "accessoryRectangular")
        #expect(
            sim.get("/widgets/home/presentation") == [
                "place": "home", "renderingMode": "fullColor", "backgroundRemoved": false, "tint": nil, "standby": nil,
            ])
        #expect(
            sim.get("/widgets/lock/presentation") == [
                "place": "lockScreen", "renderingMode": "vibrant", "backgroundRemoved": true, "tint": nil,
                "standby": nil,
            ])
        try sim.run(["type": "device.upsert", "id": "d1", "tint": "#FF9500", "standby": true, "nightMode": true])
        #expect(sim.get("/widgets/home/presentation/renderingMode") == "accented")
        #expect(sim.get("/widgets/home/presentation/tint") == "#FF9500")
        #expect(sim.get("/devices/d1/scene/home/renderingMode") == "accented")
        #expect(
            sim.get("/widgets/home/presentation/standby") == [
                "backgroundRemoved": true, "renderingMode": "vibrant", "tint": "red",
            ])
        try sim.run(["type": "device.upsert", "id": "d1", "tint": "", "nightMode": false])
        #expect(sim.get("/widgets/home/presentation/renderingMode") == "fullColor")
        #expect(sim.get("/widgets/home/presentation/standby/tint") == .null)
        try sim.expectPatchesReplay()
    }

    @Test(
        "WK-9 a tap opens the Link's URL, else the widget URL, else the app; inline and circular have one target; a control reloads for free"
    )
    func wk9Taps() throws {
        var sim = try Simulation.widgets()
        try sim.addWidget("news", kind: "news", family: "systemMedium", extra: ["url": "news://home"])
        try sim.addWidget("ring", kind: "news", family: "accessoryCircular", extra: ["url": "news://ring"])
        try sim.addWidget("bare", kind: "news")
        let withLinks: JSONValue = [
            "date": sim.date(after: 0), "content": ["headline": "Hello"], "links": ["story1": "news://story/1"],
        ]
        for id in ["news", "ring", "bare"] { try sim.setTimeline(id, [withLinks], policy: "never") }
        let tap: (String, String?) -> JSONValue = { id, target in
            var command: JSONObject = ["type": "widget.interact", "id": .string(id), "action": "tap"]
            if let target { command["target"] = .string(target) }
            return .object(command)
        }
        #expect(try sim.run(tap("news", "story1")).results[0]["url"] == "news://story/1")
        #expect(try sim.run(tap("news", nil)).results[0]["url"] == "news://home")
        #expect(try sim.run(tap("ring", "story1")).results[0]["url"] == "news://ring")
        #expect(sim.get("/widgets/ring/tap") == ["targets": "single", "url": "news://ring", "links": []])
        #expect(sim.get("/widgets/news/tap/links") == [["id": "story1", "url": "news://story/1"]])
        let bare = try sim.run(tap("bare", nil)).results[0]
        #expect(bare["opens"] == "app")
        #expect(bare["userActivity"] == ["kind": "news", "family": "systemSmall"])
        #expect(throws: APIError.self) { try sim.run(tap("news", "nope")) }
        let used = sim.get("/widgets/news/reload/budget/used")
        let control = try sim.run(["type": "widget.interact", "id": "news", "action": "control", "target": "like"])
        #expect(control.results[0]["reloadAt"] == .string(sim.engine.now.rfc3339))
        #expect(sim.get("/widgets/news/reload/pending") == true)
        #expect(sim.get("/widgets/news/reload/lastReason") == "intent")
        #expect(sim.get("/widgets/news/reload/budget/used") == used)
        #expect(sim.get("/widgets/news/usage/interactions") == 3)
        try sim.run(["type": "device.upsert", "id": "d1", "locked": true])
        let locked = try sim.run(["type": "widget.interact", "id": "news", "action": "control", "target": "like"])
        #expect(locked.results[0] == ["applied": false, "reason": "locked"])
        try sim.expectPatchesReplay()
    }
}

/// The text of an HTML fragment, tags removed.
func stripTags(_ html: String) -> String {
    var text = ""
    var inTag = false
    for character in html {
        if character == "<" {
            inTag = true
        } else if character == ">" {
            inTag = false
        } else if !inTag {
            text.append(character)
        }
    }
    return text
}

extension String {
    func trimmingWhitespace() -> String { self.filter { !$0.isWhitespace } }
}
