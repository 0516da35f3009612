import IsletCore

/// A presentation that ships with Islet for a demo app's attributes type.
///
/// `prepare` adds a `view` object of derived values (labels, steps, formatted durations) to the
/// context, because Mustache cannot compare or format. It must be pure.
struct BuiltInPresentation: Sendable {
    let attributesType: String
    let templates: [PresentationSlot: String]
    let prepare: @Sendable (JSONValue) -> JSONValue

    static let all: [BuiltInPresentation] = [.coffeeDelivery, .rideShare, .sportsScore, .timer, .workout]
}

/// `m:ss`, or `h:mm:ss` from one hour.
func formatDuration(_ seconds: Double) -> String {
    let total = max(0, Int(seconds.rounded(.down)))
    let (hours, minutes, secs) = (total / 3600, total % 3600 / 60, total % 60)
    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return hours > 0 ? "\(hours):\(two(minutes)):\(two(secs))" : "\(minutes):\(two(secs))"
}

extension JSONValue {
    /// The member at a dotted path of object keys (`state.driver.name`), or `nil`.
    func at(_ path: String) -> JSONValue? {
        var current: JSONValue? = self
        let utf8 = path.utf8
        var start = utf8.startIndex
        var index = start
        while true {
            if index == utf8.endIndex || utf8[index] == UInt8(ascii: ".") {
                if index != start { current = current?[String(Substring(utf8[start..<index]))] }
                if index == utf8.endIndex { break }
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        return current == .null ? nil : current
    }
}
