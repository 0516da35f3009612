import IsletCore

extension BuiltInWidget {
    /// Weather (seed 003): place, temperature, condition, high and low, and the chance of rain
    /// on wider widgets; the circular accessory shows the temperature, the inline one a line.
    /// Content: `location`, `temperature`, `condition`, `high`, `low`, `precipitation` (0–100).
    static let weather = BuiltInWidget(kind: "weather") { view in
        let symbol = weatherSymbol(view.content["condition"]?.stringValue ?? "")
        let temperature = view.number("temperature").map { shortNumber($0) + "°" } ?? ""
        let range =
            "H:" + (view.number("high").map { shortNumber($0) + "°" } ?? "") + " L:"
            + (view.number("low").map { shortNumber($0) + "°" } ?? "")
        switch view.family {
        case .accessoryInline:
            return view.wrap("<span>" + symbol + " " + temperature + " " + view.text("condition") + "</span>")
        case .accessoryCircular:
            return view.wrap(
                #"<span class='islet-temp'>"# + temperature + #"</span><span class='islet-symbol'>"# + symbol
                    + "</span>")
        case .accessoryRectangular:
            return view.wrap(
                paragraph("place", view.text("location")) + "<p>" + symbol + " " + temperature + " "
                    + view.text("condition") + "</p><p>" + range + "</p>")
        case .systemSmall, .systemMedium, .systemLarge:
            var html = paragraph("place", view.text("location")) + paragraph("temp", temperature)
            html +=
                paragraph("symbol", symbol) + paragraph("condition", view.text("condition")) + paragraph("range", range)
            if view.isWide, let rain = view.number("precipitation") {
                html += paragraph("rain", "Chance of rain " + shortNumber(rain) + "%")
            }
            return view.wrap(html)
        }
    }

    /// Calendar (seed 003): the weekday and date, the next event with its time and place; when
    /// the day has no more events, it says so (and wider widgets list what comes later).
    /// Content: `weekday`, `day`, `event` {`title`, `time`, `location`}, `later` [{`title`, `time`}].
    static let calendar = BuiltInWidget(kind: "calendar") { view in
        let event = view.content["event"]
        let hasEvent = event?.objectValue != nil
        switch view.family {
        case .accessoryInline:
            return view.wrap(
                "<span>"
                    + (hasEvent ? view.text(event, "time") + " " + view.text(event, "title") : "No more events today")
                    + "</span>")
        case .accessoryCircular:
            return view.wrap(
                #"<span class='islet-weekday'>"# + view.text("weekday") + #"</span><span class='islet-day'>"#
                    + view.text("day") + "</span>")
        default:
            var html = ""
            if view.isSystem { html += paragraph("weekday", view.text("weekday")) + paragraph("day", view.text("day")) }
            if hasEvent {
                let place = view.text(event, "location")
                html += paragraph("event", view.text(event, "title"))
                html += paragraph("time", view.text(event, "time") + (place.isEmpty ? "" : " · " + place))
            } else {
                html += paragraph("empty", "No more events today")
            }
            if view.isWide, let later = view.content["later"]?.arrayValue, !later.isEmpty {
                html += #"<ol class='islet-later'>"#
                for item in later {
                    html += "<li>" + view.text(item, "time") + " " + view.text(item, "title") + "</li>"
                }
                html += "</ol>"
            }
            return view.wrap(html)
        }
    }

    /// Music: the track playing on the commute.
    /// Content: `track`, `artist`, `album`, `playing` (bool), `progress` (0–1).
    static let music = BuiltInWidget(kind: "music") { view in
        let play = view.content["playing"]?.boolValue == false ? "❚❚" : "▶︎"
        if !view.isSystem {
            let artist = view.family == .accessoryInline ? "" : " · " + view.text("artist")
            return view.wrap("<span>" + play + " " + view.text("track") + artist + "</span>")
        }
        var html = #"<div class='islet-art' aria-hidden='true'></div>"#
        html += paragraph("track", view.text("track")) + paragraph("artist", view.text("artist"))
        if view.isWide {
            let progress = min(1, max(0, view.number("progress") ?? 0)) * 100
            html += paragraph("album", view.text("album"))
            html +=
                #"<meter class='islet-progress' min='0' max='100' value='"# + shortNumber(progress.rounded())
                + #"'></meter>"#
        }
        return view.wrap(html + #"<span class='islet-play'>"# + play + "</span>")
    }

    /// Traffic (Maps, seed 003): the time to get home or to the next place, and the roads.
    /// Content: `destination`, `etaMinutes`, `traffic` (`light`/`moderate`/`heavy`), `route`, `arrival`.
    static let traffic = BuiltInWidget(kind: "traffic") { view in
        let traffic = view.content["traffic"]?.stringValue ?? "light"
        let trafficText =
            traffic == "heavy" ? "Heavy traffic" : (traffic == "moderate" ? "Moderate traffic" : "Light traffic")
        switch view.family {
        case .accessoryInline:
            return view.wrap("<span>🚗 " + view.text("etaMinutes") + " min to " + view.text("destination") + "</span>")
        case .accessoryCircular:
            return view.wrap(
                #"<span class='islet-eta'>"# + view.text("etaMinutes") + #"</span><span class='islet-unit'>min</span>"#)
        default:
            var html = paragraph("destination", view.text("destination"))
            html += paragraph("eta", view.text("etaMinutes") + " min")
            html += #"<p class='islet-traffic' data-traffic='"# + escapeHTML(traffic) + #"'>"# + trafficText + "</p>"
            if view.isSystem {
                let route = view.text("route")
                if !route.isEmpty { html += paragraph("route", "via " + route) }
                let arrival = view.text("arrival")
                if !arrival.isEmpty { html += paragraph("arrival", "Arrive " + arrival) }
            }
            return view.wrap(html)
        }
    }

    /// News (seed 003): a headline; wider widgets list more stories, each its own link (WK-9).
    /// Content: `headline`, `source`, `category`, `stories` [{`headline`, `source`, `link`}].
    static let news = BuiltInWidget(kind: "news") { view in
        if !view.isSystem { return view.wrap("<span>" + view.text("headline") + "</span>") }
        var html = paragraph("category", view.text("category")) + paragraph("headline", view.text("headline"))
        html += paragraph("source", view.text("source"))
        if view.isWide, let stories = view.content["stories"]?.arrayValue, !stories.isEmpty {
            html += #"<ul class='islet-stories'>"#
            for story in stories {
                html += #"<li data-link='"# + view.text(story, "link") + #"'><span class='islet-headline'>"#
                html +=
                    view.text(story, "headline") + #"</span> <span class='islet-source'>"# + view.text(story, "source")
                html += "</span></li>"
            }
            html += "</ul>"
        }
        return view.wrap(html)
    }

    /// Photos (seed 003): a featured memory, "on this day" in past years.
    /// Content: `caption`, `place`, `yearsAgo`.
    static let photos = BuiltInWidget(kind: "photos") { view in
        if !view.isSystem { return view.wrap("<span>" + view.text("caption") + "</span>") }
        var html = #"<div class='islet-photo' aria-hidden='true'></div>"# + paragraph("caption", view.text("caption"))
        if let years = view.number("yearsAgo"), years >= 1 {
            html += paragraph("memory", years == 1 ? "1 year ago today" : shortNumber(years) + " years ago today")
        }
        return view.wrap(html + paragraph("place", view.text("place")))
    }

    /// Stocks (seed 003): a compact watch list (a small widget shows three).
    /// Content: `tickers` [{`symbol`, `price`, `change`}].
    static let stocks = BuiltInWidget(kind: "stocks") { view in
        let shown: Int
        switch view.family {
        case .systemLarge: shown = 8
        case .systemMedium: shown = 5
        case .systemSmall: shown = 3
        case .accessoryInline: shown = 1
        case .accessoryCircular, .accessoryRectangular: shown = 2
        }
        let tickers = (view.content["tickers"]?.arrayValue ?? []).prefix(shown)
        func line(_ ticker: JSONValue) -> (String, String, String, Bool) {
            let change = ticker["change"]?.numberValue ?? 0
            return (
                view.text(ticker, "symbol"), ticker["price"]?.numberValue.map(twoDecimals) ?? "",
                signedTwoDecimals(change), change < 0
            )
        }
        if view.family == .accessoryInline {
            guard let first = tickers.first else { return view.wrap("<span></span>") }
            let (symbol, price, change, _) = line(first)
            return view.wrap("<span>" + symbol + " " + price + " " + change + "</span>")
        }
        var html = #"<ul class='islet-tickers'>"#
        for ticker in tickers {
            let (symbol, price, change, down) = line(ticker)
            html += #"<li data-direction='"# + (down ? "down" : "up") + #"'><span class='islet-symbol'>"# + symbol
            html += #"</span> <span class='islet-price'>"# + price + #"</span> <span class='islet-change'>"# + change
            html += "</span></li>"
        }
        return view.wrap(html + "</ul>")
    }
}

/// A symbol for a weather condition's name.
func weatherSymbol(_ condition: String) -> String {
    // Byte search on the lowercased UTF-8: `String.contains` of a string goes through the
    // generic substring searcher, 4 % of the 24 h jump over 100,000 widgets.
    let text = Array(condition.lowercased().utf8)
    func has(_ word: StaticString) -> Bool {
        let needle = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard needle.count <= text.count else { return false }
        return (0...(text.count - needle.count)).contains { text[$0..<$0 + needle.count].elementsEqual(needle) }
    }
    if has("thunder") { return "⛈" }
    if has("snow") { return "❄️" }
    if has("rain") || has("shower") || has("drizzle") { return "🌧" }
    if has("partly") { return "⛅️" }
    if has("cloud") || has("overcast") { return "☁️" }
    if has("fog") || has("mist") { return "🌫" }
    if has("wind") { return "💨" }
    if has("clear") && has("night") { return "🌙" }
    return "☀️"
}
