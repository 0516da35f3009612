import IsletCore

extension BuiltInPresentation {
    /// A game score whose play-by-play collapses at halftime (seed 000).
    /// `SportsScoreAttributes { homeTeam, awayTeam, league }`, state `homeScore`, `awayScore`,
    /// `period`, `clock`, `halftime` (or period `HT`), `plays` [string].
    static let sportsScore = BuiltInPresentation(
        attributesType: "SportsScoreAttributes",
        templates: [
            .compactLeading: #"<span class="islet-team">{{attributes.homeTeam}}</span> <b>{{state.homeScore}}</b>"#,
            .compactTrailing: #"<b>{{state.awayScore}}</b> <span class="islet-team">{{attributes.awayTeam}}</span>"#,
            .minimal: #"<span class="islet-score">{{state.homeScore}}–{{state.awayScore}}</span>"#,
            .expandedLeading: #"<span class="islet-team">{{attributes.homeTeam}}</span> <b>{{state.homeScore}}</b>"#,
            .expandedTrailing: #"<b>{{state.awayScore}}</b> <span class="islet-team">{{attributes.awayTeam}}</span>"#,
            .expandedCenter: #"<span class="islet-period">{{view.periodText}}</span>"#,
            .expandedBottom: plays,
            .lockScreen:
                #"<section class="islet-game" data-halftime="{{view.halftime}}"><p class="islet-league">{{attributes.league}}</p><h1>{{attributes.homeTeam}} {{state.homeScore}} – {{state.awayScore}} {{attributes.awayTeam}}</h1><p class="islet-period">{{view.periodText}}</p>"#
                + plays + "</section>",
            .expandedHeight: #"{{#view.halftime}}84{{/view.halftime}}{{^view.halftime}}160{{/view.halftime}}"#,
            .lockScreenHeight: #"{{#view.halftime}}84{{/view.halftime}}{{^view.halftime}}160{{/view.halftime}}"#,
        ],
        reads: ["state.period", "state.halftime", "state.clock", "state.plays"],
        view: { context in
            let period = context.at("state.period").map(displayText) ?? ""
            let halftime = context.at("state.halftime")?.boolValue == true || ["HT", "Halftime"].contains(period)
            let clock = context.at("state.clock").map(displayText)
            let allPlays = context.at("state.plays")?.arrayValue ?? []
            let text = halftime ? "Halftime" : [period, clock ?? ""].filter { !$0.isEmpty }.joined(separator: " · ")
            let view: JSONValue = [
                "halftime": .bool(halftime), "periodText": .string(text),
                "recentPlays": .array(allPlays.suffix(3).map { ["text": .string(displayText($0))] }),
            ]
            return view
        })

    private static let plays =
        #"{{^view.halftime}}<ol class="islet-plays">{{#view.recentPlays}}<li>{{text}}</li>{{/view.recentPlays}}</ol>{{/view.halftime}}"#
}
