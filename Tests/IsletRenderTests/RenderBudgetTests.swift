import IsletCore
import IsletRender
import Testing

/// The render bomb of issue 18: nested sections over one array meet a long array. Whichever
/// arrives second is refused with `limit_exceeded`, so no render (and no replay) can hang.
@Suite("Render budgets")
struct RenderBudgetTests {
    static let start = try! Instant(rfc3339: "2026-11-22T08:00:00Z")
    static let bomb = nested("content.items")
    static func nested(_ name: String) -> String {
        "{{#\(name)}}{{#\(name)}}{{#\(name)}}<i>{{.}}</i>{{/\(name)}}{{/\(name)}}{{/\(name)}}"
    }
    static let thousand: JSONValue = .array((0..<1000).map { _ in .number(0) })

    private func engine() throws -> Engine {
        var engine = Engine(renderer: MustacheRenderer(), at: Self.start, clock: .virtual(now: Self.start, atWall: Self.start))
        _ = try engine.apply(
            [
                ["type": "device.upsert", "id": "d1"], ["type": "app.upsert", "id": "app", "foreground": true],
                ["type": "widget.upsert", "id": "w", "app": "app", "kind": "list", "family": "systemSmall", "device": "d1"],
            ] as [JSONValue], at: Self.start)
        return engine
    }

    private func template(_ html: String, target: String = "widget:list", slot: String = "html") -> JSONValue {
        ["type": "template.put", "app": "app", "target": .string(target), "slot": .string(slot), "html": .string(html)]
    }

    private func timeline(_ content: JSONValue) -> JSONValue {
        [
            "type": "widget.setTimeline", "id": "w", "policy": "never",
            "entries": [["date": .string(Self.start.rfc3339), "content": content]],
        ]
    }

    private func refusal(_ engine: inout Engine, _ command: JSONValue) -> APIError? {
        let before = engine.rev
        do {
            _ = try engine.apply([command], at: Self.start)
            return nil
        } catch {
            #expect(engine.rev == before, "a refused command changes nothing")
            return error
        }
    }

    @Test("a timeline entry with a 1,000-element array is refused at widget.setTimeline under a three-deep template")
    func timelineAfterTemplate() throws {
        var engine = try self.engine()
        _ = try engine.apply([self.template(Self.bomb)], at: Self.start)
        let error = try #require(self.refusal(&engine, self.timeline(["items": Self.thousand])))
        #expect(error.code == .limitExceeded && error.field?.description == "/commands/0/entries")
        #expect(error.message.contains("render budget"))
        // Short arrays render as always.
        _ = try engine.apply([self.timeline(["items": [1, 2]])], at: Self.start)
        let html = engine.value(at: "/widgets/w/render/html")?.stringValue ?? ""
        #expect(html.split(separator: "<i>", omittingEmptySubsequences: false).count == 9, "2 × 2 × 2 items: \(html)")
    }

    @Test("the same template is refused at template.put when a widget already holds the long array")
    func templateAfterTimeline() throws {
        var engine = try self.engine()
        _ = try engine.apply([self.timeline(["items": Self.thousand])], at: Self.start)
        let error = try #require(self.refusal(&engine, self.template(Self.bomb)))
        #expect(error.code == .limitExceeded && error.field?.description == "/commands/0/html")
        #expect(error.message.contains("widget w"))
        // One level over a long array is fine: 1,001 × the bytes involved.
        _ = try engine.apply([self.template("{{#content.items}}<i>{{.}}</i>{{/content.items}}")], at: Self.start)
    }

    @Test("sections nested deeper than the limit are refused at template.put, whatever the content")
    func depth() throws {
        var engine = try self.engine()
        let deep = String(repeating: "{{#a}}", count: RenderBudget.maxSectionDepth + 1) + "x"
            + String(repeating: "{{/a}}", count: RenderBudget.maxSectionDepth + 1)
        let error = try #require(self.refusal(&engine, self.template(deep)))
        #expect(error.code == .limitExceeded && error.field?.description == "/commands/0/html")
        let allowed = String(repeating: "{{#a}}", count: RenderBudget.maxSectionDepth) + "x"
            + String(repeating: "{{/a}}", count: RenderBudget.maxSectionDepth)
        _ = try engine.apply([self.template(allowed)], at: Self.start)
    }

    @Test("an activity's content over budget is refused at activity.request and activity.update, and nothing changes")
    func activities() throws {
        var engine = try self.engine()
        _ = try engine.apply(
            [
                self.template(Self.nested("state.items"), target: "activity:List", slot: "lockScreen"),
                [
                    "type": "activity.request", "id": "a1", "app": "app", "attributesType": "List",
                    "attributes": [:], "content": ["state": ["items": [1]]],
                ],
            ] as [JSONValue], at: Self.start)
        let long: JSONValue = .array((0..<500).map { _ in .number(0) })
        let start = try #require(self.refusal(&engine, [
            "type": "activity.request", "id": "a2", "app": "app", "attributesType": "List", "attributes": [:],
            "content": ["state": ["items": long]],
        ]))
        #expect(start.code == .limitExceeded)
        let update = try #require(self.refusal(&engine, ["type": "activity.update", "id": "a1", "content": ["state": ["items": long]]]))
        #expect(update.code == .limitExceeded && update.field?.description == "/commands/0/content/state")
        #expect(engine.value(at: "/activities/a1/content/state/items") == [1])
    }

    @Test("an end's final content and an alert's arrays meet the budget too: refused from the API, a rejected delivery as a push, nothing changes")
    func endsAndAlerts() throws {
        var engine = try self.engine()
        _ = try engine.apply(
            [
                self.template(Self.nested("state.items") + Self.nested("alert.loc-args"), target: "activity:List", slot: "lockScreen"),
                [
                    "type": "activity.request", "id": "a1", "app": "app", "attributesType": "List",
                    "attributes": [:], "content": ["state": ["items": [1]]],
                ],
            ] as [JSONValue], at: Self.start)
        let long: JSONValue = .array((0..<500).map { _ in .number(0) })
        let alert: JSONValue = ["title": "t", "body": ["loc-key": "k", "loc-args": .array((0..<500).map { _ in "a" })]]
        let end = try #require(self.refusal(&engine, ["type": "activity.end", "id": "a1", "content": ["state": ["items": long]]]))
        #expect(end.code == .limitExceeded && end.field?.description == "/commands/0/content/state")
        let alerting = try #require(self.refusal(&engine, [
            "type": "activity.update", "id": "a1", "content": ["state": ["items": [2]]], "alert": alert,
        ]))
        #expect(alerting.code == .limitExceeded && alerting.field?.description == "/commands/0/alert")
        let start = try #require(self.refusal(&engine, [
            "type": "activity.request", "id": "a2", "app": "app", "attributesType": "List", "attributes": [:],
            "content": ["state": ["items": [1]]], "source": "intent", "alert": alert,
        ]))
        #expect(start.code == .limitExceeded && start.field?.description == "/commands/0/alert")
        // As pushes: 200 from APNs, and the device rejects them (LA-2's reason), the activity as it was.
        for push: JSONValue in [
            ["type": "activity.end", "id": "a1", "content": ["state": ["items": long]], "delivery": ["source": "push"]],
            ["type": "activity.end", "id": "a1", "alert": alert, "delivery": ["source": "push"]],
            ["type": "activity.update", "id": "a1", "content": ["state": ["items": [3]]], "alert": alert, "delivery": ["source": "push"]],
        ] {
            let applied = try engine.apply([push], at: Self.start)
            #expect(applied.results == [["applied": false, "reason": "attributesTooLarge"]], "\(push)")
        }
        #expect(engine.value(at: "/activities/a1/activityState") == "active")
        #expect(engine.value(at: "/activities/a1/content/state/items") == [1])
        let html = engine.value(at: "/activities/a1/render/lockScreen")?.stringValue ?? ""
        #expect(html.utf8.count < 1_000, "no render of the rejected content: \(html.utf8.count) bytes")
        // The last alert stays in the context: an update without one is over budget with it,
        // and the error names the update's own content.
        let moderate: JSONValue = ["title": "t", "body": ["loc-key": "k", "loc-args": .array((0..<20).map { _ in "aaaaaaaaaa" })]]
        _ = try engine.apply(
            [["type": "activity.update", "id": "a1", "content": ["state": ["items": [2]]], "alert": moderate]] as [JSONValue],
            at: Self.start)
        let items: JSONValue = .array((0..<25).map { _ in .number(0) })
        let alone: JSONValue = [
            "type": "activity.request", "id": "a3", "app": "app", "attributesType": "List", "attributes": [:],
            "content": ["state": ["items": items]],
        ]
        #expect(self.refusal(&engine, alone) == nil, "within budget without an alert")
        let quiet = try #require(self.refusal(&engine, ["type": "activity.update", "id": "a1", "content": ["state": ["items": items]]]))
        #expect(quiet.field?.description == "/commands/0/content/state", "\(quiet.message)")
    }
}
