import IsletCore
import IsletRender
import Testing

/// Widgets through the real renderer: built-in designs, app templates, escaping, placeholders.
@Suite struct WidgetRenderingTests {
    static let start = try! Instant(rfc3339: "2026-11-22T08:00:00Z")

    static func engine(_ widgets: [(id: String, kind: String, family: String)], content: JSONValue) throws -> Engine {
        var engine = Engine(renderer: MustacheRenderer(), at: start, clock: .virtual(now: start, atWall: start))
        var batch: [JSONValue] = [
            ["type": "device.upsert", "id": "d1"], ["type": "app.upsert", "id": "app", "name": "Weather & Co"],
        ]
        for widget in widgets {
            batch.append([
                "type": "widget.upsert", "id": .string(widget.id), "app": "app", "kind": .string(widget.kind),
                "family": .string(widget.family), "device": "d1",
            ])
            batch.append([
                "type": "widget.setTimeline", "id": .string(widget.id), "policy": "never",
                "entries": [["date": .string(start.rfc3339), "content": content]],
            ])
        }
        _ = try engine.apply(batch, at: start)
        return engine
    }

    @Test("the built-in weather design shows place, temperature, condition and range, by family")
    func weatherFamilies() throws {
        let engine = try Self.engine(
            [
                ("s", "weather", "systemSmall"), ("c", "weather", "accessoryCircular"),
                ("i", "weather", "accessoryInline"),
            ],
            content: ["location": "Cupertino", "temperature": 21, "condition": "Partly Cloudy", "high": 24, "low": 12])
        let small = try #require(engine.value(at: "/widgets/s/render/html")?.stringValue)
        for text in ["Cupertino", "21°", "Partly Cloudy", "H:24° L:12°", "islet-logo", "data-family='systemSmall'"] {
            #expect(small.contains(text), "\(text) in \(small)")
        }
        #expect(
            engine.value(at: "/widgets/c/render/html")
                == "<div class='islet-widget islet-weather' data-kind='weather' data-family='accessoryCircular'><span class='islet-temp'>21°</span><span class='islet-symbol'>⛅️</span></div>"
        )
        #expect(
            engine.value(at: "/widgets/i/render/html")?.stringValue?.contains("<span>⛅️ 21° Partly Cloudy</span>")
                == true)
    }

    @Test(
        "the weather symbol follows the words of the condition, in any case, first match wins",
        arguments: [
            ("Thunderstorms and Rain", "⛈"), ("Light SNOW", "❄️"), ("Rain", "🌧"), ("Scattered Showers", "🌧"),
            ("drizzle", "🌧"), ("Partly Cloudy", "⛅️"), ("Cloudy", "☁️"), ("Overcast", "☁️"), ("Fog", "🌫"),
            ("Mist", "🌫"), ("Windy", "💨"), ("Clear Night", "🌙"), ("Clear", "☀️"), ("Night", "☀️"), ("", "☀️"),
            ("Sunny", "☀️"), ("Éclaircies", "☀️"),
        ])
    func weatherSymbols(condition: String, symbol: String) throws {
        let engine = try Self.engine(
            [("c", "weather", "accessoryCircular")], content: ["temperature": 21, "condition": .string(condition)])
        let html = try #require(engine.value(at: "/widgets/c/render/html")?.stringValue)
        #expect(html.contains("<span class='islet-symbol'>\(symbol)</span>"), "\(condition): \(html)")
    }

    @Test("content is HTML-escaped in built-in designs and in app templates; markup in content never becomes markup")
    func escaping() throws {
        let hostile: JSONValue = ["headline": "<script>alert('x')</script> & \"quotes\"", "source": "<b>"]
        var engine = try Self.engine(
            [("n", "news", "systemSmall"), ("own", "custom", "systemSmall")], content: hostile)
        let news = try #require(engine.value(at: "/widgets/n/render/html")?.stringValue)
        #expect(!news.contains("<script>"))
        #expect(news.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot;"))
        _ = try engine.apply(
            [
                [
                    "type": "template.put", "app": "app", "target": "widget:custom", "slot": "html",
                    "html": "<h1>{{content.headline}}</h1>{{#view.small}}<i>small</i>{{/view.small}}",
                ]
            ] as [JSONValue], at: Self.start)
        let own = try #require(engine.value(at: "/widgets/own/render/html")?.stringValue)
        #expect(own.hasPrefix("<h1>&lt;script&gt;"))
        #expect(own.hasSuffix("<i>small</i>"))
        let unescaped = #expect(throws: APIError.self) {
            try engine.apply(
                [
                    [
                        "type": "template.put", "app": "app", "target": "widget:custom", "slot": "html",
                        "html": "{{{content.headline}}}",
                    ]
                ]
                    as [JSONValue], at: Self.start)
        }
        #expect(unescaped?.field == "/commands/0/html")
    }

    @Test("the stocks design renders any JSON number, however large, without trapping")
    func hugeStockNumbers() throws {
        let tickers: JSONValue = [
            "tickers": [
                ["symbol": "BIG", "price": 1e300, "change": -1e300], ["symbol": "MAX", "price": 1.7976931348623157e308],
            ]
        ]
        let engine = try Self.engine([("s", "stocks", "systemMedium")], content: tickers)
        let html = try #require(engine.value(at: "/widgets/s/render/html")?.stringValue)
        #expect(html.contains("1000000000000000.00"))
        #expect(html.contains("−1000000000000000.00"))
    }

    @Test("every built-in design renders in every family, and a placeholder of it has shapes but no text")
    func everyDesign() throws {
        let families = [
            "systemSmall", "systemMedium", "systemLarge", "accessoryCircular", "accessoryRectangular",
            "accessoryInline",
        ]
        for kind in MustacheRenderer.builtInWidgetKinds {
            let widgets = families.map { (id: "\(kind)-\($0)", kind: kind, family: $0) }
            let content = DemoFixtures.content(kind)
            var engine = try Self.engine(widgets, content: content)
            for widget in widgets {
                let html = try #require(
                    engine.value(at: JSONPointer(tokens: ["widgets", widget.id, "render", "html"]))?.stringValue)
                #expect(html.hasPrefix("<div class='islet-widget islet-\(kind)'"), "\(widget.id): \(html)")
                #expect(!stripped(html).isEmpty, "\(widget.id) shows text")
            }
            _ = try engine.apply(
                [
                    [
                        "type": "widget.upsert", "id": "fresh", "app": "app", "kind": .string(kind),
                        "family": "systemMedium",
                        "device": "d1", "placeholder": content,
                    ]
                ] as [JSONValue], at: Self.start)
            let placeholder = try #require(engine.value(at: "/widgets/fresh/render/html")?.stringValue)
            #expect(placeholder.contains("islet-redacted"))
            #expect(stripped(placeholder).isEmpty, "placeholder text: \(placeholder)")
        }
    }
}

/// Representative content of each built-in kind.
enum DemoFixtures {
    static func content(_ kind: String) -> JSONValue {
        switch kind {
        case "weather":
            return [
                "location": "Paris", "temperature": 12.5, "condition": "Rain", "high": 14, "low": 8,
                "precipitation": 80,
            ]
        case "calendar":
            return [
                "weekday": "SUN", "day": 22, "event": ["title": "Standup", "time": "9:30", "location": "Room 4"],
                "later": [["title": "Lunch", "time": "13:00"]],
            ]
        case "music":
            return [
                "track": "Timeline", "artist": "The Providers", "album": "Policies", "playing": true, "progress": 0.4,
            ]
        case "traffic":
            return ["destination": "Home", "etaMinutes": 32, "traffic": "heavy", "route": "I-280", "arrival": "18:10"]
        case "news":
            return [
                "headline": "Widgets reload", "source": "Islet", "category": "Tech",
                "stories": [["headline": "More", "source": "X", "link": "s1"]],
            ]
        case "photos": return ["caption": "Kyoto", "place": "Kyoto", "yearsAgo": 2]
        default:
            return [
                "tickers": [
                    ["symbol": "AAPL", "price": 231.4, "change": -1.2], ["symbol": "MSFT", "price": 428, "change": 2],
                ]
            ]
        }
    }
}

/// The text of a fragment without tags and whitespace.
func stripped(_ html: String) -> String {
    var text = ""
    var inTag = false
    for character in html {
        if character == "<" {
            inTag = true
        } else if character == ">" {
            inTag = false
        } else if !inTag, !character.isWhitespace {
            text.append(character)
        }
    }
    return text
}
