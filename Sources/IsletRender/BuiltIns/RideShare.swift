import IsletCore

extension BuiltInPresentation {
    /// Ride share: compact while searching for a driver, taller once one is found (seed 000).
    /// `RideShareAttributes { pickup, destination }`, state `status`, `driver {name, car,
    /// plate}`, `etaMinutes`.
    static let rideShare = BuiltInPresentation(
        attributesType: "RideShareAttributes",
        templates: [
            .compactLeading: #"<span class="islet-icon" aria-label="Ride">🚗</span>"#,
            .compactTrailing:
                #"{{#view.searching}}<span class="islet-searching">…</span>{{/view.searching}}{{^view.searching}}<span class="islet-eta">{{state.etaMinutes}} min</span>{{/view.searching}}"#,
            .minimal: #"<span class="islet-icon" aria-label="Ride">🚗</span>"#,
            .expandedLeading: #"<span class="islet-status">{{view.statusText}}</span>"#,
            .expandedTrailing:
                #"{{#state.etaMinutes}}<span class="islet-eta">{{state.etaMinutes}} min</span>{{/state.etaMinutes}}"#,
            .expandedCenter: #"{{#state.driver}}<strong class="islet-driver">{{name}}</strong>{{/state.driver}}"#,
            .expandedBottom: driver,
            .lockScreen: #"<section class="islet-ride" data-found="{{view.found}}"><h1>{{view.statusText}}</h1>"#
                + driver + "</section>",
            .expandedHeight: #"{{#view.found}}160{{/view.found}}{{^view.found}}84{{/view.found}}"#,
            .lockScreenHeight: #"{{#view.found}}160{{/view.found}}{{^view.found}}84{{/view.found}}"#,
        ],
        reads: ["state.driver", "state.status"],
        view: { context in
            let found = context.at("state.driver")?.objectValue != nil
            let status = context.at("state.status")?.stringValue ?? (found ? "driverFound" : "searching")
            let text: String
            switch status {
            case "arriving": text = "Your driver is arriving"
            case "onTrip": text = "On the way to your destination"
            case "completed": text = "You have arrived"
            default: text = found ? "Driver found" : "Finding a driver"
            }
            let view: JSONValue = ["found": .bool(found), "searching": .bool(!found), "statusText": .string(text)]
            return view
        })

    private static let driver =
        #"{{#state.driver}}<p class="islet-car">{{car}} · {{plate}}</p><p class="islet-route">{{attributes.pickup}} → {{attributes.destination}}</p>{{/state.driver}}{{^state.driver}}<p class="islet-searching">Looking for a driver near {{attributes.pickup}}…</p>{{/state.driver}}"#
}
