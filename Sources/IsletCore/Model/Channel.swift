/// A broadcast channel (iOS 18): created by the app's server through APNs channel management,
/// joined by activities started with `pushType: {"channel": id}` or a push-to-start carrying
/// `input-push-channel`, and updated by one broadcast for every subscriber.
///
/// Apple assigns the id (base64; the engine derives it from a counter, so replay gives the same
/// one) and fixes the message storage policy at creation: `0` keeps nothing, `1` keeps the most
/// recent broadcast for at most 8 hours for activities that subscribe later.
struct Channel: Sendable, Hashable {
    var id: String
    var app: String
    var storagePolicy: StoragePolicy
    var createdAt: Instant
    /// Broadcasts received on this channel.
    var broadcasts = 0
    /// The latest broadcast, for the document (and, under policy 1, for late subscribers).
    var last: LastBroadcast?

    enum StoragePolicy: Int, Sendable, Hashable, CaseIterable {
        case noMessageStored = 0
        case mostRecentMessageStored = 1
    }

    /// At most 8 hours of storage, shorter through `apns-expiration` (UN-CHAN).
    static let maxStorageSeconds = 8.0 * 3600
}

/// The latest broadcast on a channel.
struct LastBroadcast: Sendable, Hashable {
    /// The `channel.broadcast` command as received (replayed to late subscribers).
    var command: JSONValue
    var event: String
    var at: Instant
    var priority: Int
    var apnsId: String?
    /// Under policy 1: until when a new subscriber receives it; `nil` when nothing is stored.
    var storedUntil: Instant?
}
