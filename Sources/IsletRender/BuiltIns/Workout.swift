import IsletCore

extension BuiltInPresentation {
    /// A live workout's metrics with pause and end controls (seeds 000, 004).
    /// `WorkoutAttributes { workoutType }`, state `elapsedSeconds`, `distanceMeters`,
    /// `heartRate`, `activeCalories`, `paused`.
    static let workout = BuiltInPresentation(
        attributesType: "WorkoutAttributes",
        templates: [
            .compactLeading: #"<span class="islet-icon" aria-label="Workout">🏃</span>"#,
            .compactTrailing: #"<span class="islet-elapsed">{{view.elapsedText}}</span>"#,
            .minimal: #"<span class="islet-icon" aria-label="Workout">🏃</span>"#,
            .expandedLeading: #"<span class="islet-title">{{attributes.workoutType}}</span>"#,
            .expandedTrailing: #"<span class="islet-elapsed">{{view.elapsedText}}</span>"#,
            .expandedCenter: #"<strong class="islet-distance">{{view.distanceText}}</strong>"#,
            .expandedBottom: metrics + controls,
            .lockScreen:
                #"<section class="islet-workout" data-paused="{{view.paused}}"><h1>{{attributes.workoutType}}</h1><p class="islet-elapsed">{{view.elapsedText}}</p><p class="islet-distance">{{view.distanceText}}</p>"#
                + metrics + controls + "</section>",
            .expandedHeight: "160",
            .lockScreenHeight: "160",
        ],
        reads: ["state.elapsedSeconds", "state.distanceMeters", "state.paused"],
        view: { context in
            let elapsed = context.at("state.elapsedSeconds")?.numberValue ?? 0
            let meters = context.at("state.distanceMeters")?.numberValue ?? 0
            let paused = context.at("state.paused")?.boolValue == true
            let tenths = Int((boundedForInteger(meters) / 100).rounded())
            let view: JSONValue = [
                "elapsedText": .string(formatDuration(elapsed)),
                "distanceText": .string("\(tenths / 10).\(tenths % 10) km"),
                "paused": .bool(paused), "toggleAction": .string(paused ? "resume" : "pause"),
                "toggleLabel": .string(paused ? "Resume" : "Pause"),
            ]
            return view
        })

    private static let metrics =
        #"<dl class="islet-metrics">{{#state.heartRate}}<dt>Heart rate</dt><dd>{{state.heartRate}} bpm</dd>{{/state.heartRate}}{{#state.activeCalories}}<dt>Active</dt><dd>{{state.activeCalories}} kcal</dd>{{/state.activeCalories}}</dl>"#

    private static let controls =
        #"<div class="islet-controls"><button type="button" data-action="{{view.toggleAction}}">{{view.toggleLabel}}</button><button type="button" data-action="end">End</button></div>"#
}
