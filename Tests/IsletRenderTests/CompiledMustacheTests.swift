import IsletCore
import Testing

@testable import IsletRender

/// The compiled form of templates (``CompiledMustache``) against swift-mustache itself: for
/// every template it compiles, its output must be byte-identical to swift-mustache's for the
/// same context, whatever the context holds.
@Suite struct CompiledMustacheTests {
    /// Templates written to reach the corners: stack climbing, dotted and leading-dot names,
    /// `{{.}}`, sections over every kind of value, inverted sections, comments, standalone
    /// lines and indentation, `stateEntries`, names with `-`, `?` and `*`.
    static let handwritten: [String] = [
        "", "plain text only", "{{a}}", "{{ a }}", "{{a.b}}", "{{a.b.c}}", "{{.}}", "{{.a}}", "{{a..b}}",
        "<p>{{a}} &amp; {{b}}</p>", "{{#a}}[{{.}}]{{/a}}", "{{^a}}none{{/a}}", "{{#a}}{{b}}{{/a}}",
        "{{#a}}{{#b}}{{c}}{{/b}}{{/a}}", "{{#a}}{{.b}}{{/a}}", "{{#a}}{{a}}{{/a}}", "{{#a}}{{^b}}x{{/b}}{{/a}}",
        "{{#a.b}}{{c}}|{{/a.b}}", "{{^a.b}}-{{/a.b}}{{#a.b}}+{{/a.b}}", "{{! a comment }}x{{!another}}",
        "{{#stateEntries}}<dt>{{key}}</dt><dd>{{value}}</dd>{{/stateEntries}}", "{{#state}}{{stateEntries}}{{/state}}",
        "{{#state}}{{#stateEntries}}{{key}}={{value}};{{/stateEntries}}{{/state}}", "{{state}}", "{{view}}",
        "line one\n  {{#a}}\n  inside {{b}}\n  {{/a}}\nlast", "  {{^a}}  \n\tno\n  {{/a}}  \n", "{{#a}}\r\n{{b}}\r\n{{/a}}\r\n",
        "  {{! standalone comment }}\n{{c}}", "a\n{{#b}}\n{{/b}}", "{{#a}} x {{/a}} y", "{{x-y}}{{is?}}{{*z}}",
        "{{#a}}{{#.}}{{.}}{{/.}}{{/a}}", "{{^a}}{{.}}{{/a}}", "{{#a}}{{^.}}empty{{/.}}{{/a}}",
        "{{#view.first}}<b>{{value}}</b>{{/view.first}}", "{{#activity.isStale}}stale{{/activity.isStale}}",
        "{{#b}}{{#c}}{{a}}{{/c}}{{/b}}", "é{{a}}ü\u{301}", "{{#a}}{{#b}}{{#c}}{{d}}{{e}}{{/c}}{{/b}}{{/a}}",
    ]

    /// Every template source that ships with Islet.
    static var builtIns: [String] {
        (BuiltInPresentation.all + [.keyValueList]).flatMap { $0.templates.values }
    }

    @Test("every built-in template has a compiled form")
    func builtInsCompile() throws {
        for source in Self.builtIns {
            #expect(try RenderableTemplate(source: source) != nil, "\(source)")
        }
    }

    @Test("templates outside the subset have no compiled form, and template.put refuses them")
    func outsideSubset() throws {
        for source in ["{{uppercased(a)}}", "{{#reversed(a)}}{{.}}{{/reversed(a)}}", "{{{a}}}", "{{&a}}"] {
            #expect(try RenderableTemplate(source: source) == nil, "\(source)")
            #expect(throws: APIError.self, "\(source)") {
                try MustacheRenderer().compile(source, slot: PresentationSlot.lockScreen.slot)
            }
        }
    }

    @Test("compiled output is byte-identical to swift-mustache's", arguments: 0..<8)
    func differential(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let sources = Self.builtIns + Self.handwritten + (0..<60).map { _ in Self.randomTemplate(&random, depth: 0) }
        var compared = 0
        for source in sources {
            let template = try #require(try RenderableTemplate(source: source), "\(source)")
            let compiled = template.compiled
            for _ in 0..<40 {
                let context = Self.randomContext(&random)
                let expected = template.referenceRender(context)
                let actual = compiled.render(context)
                #expect(actual == expected, "template \(source) context \(context)")
                #expect(Array(actual.utf8) == Array(expected.utf8))
                compared += 1
            }
        }
        #expect(compared == sources.count * 40)
    }

    @Test("every <, >, &, \" and ' is escaped, also where a combining mark joins it to the next scalar")
    func escaping() throws {
        let template = try #require(try RenderableTemplate(source: "<p title=\"{{a}}\">{{a}}</p>"))
        for text in [
            "<>&\"'", "plain", "&\u{301}", "\"\u{301} onmouseover=alert(1) x=\"", "'\u{301}", "<\u{338}", "a\u{200D}<",
            "\u{0600}<x", "é&é", "👩‍👩‍👧<", "\r\n&", "",
        ] {
            var escaped = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "<": escaped += "&lt;"
                case ">": escaped += "&gt;"
                case "&": escaped += "&amp;"
                case "\"": escaped += "&quot;"
                case "'": escaped += "&#39;"
                default: escaped.unicodeScalars.append(scalar)
                }
            }
            let rendered = template.render(["a": .string(text)])
            #expect(rendered == "<p title=\"\(escaped)\">\(escaped)</p>", "\(text.unicodeScalars)")
        }
    }

    @Test("numbers render exactly: an integer beyond 2^53 digit for digit, never with an exponent (AP-8)")
    func exactNumbers() throws {
        let template = try #require(
            try RenderableTemplate(source: "{{state.id}}|{{state.big}}|{{#stateEntries}}{{key}}={{value}};{{/stateEntries}}"))
        let state = try JSONParser.input.parse(#"{"id": 1795560793900123456, "big": 1e20}"#)
        let expected = "1795560793900123456|100000000000000000000|big=100000000000000000000;id=1795560793900123456;"
        #expect(template.render(["state": state]) == expected)
        #expect(template.referenceRender(["state": state]) == expected)
    }

    // MARK: - Random templates and contexts

    static let keys = ["a", "b", "c", "state", "view", "stateEntries", "key", "value", "first"]

    static func randomName(_ random: inout SeededRandom) -> String {
        switch random.next(8) {
        case 0: return "."
        case 1: return "." + Self.keys[random.next(Self.keys.count)]
        case 2, 3:
            return Self.keys[random.next(Self.keys.count)] + "." + Self.keys[random.next(Self.keys.count)]
        default: return Self.keys[random.next(Self.keys.count)]
        }
    }

    static func randomTemplate(_ random: inout SeededRandom, depth: Int) -> String {
        var source = ""
        for _ in 0..<(1 + random.next(5)) {
            switch random.next(depth < 3 ? 9 : 5) {
            case 0: source += ["<p>", " ", "\n", "  ", "&", "x'y", "é"][random.next(7)]
            case 1: source += "{{! note }}"
            case 2, 3, 4: source += "{{" + Self.randomName(&random) + "}}"
            default:
                let name = Self.randomName(&random)
                let sigil = random.next(2) == 0 ? "#" : "^"
                let newline = random.next(4) == 0 ? "\n" : ""
                source += "{{" + sigil + name + "}}" + newline + Self.randomTemplate(&random, depth: depth + 1)
                source += newline + "{{/" + name + "}}"
            }
        }
        return source
    }

    static func randomContext(_ random: inout SeededRandom) -> JSONValue {
        var object = JSONObject()
        for key in Self.keys where random.next(3) != 0 { object[key] = Self.randomValue(&random, depth: 0) }
        return .object(object)
    }

    static func randomValue(_ random: inout SeededRandom, depth: Int) -> JSONValue {
        switch random.next(depth < 3 ? 10 : 6) {
        case 0: return .null
        case 1: return .bool(random.next(2) == 0)
        case 2: return .number([0, 1, -3, 2.5, 1e21, 0.1, 42][random.next(7)])
        case 3, 4, 5:
            return .string(["", "x", "<b>&amp;</b>", "\"q\" 'a'", "é&x\u{301}", "日本", "a\nb", "0"][random.next(8)])
        case 6, 7:
            return .array((0..<random.next(4)).map { _ in Self.randomValue(&random, depth: depth + 1) })
        default:
            var object = JSONObject()
            for key in Self.keys where random.next(3) == 0 {
                object[key] = Self.randomValue(&random, depth: depth + 1)
            }
            return .object(object)
        }
    }
}

/// SplitMix64: the same values for the same seed on every run.
struct SeededRandom {
    var state: UInt64

    init(seed: UInt64) { self.state = seed &* 0x9E37_79B9_7F4A_7C15 }

    mutating func next(_ bound: Int) -> Int {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var z = self.state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
