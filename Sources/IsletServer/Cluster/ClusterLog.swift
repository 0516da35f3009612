import IsletCore
import IsletTransport

/// The layout of a cluster's shared log in Redis: which keys hold what, how an entry is written
/// and read back, and the scripts that keep each step atomic. Pure: no connection here.
///
/// - `islet:control`: the stream of simulation creations and deletions, in the one order every
///   node applies them; `default` is its entry `0-1`, so exactly one node creates it.
/// - `islet:log:<epoch>`: a world's stream of batches and ticks (`epoch`: the world's history
///   name, new at every create, so a deleted world's keys never meet a new one of the same id).
/// - `islet:snap:<epoch>` (and `…:prev`, the one before): a snapshot hash
///   `{entry, seq, wall, payload}`; the genesis snapshot of a world has entry `0-0`.
/// - `islet:lease:<epoch>`: which node holds the world's clock, with a TTL.
/// - `…:seq`: the counter that numbers a stream's entries `1, 2, 3…` (field `s`), so a node
///   notices a gap (its position was trimmed away) instead of skipping entries silently.
enum ClusterLog {
    static let control = "islet:control"
    static func stream(_ epoch: String) -> String { "islet:log:\(epoch)" }
    static func snapshot(_ epoch: String) -> String { "islet:snap:\(epoch)" }
    static func previousSnapshot(_ epoch: String) -> String { "islet:snap:\(epoch):prev" }
    static func lease(_ epoch: String) -> String { "islet:lease:\(epoch)" }
    static func sequence(_ stream: String) -> String { "\(stream):seq" }

    /// Every key of a world, for deletion.
    static func keys(of epoch: String) -> [String] {
        [stream(epoch), sequence(stream(epoch)), snapshot(epoch), previousSnapshot(epoch), lease(epoch)]
    }

    /// Numbers and appends entries, in order, in one call: `EVAL append 2|3 <stream> <seq> [<snap>] <n>`,
    /// then for each entry its number of field and value arguments and those arguments. A
    /// world's append names its snapshot as a third key and is refused (`ISLET_GONE`) when it is not
    /// there: the world was deleted (its keys with it), and an append must not bring them back.
    static let appendScript = """
        if KEYS[3] and redis.call('EXISTS', KEYS[3]) == 0 then return redis.error_reply('ISLET_GONE') end
        local position = 2
        local ids = {}
        for entry = 1, tonumber(ARGV[1]) do
          local count = tonumber(ARGV[position])
          local fields = {'s', redis.call('INCR', KEYS[2])}
          for index = 1, count do fields[#fields + 1] = ARGV[position + index] end
          position = position + count + 1
          ids[entry] = redis.call('XADD', KEYS[1], '*', unpack(fields))
        end
        return ids
        """

    /// The arguments of `appendScript` after its keys, for these entries' fields.
    static func appendArguments(_ entries: [[[UInt8]]]) -> [[UInt8]] {
        var arguments = [Array(String(entries.count).utf8)]
        for fields in entries { arguments += [Array(String(fields.count).utf8)] + fields }
        return arguments
    }

    /// Renews the leases this node holds and takes the free ones: `EVAL lease N <keys…> <node> <ttl ms>`,
    /// answering 1 (held) or 0 per key.
    static let leaseScript = """
        local held = {}
        for i, key in ipairs(KEYS) do
          local owner = redis.call('GET', key)
          if owner == ARGV[1] then
            redis.call('PEXPIRE', key, ARGV[2])
            held[i] = 1
          elseif not owner then
            redis.call('SET', key, ARGV[1], 'PX', ARGV[2])
            held[i] = 1
          else
            held[i] = 0
          end
        end
        return held
        """

    /// The last entry id of each stream (`0-0` for an empty one): `EVAL last N <streams…>`.
    static let lastEntriesScript = """
        local last = {}
        for i, key in ipairs(KEYS) do
          local entries = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
          last[i] = entries[1] and entries[1][1] or '0-0'
        end
        return last
        """

    /// Gives up the leases this node holds (a graceful stop): `EVAL release N <keys…> <node>`.
    static let releaseScript = """
        for i, key in ipairs(KEYS) do
          if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
        end
        return 1
        """

    /// Keeps the previous snapshot, stores the new one and trims the stream below the previous
    /// one: `EVAL snapshot 3 <snap> <prev> <stream> <entry> <seq> <wall> <payload>`. A world has
    /// a snapshot from its creation on (its genesis): none means it was deleted, and a snapshot
    /// encoded meanwhile must not bring its key back (`ISLET_GONE`).
    static let snapshotScript = """
        if redis.call('EXISTS', KEYS[1]) == 0 then return redis.error_reply('ISLET_GONE') end
        redis.call('RENAME', KEYS[1], KEYS[2])
        redis.call('HSET', KEYS[1], 'entry', ARGV[1], 'seq', ARGV[2], 'wall', ARGV[3], 'payload', ARGV[4])
        local floor = redis.call('HGET', KEYS[2], 'entry')
        if floor and floor ~= '0-0' then redis.call('XTRIM', KEYS[3], 'MINID', floor) end
        return 1
        """

    /// An entry id (`<ms>-<seq>`) as a pair that orders like Redis orders ids.
    static func order(_ id: String) -> (UInt64, UInt64) {
        let parts = id.split(separator: "-")
        return (parts.first.flatMap { UInt64($0) } ?? 0, parts.count > 1 ? UInt64(parts[1]) ?? 0 : 0)
    }

    /// A position in a stream: the entry id and its number.
    struct Cursor: Equatable {
        var entry: String
        var seq: UInt64
        static let start = Cursor(entry: "0-0", seq: 0)
    }

    /// One entry as `XREAD` returns it: its id and its fields.
    struct Entry {
        var id: String
        var fields: [String: [UInt8]]

        func text(_ name: String) -> String? { self.fields[name].map { String(decoding: $0, as: UTF8.self) } }
        func integer(_ name: String) -> Int64? { self.text(name).flatMap { Int64($0) } }
        var seq: UInt64? { self.text("s").flatMap { UInt64($0) } }
    }

    /// The fields of a world's entry (`k` batch or tick, `w` wall ms, `p` the batch, `n` node, `r` request).
    static func fields(_ cause: RevisionRecord.Cause, wall: Instant, node: String, request: UInt64) -> [[UInt8]] {
        var fields: [[UInt8]] = [
            Array("w".utf8), Array(String(wall.millisecondsSinceEpoch).utf8), Array("n".utf8), Array(node.utf8),
            Array("r".utf8), Array(String(request).utf8),
        ]
        switch cause {
        case .commands(let commands):
            fields += [Array("k".utf8), Array("b".utf8), Array("p".utf8), JSONValue.array(commands).encoded]
        case .tick:
            fields += [Array("k".utf8), Array("t".utf8)]
        }
        return fields
    }

    /// This node's request number in an entry it proposed.
    static func request(_ entry: Entry, node: String) -> UInt64? {
        entry.text("n") == node ? entry.text("r").flatMap { UInt64($0) } : nil
    }

    /// A world's entry as the engine applies it; `request` is set when `node` proposed it.
    static func orderedEntry(_ entry: Entry, node: String) throws(APIError) -> OrderedEntry {
        guard let wall = entry.integer("w") else { throw APIError(.internal, "entry \(entry.id) has no wall instant") }
        let cause: RevisionRecord.Cause
        switch entry.text("k") {
        case "b":
            // An empty batch is a batch: every node's engine refuses it alike (invalid_argument).
            let value = try JSONParser.stored.parse(entry.fields["p"] ?? [])
            guard let commands = value.arrayValue else { throw APIError(.internal, "entry \(entry.id) holds no batch") }
            cause = .commands(commands)
        case "t": cause = .tick
        default: throw APIError(.internal, "entry \(entry.id) is neither a batch nor a tick")
        }
        return OrderedEntry(
            cause: cause, wall: Instant(millisecondsSinceEpoch: wall), request: Self.request(entry, node: node))
    }

    /// A creation or deletion in the control stream.
    enum Change {
        case create(id: String, epoch: String, created: Instant, tokens: SimulationTokens?)
        case delete(id: String, epoch: String)
    }

    static func fields(_ change: Change, node: String, request: UInt64) -> [[UInt8]] {
        var fields: [(String, String)] = [("n", node), ("r", String(request))]
        switch change {
        case .create(let id, let epoch, let created, let tokens):
            fields += [("op", "create"), ("id", id), ("epoch", epoch), ("created", String(created.millisecondsSinceEpoch))]
            if let tokens { fields += [("admin", tokens.admin), ("viewer", tokens.viewer)] }
        case .delete(let id, let epoch):
            fields += [("op", "delete"), ("id", id), ("epoch", epoch)]
        }
        return fields.flatMap { [Array($0.0.utf8), Array($0.1.utf8)] }
    }

    static func change(_ entry: Entry) throws(APIError) -> Change {
        guard let id = entry.text("id"), let epoch = entry.text("epoch") else {
            throw APIError(.internal, "control entry \(entry.id) names no simulation")
        }
        switch entry.text("op") {
        case "create":
            let tokens = entry.text("admin").flatMap { admin in
                entry.text("viewer").map { SimulationTokens(admin: admin, viewer: $0) }
            }
            return .create(
                id: id, epoch: epoch, created: Instant(millisecondsSinceEpoch: entry.integer("created") ?? 0), tokens: tokens)
        case "delete": return .delete(id: id, epoch: epoch)
        default: throw APIError(.internal, "control entry \(entry.id) is neither a create nor a delete")
        }
    }

    /// The entries of an `XREAD` reply, by stream key.
    static func streams(_ reply: RedisReply) -> [String: [Entry]] {
        var result: [String: [Entry]] = [:]
        for stream in reply.elements ?? [] {
            guard let parts = stream.elements, parts.count == 2, let key = parts[0].text else { continue }
            result[key] = (parts[1].elements ?? []).compactMap(Self.entry)
        }
        return result
    }

    /// One `[id, [field, value, …]]` of an `XREAD` or `XRANGE` reply.
    static func entry(_ reply: RedisReply) -> Entry? {
        guard let parts = reply.elements, parts.count == 2, let id = parts[0].text, let values = parts[1].elements else {
            return nil
        }
        return Entry(id: id, fields: self.fields(of: values))
    }

    /// A `[field, value, …]` reply (an entry's fields, `HGETALL`) as a dictionary.
    static func fields(of values: [RedisReply]) -> [String: [UInt8]] {
        var fields: [String: [UInt8]] = [:]
        var index = 0
        while index + 1 < values.count {
            if let name = values[index].text, let value = values[index + 1].bytes { fields[name] = value }
            index += 2
        }
        return fields
    }
}
