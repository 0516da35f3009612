internal import HashTreeCollections

/// Where `RenderBudget` is enforced: a template meets the content it will render when either
/// arrives, so no render is ever over budget.
extension Engine {
    /// The app's own templates for an activity type, every slot.
    private func activityTemplates(app: String, type: String) -> [any CompiledTemplate] {
        guard self.templates.hasTemplates(app: app) else { return [] }
        return PresentationSlot.allCases.compactMap {
            self.templates[TemplateKey(app: app, target: "activity:" + type, slot: $0.rawValue)]?.compiled
        }
    }

    /// Checks an activity's attributes and content state against the app's templates for its type.
    func checkRenderBudget(app: String, type: String, attributes: JSONObject, state: JSONObject, field: JSONPointer)
        throws(APIError)
    {
        let templates = self.activityTemplates(app: app, type: type)
        guard !templates.isEmpty else { return }
        let content: [JSONValue] = [.object(attributes), .object(state)]
        for template in templates {
            try RenderBudget.check(template, content: content, what: "this content with the \(type) templates", field: field)
        }
    }

    /// Checks widget content (timeline entries, configuration, placeholder) against the app's
    /// template for the widget's kind.
    func checkRenderBudget(app: String, kind: String, contents: [JSONObject], field: JSONPointer) throws(APIError) {
        guard self.templates.hasTemplates(app: app),
            let template = self.templates[TemplateKey(app: app, target: "widget:" + kind, slot: "html")]?.compiled
        else { return }
        for content in contents {
            try RenderBudget.check(template, content: [.object(content)], what: "this content with the \(kind) template", field: field)
        }
    }

    /// Checks a template about to be stored against everything it would render now: the app's
    /// activities of its type, or its widgets of its kind.
    func checkRenderBudget(_ template: any CompiledTemplate, app: String, target: String) throws(APIError) {
        if target.hasPrefix("activity:") {
            let type = String(target.dropFirst("activity:".count))
            for id in self.apps[app]?.activities ?? [] {
                guard let activity = self.activities[id], activity.attributesType == type else { continue }
                try RenderBudget.check(
                    template, content: [.object(activity.attributes), .object(activity.content.state)],
                    what: "this template with activity \(id)'s content", field: "/html")
            }
        } else if target.hasPrefix("widget:") {
            let kind = String(target.dropFirst("widget:".count))
            for id in (self.kindWidgets[app + "/" + kind] ?? []).sorted() {
                guard let widget = self.widgets[id] else { continue }
                let contents = widget.timeline.entries.indices.map { widget.timeline.content(at: $0) }
                for content in contents + [widget.configuration, widget.placeholder] {
                    try RenderBudget.check(
                        template, content: [.object(content)], what: "this template with widget \(id)'s content",
                        field: "/html")
                }
            }
        }
    }
}
