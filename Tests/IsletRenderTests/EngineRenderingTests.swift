import IsletCore
import IsletRender
import Testing

/// The engine with the real renderer: fragments land under /activities/<id>/render.
@Suite struct EngineRenderingTests {
    static let start = try! Instant(rfc3339: "2026-11-22T08:00:00Z")

    func engine() throws -> Engine {
        var engine = Engine(
            renderer: MustacheRenderer(), at: Self.start, clock: .virtual(now: Self.start, atWall: Self.start))
        _ = try engine.apply(
            [
                ["type": "device.upsert", "id": "d1"],
                ["type": "app.upsert", "id": "coffee", "name": "Coffee", "foreground": true],
                [
                    "type": "activity.request", "id": "c1", "app": "coffee",
                    "attributesType": "CoffeeDeliveryAttributes",
                    "attributes": ["coffeeName": "Flat white"], "content": ["state": ["currentStatus": "recieved"]],
                ],
            ] as [JSONValue], at: Self.start)
        return engine
    }

    @Test("the coffee demo renders each step as its status changes")
    func coffeeSteps() throws {
        var engine = try self.engine()
        #expect(
            engine.value(at: "/activities/c1/render/compactTrailing") == #"<span class="islet-status">Received</span>"#)
        _ = try engine.apply(
            [["type": "activity.update", "id": "c1", "content": ["state": ["currentStatus": "preparing"]]]]
                as [JSONValue], at: Self.start)
        #expect(
            engine.value(at: "/activities/c1/render/compactTrailing") == #"<span class="islet-status">Brewing</span>"#)
        let revision = try engine.apply(
            [["type": "activity.update", "id": "c1", "content": ["state": ["currentStatus": "outForDelivery"]]]]
                as [JSONValue], at: Self.start)
        #expect(
            engine.value(at: "/activities/c1/render/expanded/center")
                == #"<strong class="islet-status">On its way!</strong>"#)
        #expect(revision.ops.contains { $0.path == "/activities/c1/render/compactTrailing" })
    }

    @Test("template.put overrides one slot, is validated, and survives a snapshot with the real renderer")
    func templatePut() throws {
        var engine = try self.engine()
        _ = try engine.apply(
            [
                [
                    "type": "template.put", "app": "coffee", "target": "activity:CoffeeDeliveryAttributes",
                    "slot": "minimal",
                    "html": "<i>{{attributes.coffeeName}}</i>",
                ]
            ] as [JSONValue], at: Self.start)
        #expect(engine.value(at: "/activities/c1/render/minimal") == "<i>Flat white</i>")
        #expect(
            engine.value(at: "/activities/c1/render/compactTrailing") == #"<span class="islet-status">Received</span>"#)
        let error = #expect(throws: APIError.self) {
            try engine.apply(
                [
                    [
                        "type": "template.put", "app": "coffee", "target": "activity:CoffeeDeliveryAttributes",
                        "slot": "lockScreen",
                        "html": "{{#state}}unclosed",
                    ]
                ] as [JSONValue], at: Self.start)
        }
        #expect(error?.field == "/commands/0/html")
        let restored = try Engine(snapshot: engine.snapshot(), renderer: MustacheRenderer())
        #expect(restored.documentBytes == engine.documentBytes)
    }

    @Test("an app without templates gets the key/value default, escaped")
    func defaultForUnknownType() throws {
        var engine = try self.engine()
        _ = try engine.apply(
            [
                [
                    "type": "activity.request", "id": "x", "app": "coffee", "attributesType": "Mystery",
                    "content": ["state": ["note": "<img src=x onerror=alert(1)>"]],
                ]
            ] as [JSONValue], at: Self.start)
        let lock = try #require(engine.value(at: "/activities/x/render/lockScreen")?.stringValue)
        #expect(lock.contains("<dt>note</dt><dd>&lt;img src=x onerror=alert(1)&gt;</dd>"))
    }

    @Test("an update that changes only state the templates do not read keeps the fragments, unrendered")
    func unreadStateKeepsFragments() throws {
        var engine = try self.engine()
        let update: (JSONValue) throws -> Revision = { state in
            try engine.apply(
                [["type": "activity.update", "id": "c1", "content": ["state": state]]] as [JSONValue], at: Self.start)
        }
        let read = try update(["currentStatus": "preparing", "orderNote": "no sugar"])
        #expect(read.ops.contains { $0.path == "/activities/c1/render/compactTrailing" })
        let unread = try update(["currentStatus": "preparing", "orderNote": "oat milk"])
        #expect(!unread.ops.contains { $0.path.isWithin("/activities/c1/render") })
        #expect(unread.ops.contains { $0.path == "/activities/c1/content/state/orderNote" })
        #expect(
            engine.value(at: "/activities/c1/render/compactTrailing") == #"<span class="islet-status">Brewing</span>"#)
        _ = try update(["currentStatus": "outForDelivery", "orderNote": "oat milk"])
        #expect(
            engine.value(at: "/activities/c1/render/compactTrailing")
                == #"<span class="islet-status">On its way!</span>"#)
    }

    @Test("a read string that changes only its Unicode normalization renders again and reaches the wire")
    func normalizationIsAChange() throws {
        var engine = try self.engine()
        _ = try engine.apply(
            [
                [
                    "type": "template.put", "app": "coffee", "target": "activity:CoffeeDeliveryAttributes",
                    "slot": "minimal", "html": "<i>{{state.currentStatus}}</i>",
                ]
            ] as [JSONValue], at: Self.start)
        func status(_ text: String) throws -> Revision {
            try engine.apply(
                [["type": "activity.update", "id": "c1", "content": ["state": ["currentStatus": .string(text)]]]]
                    as [JSONValue], at: Self.start)
        }
        _ = try status("caf\u{E9}")
        let revision = try status("cafe\u{301}")
        #expect(revision.ops.contains { $0.path == "/activities/c1/content/state/currentStatus" })
        #expect(revision.ops.contains { $0.path == "/activities/c1/render/minimal" })
        let minimal = try #require(engine.value(at: "/activities/c1/render/minimal")?.stringValue)
        #expect(Array(minimal.utf8) == Array("<i>cafe\u{301}</i>".utf8))
    }

    @Test("a template put after a skipped rendering renders the state as it is now")
    func templatePutAfterSkip() throws {
        var engine = try self.engine()
        func note(_ text: String) throws {
            let state: JSONValue = ["currentStatus": "preparing", "orderNote": .string(text)]
            _ = try engine.apply(
                [["type": "activity.update", "id": "c1", "content": ["state": state]]] as [JSONValue], at: Self.start)
        }
        try note("one")
        try note("two")
        _ = try engine.apply(
            [
                [
                    "type": "template.put", "app": "coffee", "target": "activity:CoffeeDeliveryAttributes",
                    "slot": "minimal", "html": "<i>{{state.orderNote}}</i>",
                ]
            ] as [JSONValue], at: Self.start)
        #expect(engine.value(at: "/activities/c1/render/minimal") == "<i>two</i>")
        try note("three")
        #expect(engine.value(at: "/activities/c1/render/minimal") == "<i>three</i>", "the app's template reads it")
    }
}
