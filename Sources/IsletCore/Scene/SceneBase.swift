internal import HashTreeCollections

/// Which activities the island shows before device specifics (PR-1, PR-2, PR-3).
struct IslandPick: Sendable, Hashable {
    /// The compact activity, or the attached minimal one.
    var primary: RankKey?
    /// The detached minimal activity, when candidates come from two or more apps.
    var secondary: RankKey?
}

/// Each device's island pick, recomputed at the end of a revision only for the devices whose
/// rankings (or foreground app, LA-16) changed.
struct SceneBase: Sendable {
    var islands: TreeDictionary<String, IslandPick> = [:]

    subscript(device: String) -> IslandPick { self.islands[device] ?? IslandPick() }
}

extension Engine {
    /// PR-2/PR-3 on one device: the best candidate, and the best candidate of another app if
    /// there is one. LA-16: the app in the foreground on the device shows nothing in its island.
    ///
    /// Policy `score`: highest score, then earliest start, first is attached. Policy `start`:
    /// each app's best (by score), then the two apps whose best started first, earliest attached.
    /// - Complexity: `score` walks the ranking until a second app appears (at most the first
    ///   app's candidates, and the foreground app's, 5 each by default); `start` is O(candidates).
    func islandPick(on deviceID: String) -> IslandPick {
        let hidden = self.devices[deviceID]?.foregroundApp
        let candidates = self.indexes[deviceID].island
        switch self.configuration.minimalPolicy {
        case .score:
            var pick = IslandPick()
            candidates.forEach { key in
                if key.app == hidden { return true }
                guard let primary = pick.primary else {
                    pick.primary = key
                    return true
                }
                if key.app != primary.app {
                    pick.secondary = key
                    return false
                }
                return true
            }
            return pick
        case .start:
            var bestPerApp: [String: RankKey] = [:]
            candidates.forEach { key in
                if key.app != hidden, bestPerApp[key.app] == nil { bestPerApp[key.app] = key }
                return true
            }
            let ordered = bestPerApp.values.sorted { ($0.startedAt, $0.startOrder) < ($1.startedAt, $1.startOrder) }
            return IslandPick(primary: ordered.first, secondary: ordered.dropFirst().first)
        }
    }

    /// Recomputes the island picks and Lock Screen operations of the devices the revision
    /// touched; a device whose pick changed is rebuilt.
    mutating func refreshSceneBase() {
        for id in self.changes.scenes.keys.sorted() {
            guard let change = self.changes.scenes[id] else { continue }
            if change.island {
                let pick = self.islandPick(on: id)
                if pick != self.sceneBase[id] {
                    self.sceneBase.islands[id] = pick
                    self.changes.devices.insert(id)
                }
            }
            if change.lockScreen {
                // The list itself is not stored (see `VirtualMember`); its operations are the moves.
                self.changes.scenes[id]?.lockScreenOps = change.lockScreenMoves.map(operations(replaying:))
            }
        }
    }
}

/// Lock Screen moves as patch operations (paths relative to the list).
/// - Complexity: O(moves).
private func operations(replaying moves: [PresentationIndex.LockScreenMove]) -> [PatchOperation] {
    var operations: [PatchOperation] = []
    operations.reserveCapacity(moves.count)
    for move in moves {
        switch move {
        case .removed(let position):
            operations.append(.remove(JSONPointer(tokens: [String(position)])))
        case .inserted(let id, let position):
            operations.append(.add(JSONPointer(tokens: [String(position)]), .string(id)))
        }
    }
    return operations
}
