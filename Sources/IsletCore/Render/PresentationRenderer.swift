/// The rendering hook: how an activity's content becomes HTML fragments.
///
/// `IsletCore` knows no template language; it declares this protocol and receives an
/// implementation when the engine is built (`IsletRender` provides the Mustache one). Rendering
/// must be pure — the same templates and context always give the same fragments — so the
/// engine stays deterministic and replay reproduces the same document. It may be called from
/// two threads at once (a long clock step renders widgets on both).
public protocol PresentationRenderer: Sendable {
    /// Checks and compiles a template that arrived with `template.put`.
    /// - Throws: `invalid_argument` (the engine points it at `/html`) when the template is
    ///   malformed or would emit unescaped content.
    func compile(_ source: String, slot: TemplateSlot) throws(APIError) -> any CompiledTemplate

    /// Renders every slot of one activity. Slots without a template in `request.templates` use
    /// the renderer's built-in template for `request.attributesType`, else its default one.
    func render(_ request: PresentationRenderRequest) -> RenderedPresentation

    /// Renders a widget's shown entry (or its placeholder) into one HTML fragment. A default
    /// implementation lists the content's members (``defaultWidgetHTML(_:)``).
    func renderWidget(_ request: WidgetRenderRequest) -> String
}

/// A template compiled by a renderer; stored in the engine state and handed back to render.
/// Its shape bounds what rendering it may cost (`RenderBudget`).
public protocol CompiledTemplate: Sendable {
    /// How deep its sections nest (0: none).
    var sectionDepth: Int { get }
    /// The length of its source in bytes.
    var sourceBytes: Int { get }
}

/// What a template is for: its slot name, and whether it may contain interactive controls.
public struct TemplateSlot: Sendable, Hashable {
    public var name: String
    /// PR-8: only expanded and Lock Screen slots (and widgets) may hold controls.
    public var allowsControls: Bool
    /// Height slots render a number of points rather than HTML.
    public var isHeight: Bool

    public init(name: String, allowsControls: Bool, isHeight: Bool = false) {
        self.name = name
        self.allowsControls = allowsControls
        self.isHeight = isHeight
    }
}

/// The slots of an activity's presentation (API.md `render`), plus two height slots.
public enum PresentationSlot: String, Sendable, Hashable, CaseIterable {
    case compactLeading, compactTrailing, minimal
    case expandedLeading, expandedTrailing, expandedCenter, expandedBottom
    case lockScreen
    /// Renders the expanded height in points (e.g. `{{#state.driver}}160{{/state.driver}}…`).
    case expandedHeight
    /// Renders the Lock Screen height in points.
    case lockScreenHeight

    public var slot: TemplateSlot {
        switch self {
        case .compactLeading, .compactTrailing, .minimal:
            TemplateSlot(name: self.rawValue, allowsControls: false)
        case .expandedLeading, .expandedTrailing, .expandedCenter, .expandedBottom, .lockScreen:
            TemplateSlot(name: self.rawValue, allowsControls: true)
        case .expandedHeight, .lockScreenHeight:
            TemplateSlot(name: self.rawValue, allowsControls: false, isHeight: true)
        }
    }
}

/// One activity's rendering request.
public struct PresentationRenderRequest: Sendable {
    public var attributesType: String
    /// The app's own templates for this attributes type, by slot.
    public var templates: [PresentationSlot: any CompiledTemplate]
    /// `{"activity": {...}, "attributes": {...}, "state": {...}, "app": {...}}`.
    public var context: JSONValue

    public init(attributesType: String, templates: [PresentationSlot: any CompiledTemplate], context: JSONValue) {
        self.attributesType = attributesType
        self.templates = templates
        self.context = context
    }
}

/// The rendered fragments of one activity: HTML strings, and declared heights.
public struct RenderedPresentation: Sendable, Hashable {
    public var fragments: [PresentationSlot: String]
    /// Heights the templates declared, in points; `nil` when a template declared none.
    public var expandedHeight: Double?
    public var lockScreenHeight: Double?
    /// What of the context these fragments came from; a context that agrees with it there
    /// renders the same fragments with the same templates.
    public var reads: ContextReads

    public init(
        fragments: [PresentationSlot: String], expandedHeight: Double? = nil, lockScreenHeight: Double? = nil,
        reads: ContextReads = .everything
    ) {
        self.fragments = fragments
        self.expandedHeight = expandedHeight
        self.lockScreenHeight = lockScreenHeight
        self.reads = reads
    }

    public subscript(slot: PresentationSlot) -> String { self.fragments[slot] ?? "" }
}

/// PR-8: markup that makes a control. Templates for compact and minimal slots must not contain
/// it; values inserted by templates are escaped, so only template text can add controls.
func containsControlMarkup(_ source: String) -> Bool {
    let lowered = source.lowercased()
    return ["<button", "<input", "<select", "<textarea", "<form", "data-action"].contains { lowered.contains($0) }
}
