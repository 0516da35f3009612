/// One iPhone model of the catalog (DOMAIN.md PR-5), with its geometry in points.
///
/// Apple publishes island widths for every Dynamic Island model but compact sizes and Lock
/// Screen widths only for the 393×852 and 430×932 screens; the others are derived and flagged
/// in ``derived`` so the document never passes an inference off as Apple's number.
public struct DeviceModel: Sendable, Hashable {
    public let id: String
    public let screenWidth: Double
    public let screenHeight: Double
    public let hasDynamicIsland: Bool
    /// LA-17: whether the model has an Always-On display (the locked Lock Screen stays dimmed).
    public let hasAlwaysOnDisplay: Bool
    /// The iOS version the model shipped with: the oldest `iosVersion` a device of it may have.
    public let firstIOS: IOSVersion
    /// Width of one compact side (leading or trailing); `nil` without an island.
    public let compactSideWidth: Double?
    /// Width of the island in compact and minimal modes; `nil` without an island.
    public let islandWidth: Double?
    /// Width of the expanded island; `nil` without an island.
    public let expandedWidth: Double?
    public let lockScreenWidth: Double
    /// Names of the geometry fields that are derived rather than published by Apple.
    public let derived: [String]

    /// PR-5 constants shared by every model.
    public static let cornerRadius = 44.0
    public static let islandHeight = 36.67
    public static let cameraGap = 125.34
    public static let minimalWidthRange = 36.67...45.0
    public static let presentationHeightRange = 84.0...160.0
    public static let lockScreenMargin = 14.0

    /// The default model of `device.upsert`.
    public static let defaultID = "iphone-15-pro"

    /// The model named `id`, or `nil` when the catalog has none.
    public static func named(_ id: String) -> DeviceModel? {
        self.catalog.first { $0.id == id }
    }

    /// Every model, sorted by id.
    ///
    /// Screens are Apple's published point sizes (pixels ÷ 3). Island widths come from Apple's
    /// table up to the iPhone 16 Pro Max; the iPhone 17 family reuses the 16 Pro's and 16 Pro
    /// Max's screens and island. Derived values, flagged in `derived`: a compact side is
    /// (island width − camera gap) ÷ 2; the Lock Screen width of a screen without a row leaves
    /// the margins of the published screen nearest in width (11 pt a side on 390 pt, as on 393);
    /// iPhone Air (420 pt) takes the 17 Pro's island and its 15.5 pt margins.
    public static let catalog: [DeviceModel] =
        ([("iphone-14-pro", true, IOSVersion(16, 0)), ("iphone-15", false, IOSVersion(17, 0)),
         ("iphone-15-pro", true, IOSVersion(17, 0)), ("iphone-16", false, IOSVersion(18, 0))]
            .map { small($0.0, alwaysOn: $0.1, firstIOS: $0.2) }
        + [("iphone-14-pro-max", true, IOSVersion(16, 0)), ("iphone-15-plus", false, IOSVersion(17, 0)),
           ("iphone-15-pro-max", true, IOSVersion(17, 0)), ("iphone-16-plus", false, IOSVersion(18, 0))]
            .map { large($0.0, alwaysOn: $0.1, firstIOS: $0.2) }
        + [("iphone-16-pro", IOSVersion(18, 0)), ("iphone-17", IOSVersion(26, 0)), ("iphone-17-pro", IOSVersion(26, 0))]
            .map { pro($0.0, firstIOS: $0.1) }
        + [("iphone-16-pro-max", IOSVersion(18, 0)), ("iphone-17-pro-max", IOSVersion(26, 0))]
            .map { proMax($0.0, firstIOS: $0.1) }
        + [
            DeviceModel(
                id: "iphone-air", screenWidth: 420, screenHeight: 912, hasDynamicIsland: true, hasAlwaysOnDisplay: true,
                firstIOS: IOSVersion(26, 0), compactSideWidth: 52.33, islandWidth: 230, expandedWidth: 389,
                lockScreenWidth: 389, derived: ["compactSideWidth", "expandedWidth", "islandWidth", "lockScreenWidth"]),
            DeviceModel(
                id: "iphone-16e", screenWidth: 390, screenHeight: 844, hasDynamicIsland: false, hasAlwaysOnDisplay: false,
                firstIOS: IOSVersion(18, 3), compactSideWidth: nil, islandWidth: nil, expandedWidth: nil,
                lockScreenWidth: 368, derived: ["lockScreenWidth"]),
            DeviceModel(
                id: "iphone-se-3", screenWidth: 375, screenHeight: 667, hasDynamicIsland: false, hasAlwaysOnDisplay: false,
                firstIOS: IOSVersion(15, 4), compactSideWidth: nil, islandWidth: nil, expandedWidth: nil,
                lockScreenWidth: 353, derived: ["lockScreenWidth"]),
        ]).sorted { $0.id < $1.id }

    private static func small(_ id: String, alwaysOn: Bool, firstIOS: IOSVersion) -> DeviceModel {
        DeviceModel(
            id: id, screenWidth: 393, screenHeight: 852, hasDynamicIsland: true, hasAlwaysOnDisplay: alwaysOn,
            firstIOS: firstIOS, compactSideWidth: 52.33, islandWidth: 230, expandedWidth: 371, lockScreenWidth: 371,
            derived: [])
    }

    private static func large(_ id: String, alwaysOn: Bool, firstIOS: IOSVersion) -> DeviceModel {
        DeviceModel(
            id: id, screenWidth: 430, screenHeight: 932, hasDynamicIsland: true, hasAlwaysOnDisplay: alwaysOn,
            firstIOS: firstIOS, compactSideWidth: 62.33, islandWidth: 250, expandedWidth: 408, lockScreenWidth: 408,
            derived: [])
    }

    private static func pro(_ id: String, firstIOS: IOSVersion) -> DeviceModel {
        DeviceModel(
            id: id, screenWidth: 402, screenHeight: 874, hasDynamicIsland: true, hasAlwaysOnDisplay: true,
            firstIOS: firstIOS, compactSideWidth: 52.33, islandWidth: 230, expandedWidth: 371, lockScreenWidth: 371,
            derived: ["compactSideWidth", "lockScreenWidth"])
    }

    private static func proMax(_ id: String, firstIOS: IOSVersion) -> DeviceModel {
        DeviceModel(
            id: id, screenWidth: 440, screenHeight: 956, hasDynamicIsland: true, hasAlwaysOnDisplay: true,
            firstIOS: firstIOS, compactSideWidth: 62.33, islandWidth: 250, expandedWidth: 408, lockScreenWidth: 408,
            derived: ["compactSideWidth", "lockScreenWidth"])
    }

    /// The `geometry` object of a device in the state document.
    var geometryJSON: JSONValue {
        var object: JSONObject = [
            "cornerRadius": .number(Self.cornerRadius),
            "lockScreenWidth": .number(self.lockScreenWidth),
            "lockScreenMargin": .number(Self.lockScreenMargin),
            "presentationHeight": ["min": .number(84), "max": .number(160)],
            "derived": .array(self.derived.map { .string($0) }),
        ]
        if let side = self.compactSideWidth, let island = self.islandWidth, let expanded = self.expandedWidth {
            object["compactSide"] = ["width": .number(side), "height": .number(Self.islandHeight)]
            object["islandWidth"] = .number(island)
            object["expandedWidth"] = .number(expanded)
            object["cameraGap"] = .number(Self.cameraGap)
            object["minimalWidth"] = ["min": .number(36.67), "max": .number(45)]
        }
        return .object(object)
    }
}
