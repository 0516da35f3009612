import IsletCore

extension BuiltInPresentation {
    /// The coffee delivery of the seeds: received → brewing → on its way
    /// (`CoffeeDeliveryAttributes { coffeeName }`, state `currentStatus`).
    static let coffeeDelivery = BuiltInPresentation(
        attributesType: "CoffeeDeliveryAttributes",
        templates: [
            .compactLeading: #"<span class="islet-icon" aria-label="Coffee">☕</span>"#,
            .compactTrailing: #"<span class="islet-status">{{view.statusText}}</span>"#,
            .minimal: #"<span class="islet-icon" aria-label="Coffee">☕</span>"#,
            .expandedLeading: #"<span class="islet-title">{{attributes.coffeeName}}</span>"#,
            .expandedTrailing: #"<span class="islet-step">{{view.step}}/3</span>"#,
            .expandedCenter: #"<strong class="islet-status">{{view.statusText}}</strong>"#,
            .expandedBottom: #"<p>{{view.statusDetail}}</p>"# + steps,
            .lockScreen:
                #"<section class="islet-coffee" data-step="{{view.step}}" data-tint="{{app.identity.tint}}"><h1>{{attributes.coffeeName}}</h1><p class="islet-status">{{view.statusText}}</p><p>{{view.statusDetail}}</p>"#
                + steps
                + #"{{#activity.isStale}}<p class="islet-stale">Waiting for an update…</p>{{/activity.isStale}}</section>"#,
            .expandedHeight: "160",
            .lockScreenHeight: "160",
        ],
        reads: ["state.currentStatus", "state.status"],
        view: { context in
            let status = (context.at("state.currentStatus") ?? context.at("state.status"))?.stringValue ?? ""
            let (step, text, detail): (Int, String, String)
            switch status {
            case "preparing", "brewing":
                (step, text, detail) = (2, "Brewing", "Our baristas are hard at work brewing up your cup!")
            case "outForDelivery", "onItsWay", "delivering":
                (step, text, detail) = (3, "On its way!", "Get ready, your brew is speeding over to you right now.")
            default:
                (step, text, detail) = (1, "Received", "We've received your order.")
            }
            let view: JSONValue = [
                "step": .number(Double(step)), "statusText": .string(text), "statusDetail": .string(detail),
                "received": .bool(step == 1), "brewing": .bool(step == 2), "onItsWay": .bool(step == 3),
            ]
            return view
        })

    private static let steps =
        #"<ol class="islet-steps"><li{{#view.received}} aria-current="step"{{/view.received}}>Received</li><li{{#view.brewing}} aria-current="step"{{/view.brewing}}>Brewing</li><li{{#view.onItsWay}} aria-current="step"{{/view.onItsWay}}>On its way</li></ol>"#
}
