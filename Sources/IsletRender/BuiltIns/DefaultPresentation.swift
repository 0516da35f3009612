import IsletCore

extension BuiltInPresentation {
    /// The presentation of an attributes type with no template: the content state's keys and
    /// values, sorted by key, so any app shows something truthful at once.
    static let keyValueList = BuiltInPresentation(
        attributesType: "",
        templates: [
            .compactLeading: #"<span class="islet-app">{{app.name}}</span>"#,
            .compactTrailing: #"{{#view.first}}<span class="islet-value">{{value}}</span>{{/view.first}}"#,
            .minimal: #"<span class="islet-initial">{{view.initial}}</span>"#,
            .expandedLeading: #"<span class="islet-app">{{app.name}}</span>"#,
            .expandedTrailing: #"<span class="islet-type">{{activity.attributesType}}</span>"#,
            .expandedCenter: #"{{#view.first}}<strong class="islet-value">{{value}}</strong>{{/view.first}}"#,
            .expandedBottom:
                #"<dl class="islet-state">{{#stateEntries}}<dt>{{key}}</dt><dd>{{value}}</dd>{{/stateEntries}}</dl>"#,
            .lockScreen:
                #"<section class="islet-default"><h1>{{app.name}}</h1><dl class="islet-state">{{#stateEntries}}<dt>{{key}}</dt><dd>{{value}}</dd>{{/stateEntries}}</dl>{{#activity.isStale}}<p class="islet-stale">Out of date</p>{{/activity.isStale}}</section>"#,
        ],
        reads: ["state", "app.name"],
        view: { context in
            let state = context.at("state")?.objectValue ?? JSONObject()
            let name = context.at("app.name")?.stringValue ?? ""
            var view: JSONObject = ["initial": .string(name.first.map { String($0).uppercased() } ?? "")]
            if let first = state.members.first {
                view["first"] = ["key": .string(first.key), "value": .string(displayText(first.value))]
            }
            return .object(view)
        })
}
