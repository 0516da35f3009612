public import IsletCore
internal import Mustache

/// The engine's renderer: Mustache templates → HTML fragments, every inserted value escaped.
///
/// Templates come from three places, per slot: the app's own (`template.put`, compiled here
/// and stored in the engine state), else the built-in template of a demo app's attributes type
/// (coffee delivery, ride share, sports score, timer, workout), else a default that lists the
/// content state's keys and values. Rendering is a pure function of templates and context.
public struct MustacheRenderer: PresentationRenderer {
    /// A compiled app template.
    struct Compiled: CompiledTemplate {
        let template: RenderableTemplate
        let sectionDepth: Int
        let sourceBytes: Int
    }

    private let builtIns: [String: CompiledPresentation]
    private let fallback: CompiledPresentation
    private let widgetBuiltIns: [String: BuiltInWidget]

    /// The built-in and default templates, compiled once per process: every renderer (one per
    /// simulation, and one per restored snapshot) shares them.
    private static let compiled = (
        builtIns: Dictionary(
            uniqueKeysWithValues: BuiltInPresentation.all.map { ($0.attributesType, CompiledPresentation($0)) }),
        fallback: CompiledPresentation(BuiltInPresentation.keyValueList),
        widgets: Dictionary(uniqueKeysWithValues: BuiltInWidget.all.map { ($0.kind, $0) })
    )

    /// A renderer of the built-in templates (compiled at the first use in a process).
    public init() {
        self.builtIns = Self.compiled.builtIns
        self.fallback = Self.compiled.fallback
        self.widgetBuiltIns = Self.compiled.widgets
    }

    /// The attributes types that have a built-in presentation.
    public static var builtInAttributesTypes: [String] { BuiltInPresentation.all.map(\.attributesType).sorted() }

    /// The widget kinds that have a built-in design.
    public static var builtInWidgetKinds: [String] { BuiltInWidget.all.map(\.kind).sorted() }

    /// Renders a widget: the app's template for its kind (Mustache, with `view` holding the
    /// family flags), else the built-in design of the kind, else the engine's default list.
    /// Every value is escaped.
    public func renderWidget(_ request: WidgetRenderRequest) -> String {
        if let own = (request.template as? Compiled)?.template {
            return own.render(request.context.setting("view", .object(familyFlags(request.family))))
        }
        guard let builtIn = self.widgetBuiltIns[request.kind] else { return defaultWidgetHTML(request) }
        return builtIn.render(WidgetHTML(request))
    }

    public func compile(_ source: String, slot: TemplateSlot) throws(APIError) -> any CompiledTemplate {
        try TemplateSafety.check(source)
        let depth = TemplateSafety.sectionDepth(source)
        guard depth <= RenderBudget.maxSectionDepth else {
            throw APIError(
                .limitExceeded,
                "render budget: sections nest \(depth) deep; at most \(RenderBudget.maxSectionDepth) (each level multiplies what one render may cost)")
        }
        let parsed: MustacheTemplate
        do {
            parsed = try MustacheTemplate(string: source)
        } catch {
            throw APIError(.invalidArgument, "the Mustache template does not parse: \(describe(error))")
        }
        guard let template = RenderableTemplate(parsed) else {
            throw APIError(
                .invalidArgument,
                "templates may use variables, sections, inverted sections and comments, not transforms")
        }
        return Compiled(template: template, sectionDepth: depth, sourceBytes: source.utf8.count)
    }

    public func render(_ request: PresentationRenderRequest) -> RenderedPresentation {
        let presentation = self.builtIns[request.attributesType] ?? self.fallback
        let view = presentation.view(DeclaredContext(context: request.context, paths: presentation.declared))
        let context = request.context.setting("view", view)
        var fragments: [PresentationSlot: String] = [:]
        fragments.reserveCapacity(CompiledPresentation.slots.count)
        var reads = presentation.reads
        for (index, slot) in CompiledPresentation.slots.enumerated() {
            let own = request.templates.isEmpty ? nil : (request.templates[slot] as? Compiled)?.template
            if let own { reads.formUnion(own.compiled.reads) }
            guard let template = own ?? presentation.templates[index] else { continue }
            fragments[slot] = template.render(context)
        }
        return RenderedPresentation(
            fragments: fragments, expandedHeight: points(fragments[.expandedHeight]),
            lockScreenHeight: points(fragments[.lockScreenHeight]), reads: reads)
    }
}

/// A built-in presentation with its templates compiled.
struct CompiledPresentation: Sendable {
    /// Every slot, in the order of ``templates``.
    static let slots = PresentationSlot.allCases

    /// The template of each slot of ``slots``, if any.
    let templates: [RenderableTemplate?]
    let declared: [String]
    let view: @Sendable (DeclaredContext) -> JSONValue
    /// What its templates and `view` read, together.
    let reads: ContextReads

    init(_ presentation: BuiltInPresentation) {
        // Built-in templates are part of the program; one that fails to parse or to compile is
        // our bug (a test compiles them all).
        self.templates = Self.slots.map { slot in
            presentation.templates[slot].map { RenderableTemplate(try! MustacheTemplate(string: $0))! }
        }
        self.declared = presentation.reads
        self.view = presentation.view
        var reads = ContextReads()
        reads.read(paths: presentation.reads)
        for template in self.templates { if let template { reads.formUnion(template.compiled.reads) } }
        self.reads = reads
    }
}

/// A template of Islet's Mustache subset (variables, sections, inverted sections, comments):
/// parsed by swift-mustache, rendered by its compiled form, which escapes every value byte by
/// byte (`appendEscaped`). swift-mustache escapes per character, which a combining mark after
/// a quote slips past, so it never renders Islet's output.
struct RenderableTemplate: Sendable {
    let parsed: MustacheTemplate
    let compiled: CompiledMustache

    /// Nil when the template uses a construct outside the subset (transforms).
    init?(_ parsed: MustacheTemplate) {
        guard let compiled = CompiledMustache(parsed) else { return nil }
        self.parsed = parsed
        self.compiled = compiled
    }

    /// Parses `source`; nil outside the subset (tests compare both renderings with it).
    init?(source: String) throws {
        self.init(try MustacheTemplate(string: source))
    }

    /// What swift-mustache itself renders (for the differential tests).
    func referenceRender(_ json: JSONValue) -> String {
        self.parsed.render(mustacheContext(json))
    }

    func render(_ context: JSONValue) -> String {
        self.compiled.render(context)
    }
}

/// A height slot's output as points; `nil` when it is not a number.
private func points(_ text: String?) -> Double? {
    guard let text else { return nil }
    // The usual height, a few digits: read directly (the same value `Double` parses).
    if !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
        return Double(text.utf8.reduce(0) { $0 * 10 + Int($1 - 0x30) })
    }
    let trimmed = text.filter { !$0.isWhitespace }
    guard let value = Double(trimmed), value.isFinite, value >= 0 else { return nil }
    return value
}

private func describe(_ error: any Error) -> String {
    if let parse = error as? MustacheTemplate.ParserError {
        return "\(parse.error) at line \(parse.context.lineNumber), column \(parse.context.columnNumber)"
    }
    return "\(error)"
}

/// `view`'s family flags for an app's widget template: `small`, `medium`, `large`, `wide`,
/// `circular`, `rectangular`, `inline`, `system`, `accessory`.
func familyFlags(_ family: WidgetFamily) -> JSONObject {
    [
        "accessory": .bool(family.isAccessory), "circular": .bool(family == .accessoryCircular),
        "inline": .bool(family == .accessoryInline), "large": .bool(family == .systemLarge),
        "medium": .bool(family == .systemMedium), "rectangular": .bool(family == .accessoryRectangular),
        "small": .bool(family == .systemSmall), "system": .bool(!family.isAccessory),
        "wide": .bool(family == .systemMedium || family == .systemLarge),
    ]
}
