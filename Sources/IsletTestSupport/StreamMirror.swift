public import IsletCore

/// A stream client's view of the state, built exactly as docs/API.md tells clients to: one
/// value per subscription from its `snapshot`, then every `patch` applied in order.
///
/// Rules: an operation applies to each subscription whose path is the operation's path or an
/// ancestor of it, with the path made relative to the subscription; at the subscription path
/// itself, `add` and `replace` set the value and `remove` makes it absent (`null`). A patch with
/// `sub` (a resumed subscription's missed patches) applies to that subscription only; a live
/// patch does not apply to a subscription through an array element. Patches
/// never apply to a subscription before its `snapshot` (or `subscribed`) arrived. `resync`
/// means fresh snapshots follow (until then the subscriptions take no patches).
public struct StreamMirror: Sendable {
    public struct Subscription: Sendable, Equatable {
        public var path: JSONPointer
        /// The value, or nil when the path does not exist.
        public var value: JSONValue?
        /// True once a snapshot (or `subscribed`) arrived.
        public var isSynced: Bool
    }

    public private(set) var subscriptions: [String: Subscription] = [:]
    /// The highest revision seen in a snapshot or patch.
    public private(set) var rev: UInt64 = 0
    /// How many patches arrived, and their revisions in order.
    public private(set) var patchRevs: [UInt64] = []
    public private(set) var resyncs: [String] = []

    public init() {}

    /// Declares a subscription the client asked for.
    public mutating func expect(_ id: String, path: JSONPointer) {
        self.subscriptions[id] = Subscription(path: path, value: nil, isSynced: false)
    }

    /// Declares a subscription resumed with `since`: it continues from the value it had then.
    public mutating func resume(_ id: String, path: JSONPointer, value: JSONValue?) {
        self.subscriptions[id] = Subscription(path: path, value: value, isSynced: false)
    }

    /// The value of a subscription now.
    public func value(of id: String) -> JSONValue? { self.subscriptions[id]?.value }

    /// Applies one server message.
    /// - Throws: `TestClientError` when a patch does not apply (the stream broke its contract).
    public mutating func apply(_ message: JSONValue) throws {
        switch message["type"]?.stringValue {
        case "snapshot":
            guard let id = message["sub"]?.stringValue else { throw TestClientError("snapshot without sub") }
            let path = try JSONPointer(parsing: message["path"]?.stringValue ?? "")
            // `null` stands for an absent value too; kept as null (nothing applies inside it).
            self.subscriptions[id] = Subscription(path: path, value: message["value"] ?? .null, isSynced: true)
            self.rev = max(self.rev, UInt64(message["rev"]?.numberValue ?? 0))
        case "subscribed":
            guard let id = message["sub"]?.stringValue else { throw TestClientError("subscribed without sub") }
            self.subscriptions[id]?.isSynced = true
        case "patch":
            let rev = UInt64(message["rev"]?.numberValue ?? 0)
            let ops = try [PatchOperation](json: message["ops"] ?? [])
            let only = message["sub"]?.stringValue
            // A subscription whose snapshot has not arrived yet gets nothing: the snapshot will
            // be at this revision or a later one.
            for (id, sub) in self.subscriptions
            where sub.isSynced && (only == nil ? sub.path.arrayGoneThrough == nil : only == id) {
                var value = sub.value
                for op in ops where op.path.isWithin(sub.path) {
                    do { value = try Self.apply(op, to: value, at: sub.path, rev: rev) } catch {
                        throw TestClientError("subscription \(id) (synced: \(sub.isSynced)): \(error)")
                    }
                }
                self.subscriptions[id]?.value = value
            }
            if only == nil {
                self.patchRevs.append(rev)
                self.rev = max(self.rev, rev)
            }
        case "resync":
            self.resyncs.append(message["reason"]?.stringValue ?? "")
            for id in self.subscriptions.keys { self.subscriptions[id]?.isSynced = false }
        case "unsubscribed":
            if let id = message["sub"]?.stringValue { self.subscriptions[id] = nil }
        default:
            break
        }
    }

    private static func apply(
        _ op: PatchOperation, to value: JSONValue?, at base: JSONPointer, rev: UInt64
    ) throws
        -> JSONValue?
    {
        let relative = JSONPointer(tokens: Array(op.path.tokens.dropFirst(base.tokens.count)))
        if relative.isRoot {
            return op.kind == .remove ? nil : op.value
        }
        guard var document = value else {
            throw TestClientError("rev \(rev): \(op) under \(base), which does not exist")
        }
        var relativeOp = op
        relativeOp.path = relative
        do { try document.apply(relativeOp) } catch {
            throw TestClientError("rev \(rev): \(op) does not apply under \(base): \(error)")
        }
        return document
    }
}
