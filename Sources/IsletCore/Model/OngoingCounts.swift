internal import HashTreeCollections

/// LA-4's counts: pending, active and stale activities per device, and per app on each device
/// (LA-15: the limits are a phone's). Activities without a device count under `""`.
struct OngoingCounts: Sendable {
    private var byDevice: TreeDictionary<String, Int> = [:]
    private var byDeviceApp: TreeDictionary<DeviceApp, Int> = [:]

    struct DeviceApp: Sendable, Hashable {
        var device: String
        var app: String
    }

    func count(device: String?) -> Int { self.byDevice[device ?? ""] ?? 0 }

    func count(device: String?, app: String) -> Int { self.byDeviceApp[DeviceApp(device: device ?? "", app: app)] ?? 0 }

    mutating func adjust(device: String?, app: String, by delta: Int) {
        let device = device ?? ""
        let total = (self.byDevice[device] ?? 0) + delta
        self.byDevice[device] = total == 0 ? nil : total
        let key = DeviceApp(device: device, app: app)
        let perApp = (self.byDeviceApp[key] ?? 0) + delta
        self.byDeviceApp[key] = perApp == 0 ? nil : perApp
    }
}
