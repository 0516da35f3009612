import IsletCore

/// A widget design that ships with Islet for a demo widget kind (weather, calendar, music,
/// traffic, news, photos, stocks), modelled on the system widgets the seeds describe.
///
/// The designs are written in Swift rather than Mustache: a widget is re-rendered whenever its
/// entry changes, and a 100,000-widget day renders one entry per widget per revision;
/// swift-mustache took about 25 µs for the weather design, these take about 1 µs (see
/// BENCHMARKS.md). Every inserted value goes through ``WidgetHTML/text(_:)``, which escapes it,
/// exactly as `{{value}}` would. An app's own `widget:<kind>` template (Mustache) still wins.
struct BuiltInWidget: Sendable {
    let kind: String
    let render: @Sendable (WidgetHTML) -> String

    static let all: [BuiltInWidget] = [.weather, .calendar, .music, .traffic, .news, .photos, .stocks]
}

/// Reading a widget's render context and writing escaped HTML for it.
struct WidgetHTML {
    let content: JSONObject
    let family: WidgetFamily
    let kind: String

    init(_ request: WidgetRenderRequest) {
        self.content = request.content
        self.family = request.family
        self.kind = request.kind
    }

    var isSystem: Bool { !self.family.isAccessory }
    var isWide: Bool { self.family == .systemMedium || self.family == .systemLarge }

    /// A content member as escaped text: strings as they are, numbers without a needless
    /// fraction; "" when absent.
    func text(_ key: String) -> String { escapeHTML(displayString(self.content[key])) }

    /// A member of a nested object, escaped.
    func text(_ value: JSONValue?, _ key: String) -> String { escapeHTML(displayString(value?[key])) }

    func number(_ key: String) -> Double? { self.content[key]?.numberValue }

    /// The container of every design: kind and family as data attributes, and in system
    /// families the logo top-right (WK-7).
    func wrap(_ inner: String) -> String {
        var html = #"<div class='islet-widget islet-"# + self.kind + #"' data-kind='"# + escapeHTML(self.kind)
        html += #"' data-family='"# + self.family.rawValue + #"'>"#
        if self.isSystem { html += #"<span class='islet-logo' aria-hidden='true'></span>"# }
        return html + inner + "</div>"
    }
}

/// `<p class="islet-…">text</p>` (text already escaped); nothing when the text is empty.
func paragraph(_ name: String, _ text: String) -> String {
    text.isEmpty ? "" : #"<p class='islet-"# + name + #"'>"# + text + "</p>"
}

/// A value as display text: strings as they are, whole numbers without ".0", "" for null.
func displayString(_ value: JSONValue?) -> String {
    switch value {
    case nil, .null?: return ""
    case .string(let text)?: return text
    // A number a Double would not show exactly (a big integer identifier) is shown as sent.
    case .number(let number)?: return number.isDouble ? shortNumber(number.double) : number.description
    case .bool(let flag)?: return flag ? "true" : "false"
    case let other?: return other.encodedString
    }
}

/// A number's text without a fractional part when it has none (21, not 21.0), else one decimal.
func shortNumber(_ value: Double) -> String {
    let shown = value == value.rounded() ? value : (value * 10).rounded() / 10
    return JSONNumber(shown).description
}

/// A number with two decimals (`182.50`).
func twoDecimals(_ value: Double) -> String {
    let cents = Int64((abs(boundedForInteger(value)) * 100).rounded())
    return (value < 0 && cents > 0 ? "-" : "") + "\(cents / 100)." + (cents % 100 < 10 ? "0" : "") + "\(cents % 100)"
}

/// A signed number with two decimals (`+1.25`, `−0.40`), for stock changes.
func signedTwoDecimals(_ value: Double) -> String {
    (value < 0 ? "−" : "+") + twoDecimals(abs(value))
}
