/// Rendering widgets: the request a renderer receives, a default rendering, and WK-7's
/// placeholder redaction.
///
/// A widget renders its shown entry into one HTML fragment (`render.html`). The engine calls
/// the renderer once per touched widget at the end of a revision, never per transition.

/// One widget's rendering request.
public struct WidgetRenderRequest: Sendable {
    public var kind: String
    public var family: WidgetFamily
    /// The app's own template for this kind (`template.put` with target `widget:<kind>`).
    public var template: (any CompiledTemplate)?
    /// The shown entry's content (the placeholder's when `placeholder`).
    public var content: JSONObject
    /// The widget shows its placeholder: the engine redacts the text of the result (WK-7).
    public var placeholder: Bool
    private let makeContext: @Sendable () -> JSONValue

    public init(
        kind: String, family: WidgetFamily, template: (any CompiledTemplate)?, content: JSONObject, placeholder: Bool,
        context: @escaping @Sendable () -> JSONValue
    ) {
        self.kind = kind
        self.family = family
        self.template = template
        self.content = content
        self.placeholder = placeholder
        self.makeContext = context
    }

    /// What a template sees: `{"widget": {id, kind, family, configuration, size, url},
    /// "content": {...}, "entry": {date, relevance, links} | null, "app": {id, name, identity},
    /// "placeholder": bool}`. Built when asked (the built-in designs read `content` only).
    public var context: JSONValue { self.makeContext() }
}

extension PresentationRenderer {
    /// A plain rendering for renderers that have no widget templates: the content's members
    /// as a definition list, every value escaped.
    public func renderWidget(_ request: WidgetRenderRequest) -> String {
        defaultWidgetHTML(request)
    }
}

/// The default widget fragment: kind and family as data attributes, the content's members
/// sorted by key.
public func defaultWidgetHTML(_ request: WidgetRenderRequest) -> String {
    var html = #"<div class="islet-widget islet-widget-default" data-kind=""#
    html += escapeHTML(request.kind) + #"" data-family=""# + request.family.rawValue + #""><dl>"#
    for member in request.content.members {
        html += "<dt>" + escapeHTML(member.key) + "</dt><dd>"
        html += escapeHTML(member.value.stringValue ?? member.value.encodedString) + "</dd>"
    }
    return html + "</dl></div>"
}

/// Escapes `& < > " '` for HTML text and attribute values (as Mustache's `{{value}}` does).
/// - Complexity: O(n); text without those characters is returned as it is.
public func escapeHTML(_ text: String) -> String {
    let special = text.utf8.contains { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }
    guard special else { return text }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count + 16)
    for byte in text.utf8 {
        switch byte {
        case 0x26: bytes += "&amp;".utf8
        case 0x3C: bytes += "&lt;".utf8
        case 0x3E: bytes += "&gt;".utf8
        case 0x22: bytes += "&quot;".utf8
        case 0x27: bytes += "&#39;".utf8
        default: bytes.append(byte)
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// WK-7: a placeholder shows shapes, not text. Every run of text outside tags becomes an empty
/// `<span class="islet-redacted" data-chars="n">`, keeping its length for the layout; tags and
/// whitespace stay. Character references count as one character.
public func redactText(_ html: String) -> String {
    var result = ""
    result.reserveCapacity(html.utf8.count)
    var inTag = false
    var run = 0
    func flush() {
        guard run > 0 else { return }
        result += #"<span class="islet-redacted" data-chars=""# + String(run) + #""></span>"#
        run = 0
    }
    var inReference = false
    for character in html {
        if inTag {
            result.append(character)
            if character == ">" { inTag = false }
            continue
        }
        switch character {
        case "<":
            flush()
            inTag = true
            result.append(character)
        case " ", "\n", "\t", "\r":
            flush()
            result.append(character)
        case "&":
            inReference = true
            run += 1
        case ";" where inReference:
            inReference = false
        default:
            if !inReference { run += 1 }
        }
    }
    flush()
    return result
}
