internal import HashTreeCollections

/// Where an activity ranks among others: highest `relevanceScore` first, ties to the one that
/// started first (PR-2, PR-3, PR-6). The id makes every key unique.
struct RankKey: Sendable, Hashable, Comparable {
    var score: Double
    var startedAt: Instant
    var startOrder: UInt64
    var id: String
    var app: String

    init?(_ activity: borrowing Activity) {
        guard let startedAt = activity.startedAt else { return nil }
        self.score = activity.content.relevanceScore
        self.startedAt = startedAt
        self.startOrder = activity.startOrder
        self.id = activity.id
        self.app = activity.app
    }

    static func < (lhs: RankKey, rhs: RankKey) -> Bool {
        if lhs.score != rhs.score { return lhs.score > rhs.score }
        if lhs.startedAt != rhs.startedAt { return lhs.startedAt < rhs.startedAt }
        if lhs.startOrder != rhs.startOrder { return lhs.startOrder < rhs.startOrder }
        return lhs.id < rhs.id
    }
}

/// The two rankings one device's scene needs, kept up to date as activities change.
///
/// `lockScreen` holds PR-6's members (active, stale, ended-not-dismissed); `island` holds
/// PR-1's candidates (active, stale), including those LA-16 hides while their app is in the
/// foreground (the pick skips them). Each device has its own (``DeviceIndexes``, LA-15).
struct PresentationIndex: Sendable {
    var lockScreen = SortedChunks<RankKey>()
    var island = SortedChunks<RankKey>()

    /// What an activity contributes to the index; equal values mean the scene is unaffected.
    struct Membership: Sendable, Hashable {
        var key: RankKey?
        var onLockScreen: Bool
        var inIsland: Bool

        init(_ activity: borrowing Activity) {
            self.key = RankKey(activity)
            self.onLockScreen = activity.isOnLockScreen
            self.inIsland = activity.isIslandCandidate
        }

        private init() {
            self.key = nil
            self.onLockScreen = false
            self.inIsland = false
        }

        /// A removed (or not yet added) activity's.
        static let absent = Membership()
    }

    /// One change of the Lock Screen order, with its position at the moment it happened, so
    /// that replaying the moves in order turns the old list into the new one.
    enum LockScreenMove: Sendable, Hashable {
        case removed(at: Int)
        case inserted(String, at: Int)
    }

    /// Moves an activity from its old membership to its new one.
    /// - Parameter moves: receives the Lock Screen moves when not `nil` (finding positions
    ///   costs O(n / chunk size), so callers that do not need them pass `nil`).
    /// - Returns: which rankings changed.
    mutating func update(
        from old: Membership, to new: Membership, recording moves: inout [LockScreenMove]?
    ) -> (lockScreen: Bool, island: Bool) {
        guard old != new else { return (false, false) }
        let lockChanged = old.onLockScreen != new.onLockScreen || (new.onLockScreen && old.key != new.key)
        let islandChanged = old.inIsland != new.inIsland || (new.inIsland && old.key != new.key)
        if lockChanged {
            if old.onLockScreen, let key = old.key {
                if moves != nil {
                    if let position = self.lockScreen.position(of: key) {
                        moves?.append(.removed(at: position))
                    } else {
                        moves = nil
                    }
                }
                self.lockScreen.remove(key)
            }
            if new.onLockScreen, let key = new.key {
                self.lockScreen.insert(key)
                if moves != nil {
                    if let position = self.lockScreen.position(of: key) {
                        moves?.append(.inserted(key.id, at: position))
                    } else {
                        moves = nil
                    }
                }
            }
        }
        if islandChanged {
            if old.inIsland, let key = old.key { self.island.remove(key) }
            if new.inIsland, let key = new.key { self.island.insert(key) }
        }
        return (lockChanged, islandChanged)
    }

    /// The same without recording moves.
    mutating func update(from old: Membership, to new: Membership) -> (lockScreen: Bool, island: Bool) {
        var none: [LockScreenMove]? = nil
        return self.update(from: old, to: new, recording: &none)
    }
}
