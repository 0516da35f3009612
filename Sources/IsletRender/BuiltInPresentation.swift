import IsletCore

/// A presentation that ships with Islet for a demo app's attributes type.
///
/// `view` derives values (labels, steps, formatted durations) that the templates find under
/// `view`, because Mustache cannot compare or format. It must be pure, and it sees only the
/// context paths in `reads`, so the engine knows what a new context must change to render
/// differently (``ContextReads``).
struct BuiltInPresentation: Sendable {
    let attributesType: String
    let templates: [PresentationSlot: String]
    /// The dotted context paths `view` reads.
    let reads: [String]
    let view: @Sendable (DeclaredContext) -> JSONValue

    static let all: [BuiltInPresentation] = [.coffeeDelivery, .rideShare, .sportsScore, .timer, .workout]
}

/// The render context as a built-in presentation's `view` sees it: only the paths it declared.
struct DeclaredContext {
    private let context: JSONValue
    private let paths: [String]

    init(context: JSONValue, paths: [String]) {
        self.context = context
        self.paths = paths
    }

    /// The value at a declared path; reading another is a bug in the presentation (the
    /// built-in tests render every presentation).
    func at(_ path: String) -> JSONValue? {
        precondition(self.paths.contains(path), "a built-in presentation reads \(path) without declaring it")
        return self.context.at(path)
    }
}

extension ContextReads {
    /// Each path's keys looked up, its last one read whole.
    mutating func read(paths: [String]) {
        for path in paths {
            let keys = path.split(separator: ".").map(String.init)
            for key in keys.dropLast() { self.readMembers(of: key) }
            if let last = keys.last { self.readWhole(last) }
        }
    }
}

/// A number from content brought within ±1e15, where converting it to an integer cannot trap:
/// content may hold any JSON number (up to ±1.8e308), and past the bound the text stops growing.
func boundedForInteger(_ value: Double) -> Double { min(max(value, -1e15), 1e15) }

/// `m:ss`, or `h:mm:ss` from one hour.
func formatDuration(_ seconds: Double) -> String {
    let total = Int(max(0, boundedForInteger(seconds)).rounded(.down))
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
