import IsletCore
import Testing

@testable import IsletRender

/// What a presentation reads of its context (``ContextReads``): the engine skips rendering an
/// activity whose new context agrees with the last one there, so agreement must imply the same
/// fragments, for every template and every change.
@Suite struct ContextReadsTests {
    typealias Random = SeededRandom

    @Test("a template reads its names' members, prints whole, and reads everything through {{.}}")
    func templateReads() throws {
        func reads(_ source: String) throws -> ContextReads {
            try #require(try RenderableTemplate(source: source)).compiled.reads
        }
        let dotted = try reads("{{a.b}}")
        #expect(dotted.agree(["a": ["b": 1, "c": 1], "d": 1], ["a": ["b": 1, "c": 2], "d": 2]))
        #expect(!dotted.agree(["a": ["b": 1]], ["a": ["b": 2]]))
        #expect(!dotted.agree(["a": ["b": ["x": 1]]], ["a": ["b": ["x": 1, "y": 2]]]), "a printed object is read whole")
        #expect(!dotted.agree(["a": ["b": 1]], ["b": 1]), "a read name that disappears")
        let section = try reads("{{#a}}{{#b}}x{{/b}}{{/a}}")
        #expect(section.agree(["a": [["b": true, "c": 1]]], ["a": [["b": true, "c": 2]]]))
        #expect(!section.agree(["a": [["b": true]]], ["a": [["b": true], ["b": true]]]), "arrays keep their length")
        #expect(try !reads("{{#a}}{{.}}{{/a}}").agree(["z": 1], ["z": 2]), "{{.}} can print the root")
        let entries = try reads("{{#stateEntries}}{{key}}{{/stateEntries}}")
        #expect(!entries.agree(["state": ["q": 1]], ["state": ["q": 2]]), "stateEntries lists the whole state")
        #expect(ContextReads.everything.agree(["z": 1], ["z": 1]))
        #expect(!ContextReads.everything.agree(["z": 1], ["z": 2]))
    }

    @Test("contexts that agree on a template's reads render it byte for byte the same", arguments: 0..<6)
    func agreementKeepsOutput(seed: UInt64) throws {
        var random = Random(seed: seed)
        let sources =
            CompiledMustacheTests.builtIns + CompiledMustacheTests.handwritten
            + (0..<60).map { _ in CompiledMustacheTests.randomTemplate(&random, depth: 0) }
        var agreed = 0
        for source in sources {
            let compiled = try #require(try RenderableTemplate(source: source)).compiled
            for _ in 0..<40 {
                let old = CompiledMustacheTests.randomContext(&random)
                let new = Self.changed(old, &random)
                guard compiled.reads.agree(old, new) else { continue }
                agreed += 1
                #expect(compiled.render(old) == compiled.render(new), "template \(source)\nold \(old)\nnew \(new)")
            }
        }
        #expect(agreed > sources.count * 4, "too few agreeing pairs to show anything: \(agreed)")
    }

    @Test("the built-in presentations render the same for contexts that agree on their reads", arguments: 0..<4)
    func builtInsKeepOutput(seed: UInt64) {
        var random = Random(seed: seed)
        let renderer = MustacheRenderer()
        var agreed = 0
        for type in MustacheRenderer.builtInAttributesTypes + ["SomeOtherAttributes"] {
            for _ in 0..<200 {
                let old = Self.activityContext(&random)
                let new = Self.changed(old, &random)
                let request = { PresentationRenderRequest(attributesType: type, templates: [:], context: $0) }
                let first = renderer.render(request(old))
                guard first.reads.agree(old, new) else { continue }
                agreed += 1
                let second = renderer.render(request(new))
                #expect(first.fragments == second.fragments, "\(type)\nold \(old)\nnew \(new)")
            }
        }
        #expect(agreed > 200, "too few agreeing pairs to show anything: \(agreed)")
    }

    /// A context shaped like the engine's, its state drawn from the built-ins' keys and others.
    static func activityContext(_ random: inout Random) -> JSONValue {
        let stateKeys = [
            "currentStatus", "status", "driver", "period", "halftime", "clock", "plays", "paused", "remainingSeconds",
            "elapsedSeconds", "distanceMeters", "heartRate", "homeScore", "awayScore", "endsAt", "n", "note",
        ]
        var state = JSONObject()
        for key in stateKeys where random.next(2) == 0 {
            state[key] = Self.stateValue(&random)
        }
        return [
            "activity": ["id": "a1", "isStale": .bool(random.next(2) == 0), "attributesType": "T"],
            "alert": .null,
            "app": ["id": "app", "name": .string(["Coffee", "", "Ride"][random.next(3)]), "identity": ["tint": "#f00"]],
            "attributes": ["coffeeName": "Flat white", "homeTeam": "A", "awayTeam": "B", "workoutType": "Run"],
            "state": .object(state),
        ]
    }

    static func stateValue(_ random: inout Random) -> JSONValue {
        switch random.next(6) {
        case 0: return .bool(random.next(2) == 0)
        case 1: return .number([0, 1, 59, 61, 3600.5, 1500][random.next(6)])
        case 2: return .array((0..<random.next(5)).map { .string("play \($0)") })
        case 3: return ["name": "Ann", "car": "Blue"]
        default:
            return .string(["preparing", "outForDelivery", "arriving", "HT", "Q3", "x", ""][random.next(7)])
        }
    }

    /// One change somewhere in `value`: a member replaced, added or removed, at any depth.
    static func changed(_ value: JSONValue, _ random: inout Random) -> JSONValue {
        switch value {
        case .object(var object) where !object.isEmpty && random.next(3) != 0:
            let key = object.keys[random.next(object.count)]
            object[key] = Self.changed(object[key]!, &random)
            return .object(object)
        case .object(var object):
            let key = (CompiledMustacheTests.keys + ["n", "note", "status", "paused"]).randomElement(using: &random)
            object[key] = random.next(4) == 0 ? nil : Self.stateValue(&random)
            return .object(object)
        case .array(var elements) where !elements.isEmpty && random.next(2) == 0:
            let index = random.next(elements.count)
            elements[index] = Self.changed(elements[index], &random)
            return .array(elements)
        default:
            return random.next(2) == 0 ? Self.stateValue(&random) : CompiledMustacheTests.randomValue(&random, depth: 1)
        }
    }
}

extension Array {
    fileprivate func randomElement(using random: inout SeededRandom) -> Element {
        self[random.next(self.count)]
    }
}
