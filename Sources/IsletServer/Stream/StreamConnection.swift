import IsletCore
import IsletTransport

/// The set of live subscription paths of a connection: connections with equal keys receive
/// the same patches, encoded once.
struct SubscriptionKey: Hashable {
    /// Sorted, without duplicates.
    let paths: [JSONPointer]

    init(_ paths: some Sequence<JSONPointer>) { self.paths = Array(Set(paths)).sorted() }

    static let empty = SubscriptionKey([])

    /// Only the root: every operation goes as it is, without parsing the revision's patch.
    var isWholeDocument: Bool { self.paths == [.root] }
}

/// One `/v1/stream` connection's subscriptions and delivery state. Loop-confined.
final class StreamConnection {
    struct Subscription {
        let id: String
        /// The simulation whose document the path points into.
        let simulation: String
        let path: JSONPointer
        /// Receiving patches (its snapshot, or its resume, went out).
        var isLive = false

        /// The array the path goes through (`JSONPointer.arrayGoneThrough`): such a
        /// subscription gets snapshots, not patches (`StreamHub`).
        var array: JSONPointer? { self.path.arrayGoneThrough }
    }

    /// What a subscription waits to be sent before it goes live.
    enum Pending: Equatable {
        case snapshot(sub: String, reason: String?)
        case resume(sub: String, since: ClientMessage.Since)
    }

    let id: ConnectionID
    let principal: Principal
    /// The rate-limit bucket of this connection's commands (its token).
    let rateKey: String
    var subscriptions: [String: Subscription] = [:]
    /// Subscription ids in the order they were made.
    var order: [String] = []
    var pending: [Pending] = []
    /// A `resync` to send (once drained) before the pending snapshots.
    var resyncReason: String?
    /// Over its cap: patches are dropped until the queue drains.
    var dropping = false
    /// Replies (acks, errors, pongs…) that did not fit under the cap, oldest first: each is owed
    /// to a request, so they wait for the queue to drain instead of being dropped.
    var heldReplies: [[UInt8]] = []
    var heldReplyBytes = 0
    /// The live subscription paths in each simulation: its group there.
    var keys: [String: SubscriptionKey] = [:]
    /// The messages of the head of `pending`, built at a published revision and kept while the
    /// queue drains, so a slow reader does not cost a new encoding every loop turn.
    var prepared: (pending: Pending, rev: UInt64, messages: [[UInt8]])?

    init(id: ConnectionID, principal: Principal, rateKey: String) {
        self.id = id
        self.principal = principal
        self.rateKey = rateKey
    }

    /// The simulations this connection has subscriptions in, sorted.
    var simulations: [String] { Array(Set(self.subscriptions.values.map(\.simulation))).sorted() }
}

/// One simulation's side of the stream: its revision history, whether subscribed paths exist,
/// and its groups of connections with equal subscription paths. Loop-confined.
final class SimulationStream {
    let id: String
    let simulation: LiveSimulation
    var groups: [SubscriptionKey: Set<ConnectionID>] = [:]
    /// Live subscriptions through an array element, by connection: subscription id → array.
    var elementSubscriptions: [ConnectionID: [String: JSONPointer]] = [:]
    var presence = PathPresence()
    var history: RevisionHistory

    init(id: String, simulation: LiveSimulation, history: RevisionHistory) {
        self.id = id
        self.simulation = simulation
        self.history = history
    }

    /// Open streams with a live subscription here.
    var subscribers: Int {
        let grouped = self.groups.values.reduce(into: Set<ConnectionID>()) { $0.formUnion($1) }
        return grouped.union(self.elementSubscriptions.keys).count
    }
}

extension StreamConnection.Pending {
    var sub: String {
        switch self {
        case .snapshot(let sub, _), .resume(let sub, _): return sub
        }
    }
}
