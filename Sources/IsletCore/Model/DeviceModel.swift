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
    public static let catalog: [DeviceModel] =
        (["iphone-14-pro", "iphone-15", "iphone-15-pro", "iphone-16"].map { small($0) }
        + ["iphone-14-pro-max", "iphone-15-plus", "iphone-15-pro-max", "iphone-16-plus"].map { large($0) }
        + [
            DeviceModel(
                id: "iphone-16-pro", screenWidth: 402, screenHeight: 874, hasDynamicIsland: true,
                compactSideWidth: 52.33, islandWidth: 230, expandedWidth: 371, lockScreenWidth: 371,
                derived: ["compactSideWidth", "lockScreenWidth"]),
            DeviceModel(
                id: "iphone-16-pro-max", screenWidth: 440, screenHeight: 956, hasDynamicIsland: true,
                compactSideWidth: 62.33, islandWidth: 250, expandedWidth: 408, lockScreenWidth: 408,
                derived: ["compactSideWidth", "lockScreenWidth"]),
            DeviceModel(
                id: "iphone-se-3", screenWidth: 375, screenHeight: 667, hasDynamicIsland: false,
                compactSideWidth: nil, islandWidth: nil, expandedWidth: nil, lockScreenWidth: 353,
                derived: ["lockScreenWidth"]),
        ]).sorted { $0.id < $1.id }

    private static func small(_ id: String) -> DeviceModel {
        DeviceModel(
            id: id, screenWidth: 393, screenHeight: 852, hasDynamicIsland: true, compactSideWidth: 52.33,
            islandWidth: 230, expandedWidth: 371, lockScreenWidth: 371, derived: [])
    }

    private static func large(_ id: String) -> DeviceModel {
        DeviceModel(
            id: id, screenWidth: 430, screenHeight: 932, hasDynamicIsland: true, compactSideWidth: 62.33,
            islandWidth: 250, expandedWidth: 408, lockScreenWidth: 408, derived: [])
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
