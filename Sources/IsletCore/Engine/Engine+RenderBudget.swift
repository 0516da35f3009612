internal import HashTreeCollections

/// Where `RenderBudget` is enforced: a template meets the content it will render when either
/// arrives, so no render is ever over budget.
extension TemplateStore {
    /// The app's own templates for an activity type, every slot.
    private func activityTemplates(app: String, type: String) -> [any CompiledTemplate] {
        guard self.hasTemplates(app: app) else { return [] }
        return PresentationSlot.allCases.compactMap {
            self[TemplateKey(app: app, target: "activity:" + type, slot: $0.rawValue)]?.compiled
        }
    }

    /// Checks an activity's attributes, content state and alert (templates read the last alert
    /// under `alert`, its `loc-args` arrays too) against the app's templates for its type. Over
    /// budget with the alert only, the error names `alertField` (`/alert` when the command
    /// carries it; the content's field when it is the activity's last one).
    func checkActivityBudget(
        app: String, type: String, attributes: JSONObject, state: JSONObject, alert: JSONObject?,
        field: JSONPointer, alertField: JSONPointer = "/alert"
    ) throws(APIError) {
        let templates = self.activityTemplates(app: app, type: type)
        guard !templates.isEmpty else { return }
        let content: [JSONValue] = [.object(attributes), .object(state)]
        let rendered = alert.map { content + [.object($0)] } ?? content
        for template in templates where RenderBudget.cost(template, content: rendered) > RenderBudget.maxOutputBytes {
            // Over budget: the content alone, or only with the alert.
            try RenderBudget.check(template, content: content, what: "this content with the \(type) templates", field: field)
            try RenderBudget.check(
                template, content: rendered, what: "this alert with the \(type) templates", field: alertField)
        }
    }

    /// Checks widget content (timeline entries, configuration, placeholder) against the app's
    /// template for the widget's kind.
    func checkWidgetBudget(app: String, kind: String, contents: [JSONObject], field: JSONPointer) throws(APIError) {
        guard self.hasTemplates(app: app),
            let template = self[TemplateKey(app: app, target: "widget:" + kind, slot: "html")]?.compiled
        else { return }
        for content in contents {
            try RenderBudget.check(template, content: [.object(content)], what: "this content with the \(kind) template", field: field)
        }
    }
}

extension Engine {
    /// Checks a template about to be stored against everything it would render now: the app's
    /// activities of its type, or its widgets of its kind.
    func checkRenderBudget(_ template: any CompiledTemplate, app: String, target: String) throws(APIError) {
        if target.hasPrefix("activity:") {
            let type = String(target.dropFirst("activity:".count))
            for id in self.apps[app]?.activities ?? [] {
                guard let activity = self.activities[id], activity.attributesType == type else { continue }
                var content: [JSONValue] = [.object(activity.attributes), .object(activity.content.state)]
                if let alert = activity.alert { content.append(.object(alert.fields)) }
                try RenderBudget.check(
                    template, content: content, what: "this template with activity \(id)'s content", field: "/html")
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
