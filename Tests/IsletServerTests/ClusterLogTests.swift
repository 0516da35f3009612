import IsletCore
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletServer

/// The cluster's layout in Redis, without Redis: entries written and read back, the order of
/// entry ids, and the `--cluster` URL.
@Suite("Cluster log layout")
struct ClusterLogTests {
    /// The fields of an entry as `XREAD` returns them: `[id, [field, value, …]]`.
    private func reply(_ id: String, _ fields: [[UInt8]]) -> RedisReply {
        .array([.string(Array(id.utf8)), .array(([Array("s".utf8), Array("7".utf8)] + fields).map { .string($0) })])
    }

    @Test("a batch and a tick read back as proposed; the request number only for the node that proposed it")
    func entries() throws {
        let wall = Instant(millisecondsSinceEpoch: 1_795_334_400_123)
        let batch: [JSONValue] = [["type": "clock.advance", "seconds": 60]]
        let fields = ClusterLog.fields(.commands(batch), wall: wall, node: "a", request: 42)
        let entry = try #require(ClusterLog.entry(self.reply("1-0", fields)))
        #expect(entry.seq == 7)
        let mine = try ClusterLog.orderedEntry(entry, node: "a")
        #expect(mine.cause == .commands(batch) && mine.wall == wall && mine.request == 42)
        #expect(try ClusterLog.orderedEntry(entry, node: "b").request == nil)
        let tick = try #require(ClusterLog.entry(self.reply("1-1", ClusterLog.fields(.tick, wall: wall, node: "a", request: 1))))
        #expect(try ClusterLog.orderedEntry(tick, node: "a").cause == .tick)
    }

    @Test("an entry of an earlier process of the same node id is not this process's: request numbers restart at 1, so a match would answer a new request with an old entry")
    func incarnations() throws {
        let earlier = ClusterNode.incarnation(of: "b")
        let now = ClusterNode.incarnation(of: "b")
        #expect(earlier != now && earlier.hasPrefix("b/") && now.hasPrefix("b/"))
        let fields = ClusterLog.fields(.commands([["type": "clock.advance", "seconds": 1]]), wall: Instant(millisecondsSinceEpoch: 0), node: earlier, request: 1)
        let entry = try #require(ClusterLog.entry(self.reply("1-0", fields)))
        #expect(try ClusterLog.orderedEntry(entry, node: earlier).request == 1)
        #expect(try ClusterLog.orderedEntry(entry, node: now).request == nil)
    }

    @Test("a batch's numbers read back exactly from its Redis record, an integer beyond 2^53 digit for digit (AP-8)")
    func exactNumbers() throws {
        let big = try JSONParser.input.parse("1795560793900123456")
        let batch: [JSONValue] = [["type": "activity.update", "id": "a1", "content": ["state": ["orderId": big]]]]
        let fields = ClusterLog.fields(.commands(batch), wall: Instant(millisecondsSinceEpoch: 1), node: "a", request: 1)
        #expect(fields.contains { String(decoding: $0, as: UTF8.self).contains(#""orderId":1795560793900123456"#) })
        let entry = try #require(ClusterLog.entry(self.reply("1-0", fields)))
        #expect(try ClusterLog.orderedEntry(entry, node: "a").cause == .commands(batch))
    }

    @Test("a creation with tokens and a deletion read back; a malformed entry is an error, not a crash")
    func changes() throws {
        let tokens = SimulationTokens(admin: "a1", viewer: "v1")
        let created = Instant(millisecondsSinceEpoch: 5)
        let fields = ClusterLog.fields(.create(id: "team", epoch: "e1", created: created, tokens: tokens), node: "n", request: 1)
        guard case .create(let id, let epoch, let at, let read) = try ClusterLog.change(#require(ClusterLog.entry(self.reply("2-0", fields))))
        else { Issue.record("not a create"); return }
        #expect(id == "team" && epoch == "e1" && at == created && read == tokens)
        let deletion = ClusterLog.fields(.delete(id: "team", epoch: "e1"), node: "n", request: 2)
        guard case .delete("team", "e1") = try ClusterLog.change(#require(ClusterLog.entry(self.reply("2-1", deletion)))) else {
            Issue.record("not a delete")
            return
        }
        let garbage = try #require(ClusterLog.entry(self.reply("3-0", [Array("k".utf8), Array("b".utf8), Array("w".utf8), Array("1".utf8), Array("p".utf8), Array("[".utf8)])))
        #expect(throws: APIError.self) { try ClusterLog.orderedEntry(garbage, node: "a") }
        #expect(throws: APIError.self) { try ClusterLog.change(garbage) }
    }

    @Test("the append script's arguments: the number of entries, then each entry's field count and fields")
    func appendArguments() {
        let arguments = ClusterLog.appendArguments([[Array("k".utf8), Array("t".utf8)], []]).map { String(decoding: $0, as: UTF8.self) }
        #expect(arguments == ["2", "2", "k", "t", "0"])
    }

    @Test("entry ids order as Redis orders them")
    func order() {
        #expect(ClusterLog.order("10-0") > ClusterLog.order("9-5"))
        #expect(ClusterLog.order("10-2") > ClusterLog.order("10-1"))
        #expect(ClusterLog.order("0-1") > ClusterLog.order("0-0"))
    }

    @Test("--cluster takes redis://HOST[:PORT][/DB] and refuses anything else with a clear error")
    func urls() throws {
        let full = try IsletConfiguration.Cluster(url: "redis://10.0.0.5:6380/3", nodeID: "a")
        #expect(full.host == "10.0.0.5" && full.port == 6380 && full.database == 3)
        let short = try IsletConfiguration.Cluster(url: "redis://cache", nodeID: "a")
        #expect(short.host == "cache" && short.port == 6379 && short.database == 0)
        for bad in ["http://x", "redis://", "redis://h:0", "redis://h:99999", "redis://h/16", "redis://user:pw@h", "redis://h:x"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try IsletConfiguration.Cluster(url: bad, nodeID: "a") }
        }
        var configuration = IsletConfiguration()
        configuration.cluster = IsletConfiguration.Cluster(nodeID: "no spaces please")
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }
}
