import IsletCore

/// Rules that keep content from commands from ever becoming markup.
///
/// `{{name}}` is HTML-escaped by Mustache. What could emit unescaped text is refused at
/// `template.put` time: triple mustaches `{{{…}}}`, `{{&…}}`, content-type pragmas `{{%…}}`
/// (they can switch escaping off), delimiter changes `{{=…=}}` (they would hide the other tags
/// from this check), and partials or blocks (`{{>…}}`, `{{<…}}`, `{{$…}}`), which the engine
/// does not provide.
enum TemplateSafety {
    static let forbidden: [Character: String] = [
        "{": "unescaped output ({{{…}}})", "&": "unescaped output ({{&…}})", "%": "pragmas ({{%…}})",
        "=": "delimiter changes ({{=…=}})", ">": "partials ({{>…}})", "<": "parents ({{<…}})",
        "$": "blocks ({{$…}})",
    ]

    /// - Throws: `invalid_argument` naming the refused construct.
    static func check(_ source: String) throws(APIError) {
        var rest = source[...]
        while let open = rest.firstRange(of: "{{") {
            let after = rest[open.upperBound...].drop { $0 == " " || $0 == "\t" }
            if let first = after.first, let what = forbidden[first] {
                throw APIError(.invalidArgument, "templates may not use \(what): every value must be HTML-escaped")
            }
            rest = rest[open.upperBound...]
        }
    }

    /// How deep the sections of `source` nest: `{{#…}}` and `{{^…}}` open one, `{{/…}}` closes one
    /// (a template that does not parse is refused afterwards anyway).
    static func sectionDepth(_ source: String) -> Int {
        var depth = 0
        var deepest = 0
        var rest = source[...]
        while let open = rest.firstRange(of: "{{") {
            let tag = rest[open.upperBound...].drop { $0 == " " || $0 == "\t" }
            switch tag.first {
            case "#", "^":
                depth += 1
                deepest = max(deepest, depth)
            case "/":
                depth = max(0, depth - 1)
            default:
                break
            }
            rest = rest[open.upperBound...]
        }
        return deepest
    }
}
