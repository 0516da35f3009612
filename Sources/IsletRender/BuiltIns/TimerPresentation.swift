import IsletCore

extension BuiltInPresentation {
    /// A timer showing its remaining time, with pause and cancel controls (seed 000).
    /// `TimerAttributes { name }`, state `endsAt` (date; the client counts down to it),
    /// `paused`, `remainingSeconds`. Controls appear only in expanded and Lock Screen slots (PR-8).
    static let timer = BuiltInPresentation(
        attributesType: "TimerAttributes",
        templates: [
            .compactLeading: #"<span class="islet-icon" aria-label="Timer">⏱</span>"#,
            .compactTrailing: remaining,
            .minimal: #"<span class="islet-icon" aria-label="Timer">⏱</span>"#,
            .expandedLeading: #"<span class="islet-title">{{attributes.name}}</span>"#,
            .expandedTrailing: remaining,
            .expandedCenter: "",
            .expandedBottom: controls,
            .lockScreen: #"<section class="islet-timer"><h1>{{attributes.name}}</h1>"# + remaining + controls
                + "</section>",
            .expandedHeight: "84",
            .lockScreenHeight: "84",
        ],
        reads: ["state.paused", "state.remainingSeconds"],
        view: { context in
            let paused = context.at("state.paused")?.boolValue == true
            let remaining = context.at("state.remainingSeconds")?.numberValue.map(formatDuration) ?? ""
            let view: JSONValue = [
                "remainingText": .string(remaining), "paused": .bool(paused),
                "toggleAction": .string(paused ? "resume" : "pause"),
                "toggleLabel": .string(paused ? "Resume" : "Pause"),
            ]
            return view
        })

    private static let remaining =
        #"<time class="islet-remaining" data-countdown-to="{{state.endsAt}}" data-paused="{{view.paused}}">{{view.remainingText}}</time>"#

    private static let controls =
        #"<div class="islet-controls"><button type="button" data-action="{{view.toggleAction}}">{{view.toggleLabel}}</button><button type="button" data-action="cancel">Cancel</button></div>"#
}
