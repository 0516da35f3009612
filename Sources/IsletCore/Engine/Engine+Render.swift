internal import HashTreeCollections

/// Calling the renderer: the context an activity's templates see, and which templates apply.
extension Engine {
    /// Renders an activity's fragments again, unless nothing its templates read changed since
    /// they were last rendered (``ContextReads``). Returns whether it rendered.
    mutating func rerender(_ id: String) -> Bool {
        let rendering = self.activities.read(id) { activity -> (RenderedPresentation, context: JSONValue)? in
            let context = self.renderContext(activity)
            if let last = activity.render, let lastContext = activity.renderedContext,
                last.reads.agree(lastContext, context)
            {
                return nil
            }
            return (self.render(activity, context: context), context)
        }
        guard let (rendered, context) = rendering ?? nil else { return false }
        self.activities.modify(id) { activity in
            activity.render = rendered
            activity.renderedFragments = Self.fragmentsJSON(rendered)
            activity.renderedContext = context
        }
        return true
    }

    private func render(_ activity: Activity, context: JSONValue) -> RenderedPresentation {
        var templates: [PresentationSlot: any CompiledTemplate] = [:]
        if self.templates.hasTemplates(app: activity.app) {
            let target = "activity:" + activity.attributesType
            for slot in PresentationSlot.allCases {
                let key = TemplateKey(app: activity.app, target: target, slot: slot.rawValue)
                if let stored = self.templates[key] { templates[slot] = stored.compiled }
            }
        }
        let request = PresentationRenderRequest(
            attributesType: activity.attributesType, templates: templates, context: context)
        return self.renderer.render(request)
    }

    /// What templates see. It deliberately holds no "now": fragments change only when the
    /// activity or its app changes, never by the passing of time (countdowns are client-side).
    func renderContext(_ activity: Activity) -> JSONValue {
        let app = self.apps.renderInfo(activity.app)
        // Members in key order, built once per update to compare with the last context: no
        // dictionary literal (a tuple array mapped to members, then checked for order).
        let details = JSONObject(sortedUniqueMembers: [
            .init(key: "activityState", value: .string(activity.phase.rawValue)),
            .init(key: "attributesType", value: .string(activity.attributesType)),
            .init(key: "endedAt", value: date(activity.endedAt)),
            .init(key: "id", value: .string(activity.id)),
            .init(key: "isEnded", value: .bool(activity.phase == .ended || activity.phase == .dismissed)),
            .init(key: "isStale", value: .bool(activity.phase == .stale)),
            .init(key: "relevanceScore", value: .number(activity.content.relevanceScore)),
            .init(key: "staleDate", value: date(activity.content.staleDate)),
            .init(key: "startedAt", value: date(activity.startedAt)),
        ])
        let appJSON = JSONObject(sortedUniqueMembers: [
            .init(key: "id", value: .string(activity.app)),
            .init(key: "identity", value: app.identity),
            .init(key: "name", value: .string(app.name)),
        ])
        return .object(
            JSONObject(sortedUniqueMembers: [
                .init(key: "activity", value: .object(details)),
                .init(key: "alert", value: activity.alert?.json ?? .null),
                .init(key: "app", value: .object(appJSON)),
                .init(key: "attributes", value: .object(activity.attributes)),
                .init(key: "state", value: .object(activity.content.state)),
            ]))
    }
}

/// Rendering widgets at the end of a revision. The pass holds (persistent, O(1)) copies of what
/// rendering reads, so it can render a widget while the engine changes it in place.
struct WidgetRenderPass {
    let renderer: any PresentationRenderer
    let templates: TemplateStore
    let apps: EntityMap<App>
    let devices: TreeDictionary<String, Device>
    private var appInfo: [String: (name: String, identity: JSONValue)] = [:]
    private var deviceCache: [String: Device?] = [:]

    init(_ engine: Engine) {
        self.renderer = engine.renderer
        self.templates = engine.templates
        self.apps = engine.apps
        self.devices = engine.devices
    }

    /// A device, looked up once per pass.
    mutating func device(_ id: String?) -> Device? {
        guard let id else { return nil }
        if let cached = self.deviceCache[id] { return cached }
        let device = self.devices[id]
        self.deviceCache[id] = device
        return device
    }

    /// The HTML of a widget's shown entry, or of its placeholder with the text redacted (WK-7).
    mutating func html(for widget: Widget) -> String {
        let template =
            self.templates.hasTemplates(app: widget.app)
            ? self.templates[TemplateKey(app: widget.app, target: "widget:" + widget.kind, slot: "html")]?.compiled : nil
        let entry = widget.shownEntry
        let app = self.appInfo[widget.app] ?? self.apps.renderInfo(widget.app)
        self.appInfo[widget.app] = app
        let size = self.device(widget.device).map { $0.model.widgetSize(widget.family).json } ?? .null
        let input = WidgetContextInput(
            id: widget.id, app: widget.app, kind: widget.kind, family: widget.family,
            configuration: widget.configuration, placeholder: widget.placeholder, url: widget.url)
        let request = WidgetRenderRequest(
            kind: widget.kind, family: widget.family, template: template,
            content: entry?.content ?? widget.placeholder, placeholder: entry == nil
        ) { widgetRenderContext(input, entry: entry, app: app, size: size) }
        let html = self.renderer.renderWidget(request)
        return entry == nil ? redactText(html) : html
    }
}

extension EntityMap<App> {
    /// What templates see of an app (`app.name`, `app.identity`), for an activity or a widget;
    /// its id as the name and no colours when there is none. Two fields come out of the box and
    /// the identity's JSON is built outside it: a call on the entity inside the closure copied
    /// the whole app out (every stored property retained).
    func renderInfo(_ id: String) -> (name: String, identity: JSONValue) {
        guard let (name, identity) = self.read(id, { ($0.name, $0.identity) }) else { return (id, .object(JSONObject())) }
        return (name, identity.contextJSON)
    }
}

/// The parts of a widget its template context shows.
struct WidgetContextInput: Sendable {
    var id: String
    var app: String
    var kind: String
    var family: WidgetFamily
    var configuration: JSONObject
    var placeholder: JSONObject
    var url: String?
}

/// What widget templates see. Like activities' context it holds no "now".
func widgetRenderContext(
    _ widget: WidgetContextInput, entry: ShownEntry?, app: (name: String, identity: JSONValue), size: JSONValue
) -> JSONValue {
    let details: JSONObject = [
        "configuration": .object(widget.configuration), "family": .string(widget.family.rawValue),
        "id": .string(widget.id), "kind": .string(widget.kind), "size": size,
        "url": widget.url.map(JSONValue.string) ?? .null,
    ]
    var entryJSON = JSONValue.null
    if let entry {
        let relevance: JSONValue =
            entry.hasRelevance ? ["duration": .number(entry.duration), "score": .number(entry.score)] : .null
        entryJSON = [
            "date": .string(entry.date.rfc3339), "links": entry.links.map(JSONValue.object) ?? .null,
            "relevance": relevance,
        ]
    }
    let context: JSONObject = [
        "app": ["id": .string(widget.app), "identity": app.identity, "name": .string(app.name)],
        "content": .object(entry?.content ?? widget.placeholder),
        "entry": entryJSON,
        "placeholder": .bool(entry == nil),
        "widget": .object(details),
    ]
    return .object(context)
}

extension App.Identity {
    /// The colours templates see under `app.identity`: the ones set, by name.
    var contextJSON: JSONValue {
        var members: [JSONObject.Member] = []
        if let color = self.background { members.append(.init(key: "background", value: .string(color))) }
        if let color = self.foreground { members.append(.init(key: "foreground", value: .string(color))) }
        if let color = self.keyline { members.append(.init(key: "keyline", value: .string(color))) }
        if let color = self.tint { members.append(.init(key: "tint", value: .string(color))) }
        return .object(JSONObject(sortedUniqueMembers: members))
    }
}
