/// WidgetKit's families on iPhone (WK-1) and where each may appear.
///
/// `systemExtraLarge` exists only on iPad and Mac, so it is refused here.
public enum WidgetFamily: String, Sendable, Hashable, CaseIterable {
    case systemSmall, systemMedium, systemLarge
    case accessoryCircular, accessoryRectangular, accessoryInline

    /// WK-1: accessory families go on the Lock Screen only; system families on the Home Screen.
    public var isAccessory: Bool {
        switch self {
        case .accessoryCircular, .accessoryRectangular, .accessoryInline: true
        case .systemSmall, .systemMedium, .systemLarge: false
        }
    }

    /// WK-9: `accessoryInline` and `accessoryCircular` offer one tap target; the others honour
    /// `Link` targets as well as the widget URL.
    public var hasSingleTapTarget: Bool { self == .accessoryInline || self == .accessoryCircular }

    /// Interactive controls (buttons and toggles) exist in every family but `accessoryInline`.
    public var allowsControls: Bool { self != .accessoryInline }

    /// WK-1: `systemSmall` also shows in StandBy (two side by side).
    public var showsInStandBy: Bool { self == .systemSmall }
}

/// A widget's size in points on one screen (WK-1).
public struct WidgetSize: Sendable, Hashable {
    public var width: Double
    public var height: Double
    /// `true` when the screen has no row in Apple's table and the size is taken from the
    /// nearest published screen (the iPhone 16 Pro models).
    public var derived: Bool

    var json: JSONValue {
        ["derived": .bool(self.derived), "height": .number(self.height), "width": .number(self.width)]
    }
}

extension DeviceModel {
    /// Apple's widget size table (HIG, "iPhone widget sizes"), by screen width × height, widest
    /// first, in the order small, medium, large, circular, rectangular, inline. (320×568, whose
    /// accessory sizes Apple lists as N/A, is no catalog model's screen.)
    private static let widgetSizeTable: [(screen: (Double, Double), sizes: [(Double, Double)])] = [
        ((430, 932), [(170, 170), (364, 170), (364, 382), (76, 76), (172, 76), (257, 26)]),
        ((428, 926), [(170, 170), (364, 170), (364, 382), (76, 76), (172, 76), (257, 26)]),
        ((414, 896), [(169, 169), (360, 169), (360, 379), (76, 76), (160, 72), (248, 26)]),
        ((414, 736), [(159, 159), (348, 157), (348, 357), (76, 76), (170, 76), (248, 26)]),
        ((393, 852), [(158, 158), (338, 158), (338, 354), (72, 72), (160, 72), (234, 26)]),
        ((390, 844), [(158, 158), (338, 158), (338, 354), (72, 72), (160, 72), (234, 26)]),
        ((375, 812), [(155, 155), (329, 155), (329, 345), (72, 72), (157, 72), (225, 26)]),
        ((375, 667), [(148, 148), (321, 148), (321, 324), (68, 68), (153, 68), (225, 26)]),
        ((360, 780), [(155, 155), (329, 155), (329, 345), (72, 72), (157, 72), (225, 26)]),
    ]

    /// The size of a widget of `family` on this model's screen (WK-1). Screens without a row
    /// (402×874, 420×912, 440×956) use the row of the widest published screen that is not
    /// wider (the taller of two equally wide ones), and say so.
    public func widgetSize(_ family: WidgetFamily) -> WidgetSize {
        let exact = Self.widgetSizeTable.first { $0.screen == (self.screenWidth, self.screenHeight) }
        let row =
            exact ?? Self.widgetSizeTable.first { $0.screen.0 <= self.screenWidth } ?? Self.widgetSizeTable.last!
        let index = WidgetFamily.allCases.firstIndex(of: family)!
        let (width, height) = row.sizes[index]
        return WidgetSize(width: width, height: height, derived: exact == nil)
    }
}
