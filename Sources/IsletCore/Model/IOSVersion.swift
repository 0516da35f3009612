/// A device's iOS version (`device.upsert … "iosVersion"`), compared by major then minor.
///
/// Features arrived in particular versions (``Feature``); a device on an older version refuses
/// them as iOS does, so a harness can check what its users on older phones get.
public struct IOSVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let major: Int
    public let minor: Int

    public init(_ major: Int, _ minor: Int) {
        self.major = major
        self.minor = minor
    }

    /// Parses `"17"`, `"17.2"` or `"17.2.1"` (the patch number changes no feature and is dropped).
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count),
            parts.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
            let major = Int(parts[0]), let minor = parts.count > 1 ? Int(parts[1]) : 0
        else { return nil }
        self.init(major, minor)
    }

    /// The newest version the catalog knows, every device's default.
    public static let newest = IOSVersion(27, 0)

    public var description: String { "\(self.major).\(self.minor)" }

    public static func < (lhs: IOSVersion, rhs: IOSVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}

/// Features a device's iOS version gates, with the version each arrived in.
public enum Feature: String, Sendable, CaseIterable {
    /// Live Activities themselves (ActivityKit).
    case liveActivities
    /// Starting an activity by APNs (`pushToStartTokenUpdates`).
    case pushToStart
    /// StandBy (a charging iPhone on its side).
    case standby
    /// Broadcast channel subscriptions (`pushType: .channel(id)`).
    case broadcast
    /// WK-8: tinted Home Screens and the accented rendering mode.
    case accentedWidgets
    /// `Activity.request(…, start:)`: activities scheduled to start later.
    case scheduledStart

    public var introduced: IOSVersion {
        switch self {
        case .liveActivities: IOSVersion(16, 1)
        case .pushToStart: IOSVersion(17, 2)
        case .standby: IOSVersion(17, 0)
        case .broadcast: IOSVersion(18, 0)
        case .accentedWidgets: IOSVersion(18, 0)
        case .scheduledStart: IOSVersion(26, 0)
        }
    }

    /// What the refusal says, as ActivityKit's and WidgetKit's documentation name the feature.
    var name: String {
        switch self {
        case .liveActivities: "Live Activities"
        case .pushToStart: "push-to-start"
        case .standby: "StandBy"
        case .broadcast: "broadcast push notifications"
        case .accentedWidgets: "tinted Home Screens"
        case .scheduledStart: "scheduled Live Activities"
        }
    }
}
