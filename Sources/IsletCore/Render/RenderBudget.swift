/// What one render may cost, checked when templates and content arrive, never at render time.
///
/// A template's sections nest; each iterates over an array of the context. Nested sections over
/// long arrays multiply (a template three sections deep over a 1,000-element array is 10⁹
/// iterations), and a render that never ends would come due at a later clock step and hang
/// every replay. So `template.put` refuses sections nested deeper than `maxSectionDepth`, and
/// every template meets every content it will render with a bound: each section iterating over
/// the content's longest array, each iteration writing the whole template and the whole
/// content, `(longest + 1)^depth × (template bytes + content bytes)`, at most `maxOutputBytes`.
/// Over it, the command that brought the template or the content is refused (`limit_exceeded`).
public enum RenderBudget {
    /// Sections (`{{#…}}`, `{{^…}}`) nested in one another, at most.
    public static let maxSectionDepth = 6
    /// The bound on one render's output, in bytes (8 MiB).
    public static let maxOutputBytes = 8 << 20

    /// The worst case of rendering `template` over `content`, in bytes (saturating).
    static func cost(_ template: any CompiledTemplate, content: [JSONValue]) -> Int {
        guard template.sectionDepth > 0 else { return template.sourceBytes + content.reduce(0) { $0 + $1.encoded.count } }
        var longest = 0
        var bytes = template.sourceBytes
        for value in content {
            longest = max(longest, longestArray(in: value))
            bytes += value.encoded.count
        }
        var cost = bytes
        for _ in 0..<template.sectionDepth {
            let (product, overflow) = cost.multipliedReportingOverflow(by: longest + 1)
            guard !overflow, product <= Self.maxOutputBytes else { return Int.max }
            cost = product
        }
        return cost
    }

    /// Refuses `content` for `template` when the bound is over budget.
    /// - Throws: `limit_exceeded` at `field`, saying what `what` is.
    static func check(_ template: any CompiledTemplate, content: [JSONValue], what: String, field: JSONPointer?) throws(APIError) {
        guard self.cost(template, content: content) > self.maxOutputBytes else { return }
        throw APIError(
            .limitExceeded,
            "render budget: \(what) could make a render of more than \(Self.maxOutputBytes >> 20) MiB (sections nested \(template.sectionDepth) deep over arrays of up to \(content.map(longestArray).max() ?? 0) elements); use shorter arrays or fewer nested sections",
            field: field)
    }
}

/// The longest array anywhere in `value`.
private func longestArray(in value: JSONValue) -> Int {
    switch value {
    case .array(let elements): return elements.reduce(elements.count) { max($0, longestArray(in: $1)) }
    case .object(let object): return object.members.reduce(0) { max($0, longestArray(in: $1.value)) }
    default: return 0
    }
}
