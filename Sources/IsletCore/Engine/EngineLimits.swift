/// Hard bounds on what one simulation may hold, so no sequence of accepted commands can grow a
/// world without end. They are not configuration (`config.set` cannot raise them): each is far
/// above what a real phone, or the benchmark worlds, need. Over one, the command that would
/// cross it is refused with `limit_exceeded` and changes nothing.
public enum EngineLimits {
    /// Apps (`app.upsert`).
    public static let apps = 10_000
    /// Devices (`device.upsert`).
    public static let devices = 1000
    /// Widgets (`widget.upsert`), over all devices (the engine benchmark holds 100,000).
    public static let widgets = 1_000_000
    /// Templates per app (`template.put`: targets × slots).
    public static let templatesPerApp = 512
    /// Broadcast channels per app: APNs' own limit per app and environment (UN-CHAN).
    public static let channelsPerApp = 10_000
    /// APNs provider keys (`apns.keyPut`); a team may hold only a few.
    public static let providerKeys = 100
    /// Retired push tokens (AP-4) kept answering 410; past it the oldest is forgotten (it then
    /// answers 400 `BadDeviceToken`, as an unknown token does).
    public static let retiredTokens = 100_000
    /// Throttled priority-10 pushes waiting per app (LA-11, AP-9); past it the oldest update goes.
    public static let throttledPerApp = 10_000
    /// Deferred low-priority pushes waiting per app (LA-11); past it the oldest update goes.
    public static let deferredPerApp = 10_000

    /// The refusal of a command that would cross a bound; `name` labels it in `/metrics`.
    static func refuse(_ what: String, _ limit: Int, name: String, field: JSONPointer) -> APIError {
        var error = APIError(.limitExceeded, "a simulation holds at most \(limit) \(what)", field: field)
        error.limit = name
        return error
    }
}

/// The bounds the engine keeps by letting go of the oldest rather than by refusing: the
/// `EngineLimits` values (tests lower them to reach them quickly).
struct DiscardBounds: Sendable {
    var retiredTokens = EngineLimits.retiredTokens
    var throttledPerApp = EngineLimits.throttledPerApp
    var deferredPerApp = EngineLimits.deferredPerApp
}
