internal import HashTreeCollections

/// Which activities the island shows before device specifics (PR-1, PR-2, PR-3).
struct IslandPick: Sendable, Hashable {
    /// The compact activity, or the attached minimal one.
    var primary: RankKey?
    /// The detached minimal activity, when candidates come from two or more apps.
    var secondary: RankKey?
}

/// The parts of every device's scene that do not depend on the device, recomputed at the end
/// of a revision only when the rankings changed.
struct SceneBase: Sendable {
    var island = IslandPick()
}

extension Engine {
    /// PR-2/PR-3: the best candidate, and the best candidate of another app if there is one.
    ///
    /// Policy `score`: highest score, then earliest start, first is attached. Policy `start`:
    /// each app's best (by score), then the two apps whose best started first, earliest attached.
    /// - Complexity: `score` walks the ranking until a second app appears (at most the first
    ///   app's candidates, 5 by default); `start` is O(candidates).
    func islandPick() -> IslandPick {
        switch self.configuration.minimalPolicy {
        case .score:
            var pick = IslandPick()
            self.index.island.forEach { key in
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
            self.index.island.forEach { key in
                if bestPerApp[key.app] == nil { bestPerApp[key.app] = key }
                return true
            }
            let ordered = bestPerApp.values.sorted { ($0.startedAt, $0.startOrder) < ($1.startedAt, $1.startOrder) }
            return IslandPick(primary: ordered.first, secondary: ordered.dropFirst().first)
        }
    }

    /// Recomputes the shared scene parts the revision invalidated.
    mutating func refreshSceneBase() {
        if self.changes.island {
            let pick = self.islandPick()
            if pick != self.sceneBase.island {
                self.sceneBase.island = pick
                self.changes.allDevices = true
            }
        }
        if self.changes.lockScreen {
            // The list itself is not stored (see `VirtualMember`); its operations are the moves.
            self.changes.lockScreenOps = self.changes.lockScreenMoves.map(operations(replaying:))
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
