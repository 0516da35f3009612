import IsletCore
import IsletRender
import Testing

/// The Mustache renderer on its own, and behind the engine.
@Suite struct MustacheRendererTests {
    let renderer = MustacheRenderer()

    func render(
        _ type: String, state: JSONValue, attributes: JSONValue = [:], templates: [PresentationSlot: String] = [:]
    ) throws
        -> RenderedPresentation
    {
        var compiled: [PresentationSlot: any CompiledTemplate] = [:]
        for (slot, source) in templates { compiled[slot] = try self.renderer.compile(source, slot: slot.slot) }
        let context: JSONValue = [
            "activity": ["id": "a1", "attributesType": .string(type), "activityState": "active", "isStale": false],
            "attributes": attributes, "state": state, "app": ["id": "demo", "name": "Demo", "identity": [:]],
        ]
        return self.renderer.render(
            PresentationRenderRequest(attributesType: type, templates: compiled, context: context))
    }

    @Test("every inserted value is HTML-escaped")
    func escapes() throws {
        let hostile: JSONValue = ["status": "<script>alert('x')</script> & \"quotes\""]
        let own = try self.render("Custom", state: hostile, templates: [.lockScreen: "<p>{{state.status}}</p>"])
        #expect(own[.lockScreen] == "<p>&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;</p>")
        let fallback = try self.render("Custom", state: hostile)
        #expect(fallback[.lockScreen].contains("&lt;script&gt;"))
        #expect(!fallback[.lockScreen].contains("<script>"))
        let coffee = try self.render(
            "CoffeeDeliveryAttributes", state: ["currentStatus": "preparing"],
            attributes: ["coffeeName": "<b>Latte</b>"])
        #expect(coffee[.expandedLeading].contains("&lt;b&gt;Latte&lt;/b&gt;"))
    }

    @Test(
        "the timer and workout render any JSON number, however large, without trapping",
        arguments: [1e300, -1e300, 1.7976931348623157e308, 9.3e18, -9.3e18])
    func hugeNumbers(value: Double) throws {
        let timer = try self.render("TimerAttributes", state: ["remainingSeconds": .number(value)])
        #expect(timer[.compactTrailing].contains(value > 0 ? "277777777777:46:40" : "0:00"))
        let workout = try self.render(
            "WorkoutAttributes", state: ["elapsedSeconds": .number(value), "distanceMeters": .number(value)])
        #expect(workout[.expandedCenter].contains(value > 0 ? "1000000000000.0 km" : "-1000000000000.0 km"))
    }

    @Test(
        "templates that could emit unescaped text or hide tags are refused",
        arguments: [
            "{{{state.x}}}", "{{&state.x}}", "{{ &state.x}}", "{{%CONTENT_TYPE:TEXT}}{{state.x}}", "{{=<% %>=}}<%&x%>",
            "{{>partial}}", "{{<parent}}{{/parent}}", "{{$block}}{{/block}}",
        ])
    func refusesUnsafe(source: String) {
        let error = #expect(throws: APIError.self) {
            try self.renderer.compile(source, slot: PresentationSlot.lockScreen.slot)
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test("a template that does not parse is refused with where")
    func refusesSyntaxErrors() {
        let error = #expect(throws: APIError.self) {
            try self.renderer.compile("{{#open}}never closed", slot: PresentationSlot.lockScreen.slot)
        }
        #expect(error?.message.contains("does not parse") == true)
    }

    @Test("the default template lists the content state's keys and values, sorted")
    func defaultTemplate() throws {
        let rendered = try self.render("Unknown", state: ["zeta": 3, "alpha": "one", "nested": ["x": true]])
        #expect(
            rendered[.expandedBottom]
                == #"<dl class="islet-state"><dt>alpha</dt><dd>one</dd><dt>nested</dt><dd>{&quot;x&quot;:true}</dd><dt>zeta</dt><dd>3</dd></dl>"#
        )
        #expect(rendered[.compactLeading] == #"<span class="islet-app">Demo</span>"#)
        #expect(rendered[.minimal] == #"<span class="islet-initial">D</span>"#)
        #expect(rendered.expandedHeight == nil)
    }

    @Test(
        "coffee delivery shows received → brewing → on its way",
        arguments: [
            ("recieved", "Received", 1), ("received", "Received", 1), ("preparing", "Brewing", 2),
            ("outForDelivery", "On its way!", 3),
        ])
    func coffee(status: String, text: String, step: Int) throws {
        let rendered = try self.render(
            "CoffeeDeliveryAttributes", state: ["currentStatus": .string(status)],
            attributes: ["coffeeName": "Flat white"])
        #expect(
            rendered[.compactTrailing] == #"<span class="islet-status">\#(text)</span>"#.replacing("'", with: "&#39;"))
        #expect(rendered[.expandedTrailing].contains("\(step)/3"))
        #expect(rendered[.lockScreen].contains("Flat white"))
    }

    @Test("ride share is short while searching and tall once a driver is found")
    func rideShare() throws {
        let searching = try self.render(
            "RideShareAttributes", state: ["status": "searching"], attributes: ["pickup": "Main St"])
        #expect(searching.lockScreenHeight == 84)
        #expect(searching.expandedHeight == 84)
        #expect(searching[.lockScreen].contains("Looking for a driver near Main St"))
        let found = try self.render(
            "RideShareAttributes",
            state: [
                "status": "driverFound", "etaMinutes": 4,
                "driver": ["name": "Ana", "car": "Blue Prius", "plate": "7ABC123"],
            ])
        #expect(found.lockScreenHeight == 160)
        #expect(found[.expandedCenter].contains("Ana"))
        #expect(found[.compactTrailing].contains("4 min"))
    }

    @Test("the sports score collapses its play-by-play at halftime")
    func sports() throws {
        let attributes: JSONValue = ["homeTeam": "LAL", "awayTeam": "BOS", "league": "NBA"]
        let playing = try self.render(
            "SportsScoreAttributes",
            state: ["homeScore": 52, "awayScore": 48, "period": "Q2", "clock": "1:12", "plays": ["a", "b", "c", "d"]],
            attributes: attributes)
        #expect(playing[.lockScreen].contains("<ol class=\"islet-plays\"><li>b</li><li>c</li><li>d</li></ol>"))
        #expect(playing.lockScreenHeight == 160)
        #expect(playing[.minimal].contains("52–48"))
        let halftime = try self.render(
            "SportsScoreAttributes", state: ["homeScore": 60, "awayScore": 58, "halftime": true, "plays": ["a"]],
            attributes: attributes)
        #expect(!halftime[.lockScreen].contains("islet-plays"))
        #expect(halftime[.expandedCenter].contains("Halftime"))
        #expect(halftime.lockScreenHeight == 84)
    }

    @Test("the timer shows its remaining time and pause/cancel controls only where controls are allowed (PR-8)")
    func timer() throws {
        let running = try self.render(
            "TimerAttributes", state: ["endsAt": "2026-11-22T08:25:00Z", "remainingSeconds": 1500],
            attributes: ["name": "Tea"])
        #expect(running[.lockScreen].contains(#"data-countdown-to="2026-11-22T08:25:00Z""#))
        #expect(running[.lockScreen].contains("25:00"))
        #expect(running[.lockScreen].contains(#"data-action="pause""#))
        #expect(running[.lockScreen].contains(#"data-action="cancel""#))
        let paused = try self.render("TimerAttributes", state: ["paused": true, "remainingSeconds": 3725])
        #expect(paused[.expandedBottom].contains(#"data-action="resume""#))
        #expect(paused[.expandedTrailing].contains("1:02:05"))
    }

    @Test(
        "built-in templates keep controls out of compact and minimal slots (PR-8)",
        arguments: MustacheRenderer.builtInAttributesTypes)
    func builtInControls(type: String) throws {
        let rendered = try self.render(type, state: ["paused": false, "remainingSeconds": 10, "elapsedSeconds": 10])
        for slot in [PresentationSlot.compactLeading, .compactTrailing, .minimal] {
            #expect(!rendered[slot].contains("<button"), "\(type) \(slot)")
            #expect(!rendered[slot].contains("data-action"), "\(type) \(slot)")
        }
    }

    @Test("the workout shows elapsed time, distance and controls")
    func workout() throws {
        let rendered = try self.render(
            "WorkoutAttributes", state: ["elapsedSeconds": 1830, "distanceMeters": 5240, "heartRate": 151],
            attributes: ["workoutType": "Run"])
        #expect(rendered[.compactTrailing].contains("30:30"))
        #expect(rendered[.expandedCenter].contains("5.2 km"))
        #expect(rendered[.lockScreen].contains("151 bpm"))
        #expect(rendered[.lockScreen].contains(#"data-action="end""#))
    }

    @Test("rendering is pure: the same request gives the same fragments")
    func pure() throws {
        let a = try self.render("RideShareAttributes", state: ["status": "searching"])
        let b = try self.render("RideShareAttributes", state: ["status": "searching"])
        #expect(a == b)
    }
}
