internal import HashTreeCollections

/// Calling the renderer: the context an activity's templates see, and which templates apply.
extension Engine {
    func render(_ activity: Activity) -> RenderedPresentation {
        let target = "activity:" + activity.attributesType
        var templates: [PresentationSlot: any CompiledTemplate] = [:]
        for slot in PresentationSlot.allCases {
            let key = TemplateKey(app: activity.app, target: target, slot: slot.rawValue)
            if let stored = self.templates[key] { templates[slot] = stored.compiled }
        }
        let request = PresentationRenderRequest(
            attributesType: activity.attributesType, templates: templates, context: self.renderContext(activity))
        return self.renderer.render(request)
    }

    /// What templates see. It deliberately holds no "now": fragments change only when the
    /// activity or its app changes, never by the passing of time (countdowns are client-side).
    func renderContext(_ activity: Activity) -> JSONValue {
        let app = self.apps[activity.app]
        var identity = JSONObject()
        if let colors = app?.identity {
            identity["tint"] = colors.tint.map(JSONValue.string)
            identity["background"] = colors.background.map(JSONValue.string)
            identity["foreground"] = colors.foreground.map(JSONValue.string)
            identity["keyline"] = colors.keyline.map(JSONValue.string)
        }
        let details: JSONObject = [
            "activityState": .string(activity.phase.rawValue),
            "attributesType": .string(activity.attributesType),
            "endedAt": date(activity.endedAt),
            "id": .string(activity.id),
            "isEnded": .bool(activity.phase == .ended || activity.phase == .dismissed),
            "isStale": .bool(activity.phase == .stale),
            "relevanceScore": .number(activity.content.relevanceScore),
            "staleDate": date(activity.content.staleDate),
            "startedAt": date(activity.startedAt),
        ]
        let context: JSONObject = [
            "activity": .object(details),
            "alert": activity.alert?.json ?? .null,
            "app": [
                "id": .string(activity.app), "identity": .object(identity), "name": .string(app?.name ?? activity.app),
            ],
            "attributes": .object(activity.attributes),
            "state": .object(activity.content.state),
        ]
        return .object(context)
    }
}
