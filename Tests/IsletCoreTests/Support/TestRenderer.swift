import IsletCore

/// A trivial pure renderer for core tests: templates are plain text with `{{state.key}}`
/// replaced by the value's JSON text (no escaping needed: tests only compare strings).
struct TestRenderer: PresentationRenderer {
    struct Compiled: CompiledTemplate {
        var source: String
        var sectionDepth: Int { 0 }
        var sourceBytes: Int { self.source.utf8.count }
    }

    func compile(_ source: String, slot: TemplateSlot) throws(APIError) -> any CompiledTemplate {
        if source.contains("{{{") { throw APIError(.invalidArgument, "unescaped output is not allowed") }
        return Compiled(source: source)
    }

    func render(_ request: PresentationRenderRequest) -> RenderedPresentation {
        let state = request.context["state"] ?? .null
        var fragments: [PresentationSlot: String] = [:]
        for slot in PresentationSlot.allCases {
            if let compiled = request.templates[slot] as? Compiled {
                fragments[slot] = substitute(compiled.source, state)
            } else {
                fragments[slot] = "\(slot.rawValue):\(state.encodedString)"
            }
        }
        return RenderedPresentation(
            fragments: fragments,
            expandedHeight: fragments[.expandedHeight].flatMap { Double($0) },
            lockScreenHeight: fragments[.lockScreenHeight].flatMap { Double($0) })
    }

    private func substitute(_ source: String, _ state: JSONValue) -> String {
        var text = source
        guard case .object(let object) = state else { return text }
        for member in object.members {
            let rendered = member.value.stringValue ?? member.value.encodedString
            text = text.replacing("{{state.\(member.key)}}", with: rendered)
        }
        return text
    }
}
