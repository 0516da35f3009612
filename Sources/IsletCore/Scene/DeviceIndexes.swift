internal import HashTreeCollections

/// LA-15: every device ranks only what it shows, so each has its own ``PresentationIndex``.
///
/// An activity belongs to one device and updates that device's index alone; a change costs what
/// it cost when every device shared one index, however many devices there are. Activities without
/// a device (requested while the simulation had none, as revision-1 logs could) show on every
/// device, as they did then: they are kept in `unbound` and in every device's index, and a new
/// device starts from a copy of `unbound`.
struct DeviceIndexes: Sendable {
    private(set) var byDevice: TreeDictionary<String, PresentationIndex> = [:]
    private(set) var unbound = PresentationIndex()

    /// The index of `device` (empty for a device that does not exist).
    subscript(device: String) -> PresentationIndex { self.byDevice[device] ?? PresentationIndex() }

    /// A new device shows the unbound activities.
    mutating func addDevice(_ id: String) {
        if self.byDevice[id] == nil { self.byDevice[id] = self.unbound }
    }

    mutating func removeDevice(_ id: String) { self.byDevice[id] = nil }

    /// Moves an activity of `device` (`nil`: unbound) from its old membership to its new one in
    /// every index that shows it, noting in `changes` which rankings of which device changed and
    /// the Lock Screen moves.
    /// - Complexity: one index for a device's activity; every device's for an unbound one.
    mutating func update(
        device: String?, from old: PresentationIndex.Membership, to new: PresentationIndex.Membership,
        changes: inout [String: SceneChange]
    ) {
        guard old != new else { return }
        let targets: [String]
        if let device {
            guard self.byDevice[device] != nil else { return }
            targets = [device]
        } else {
            _ = self.unbound.update(from: old, to: new)
            targets = self.byDevice.keys.sorted()
        }
        for id in targets {
            var change = changes[id] ?? SceneChange()
            guard let ranks = self.byDevice[id]?.update(from: old, to: new, recording: &change.lockScreenMoves)
            else { continue }
            if ranks.lockScreen { change.lockScreen = true }
            if ranks.island { change.island = true }
            if let moves = change.lockScreenMoves, moves.count > 64 { change.lockScreenMoves = nil }
            changes[id] = change
        }
    }
}

/// What a revision changed in one device's rankings.
struct SceneChange: Sendable {
    /// The Lock Screen list changed.
    var lockScreen = false
    /// The island candidates changed (or what hides them, LA-16).
    var island = false
    /// The Lock Screen moves, in order; `nil` once there are too many to be worth replaying
    /// (the scene then replaces the list).
    var lockScreenMoves: [PresentationIndex.LockScreenMove]? = []
    /// The Lock Screen list's operations relative to `…/scene/lockScreen/activities`, when the
    /// moves were replayed (set at the end of the revision).
    var lockScreenOps: [PatchOperation]?
}
