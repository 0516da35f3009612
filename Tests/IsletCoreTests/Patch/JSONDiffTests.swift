import IsletTestSupport
import Testing

@testable import IsletCore

@Suite struct JSONDiffTests {
    @Test("diff gives minimal operations for common changes")
    func minimalOperations() {
        let old: JSONValue = ["a": 1, "b": ["x": true], "list": ["p", "q", "r"], "gone": nil]
        let new: JSONValue = ["a": 2, "b": ["x": true, "y": "new"], "list": ["p", "r"], "added": []]
        let ops = JSONPatch.diff(from: old, to: new, at: "/devices/d1")
        #expect(
            ops.map(\.description) == [
                #"{"op":"replace","path":"/devices/d1/a","value":2}"#,
                #"{"op":"add","path":"/devices/d1/added","value":[]}"#,
                #"{"op":"add","path":"/devices/d1/b/y","value":"new"}"#,
                #"{"op":"remove","path":"/devices/d1/gone"}"#,
                #"{"op":"remove","path":"/devices/d1/list/1"}"#,
            ])
    }

    @Test("test compares numbers by value, exactly beyond 2^53 (RFC 6902 §4.6)")
    func testComparesNumbersByValue() throws {
        let parse = { (text: String) throws -> JSONValue in try JSONParser.input.parse(text) }
        let document = try parse(#"{"n": 1, "big": 9007199254740993}"#)
        for passing in [#"{"op":"test","path":"/n","value":1.0}"#, #"{"op":"test","path":"/big","value":9.007199254740993e15}"#] {
            #expect(try JSONPatch.apply(patch: parse("[\(passing)]"), to: document) == document)
        }
        for failing in [#"{"op":"test","path":"/n","value":1.5}"#, #"{"op":"test","path":"/big","value":9007199254740992}"#] {
            #expect(throws: APIError.self) { try JSONPatch.apply(patch: parse("[\(failing)]"), to: document) }
        }
        let diff = JSONPatch.diff(from: try parse(#"{"big": 9007199254740992}"#), to: document)
        #expect(diff.map(\.description).contains(#"{"op":"replace","path":"/big","value":9007199254740993}"#))
    }

    @Test("keys with / and ~ are escaped in diff paths (RFC 6901)")
    func escaping() throws {
        let ops = JSONPatch.diff(from: ["a/b": 1, "m~n": 1], to: ["a/b": 2, "m~n": 2])
        #expect(ops.map(\.path.description) == ["/a~1b", "/m~0n"])
        #expect(try JSONPatch.apply(ops, to: ["a/b": 1, "m~n": 1]) == ["a/b": 2, "m~n": 2])
    }

    @Test("applying diff(a, b) to a gives b, for random values", arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func roundTrip(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<300 {
            let a = RandomJSON.value(depth: 3, using: &random)
            let b = RandomJSON.mutate(a, using: &random)
            let ops = JSONPatch.diff(from: a, to: b)
            #expect(try JSONPatch.apply(ops, to: a) == b)
            #expect(JSONPatch.diff(from: a, to: a).isEmpty)
        }
    }

    @Test("a patch written as it grows is the encoded list, and decodes to the same operations", arguments: [1, 2, 3] as [UInt64])
    func encodedAsItGrows(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<100 {
            let a = RandomJSON.value(depth: 3, using: &random)
            let b = RandomJSON.mutate(a, using: &random)
            var list: [PatchOperation] = []
            JSONPatch.diff(a, b, "/widgets/w~11", &list)
            // One byte of capacity makes the writer grow; the small result is trimmed to size.
            var patch = EncodedPatch(reservingCapacity: 1)
            JSONPatch.diff(a, b, "/widgets/w~11", &patch)
            #expect(patch.count == list.count)
            let bytes = patch.finish()
            #expect(bytes == list.encoded)
            #expect(try [PatchOperation](decoding: bytes) == list)
            #expect(bytes.capacity <= max(32, 2 * bytes.count), "the allocator rounds tiny arrays up")
        }
        var empty = EncodedPatch(reservingCapacity: 1_024)
        #expect(empty.finish() == Array("[]".utf8))
        #expect(throws: APIError.self) { try [PatchOperation](decoding: Array(#"{"op":"remove"}"#.utf8)) }
        #expect(throws: APIError.self) { try [PatchOperation](decoding: Array(#"[{"op":"remove"}]"#.utf8)) }
    }

    @Test(
        "SS-4: a stack's ranking patched from its rows gives the operations of the diff of its JSON",
        arguments: [1, 2, 3, 4] as [UInt64])
    func rankingRowsPatchAsTheirJSON(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        func value() -> Double { [0, -0.0, 0.25, 0.5, 1, 2.5][Int.random(in: 0..<6, using: &random)] }
        func vector() -> FeatureVector {
            var vector = FeatureVector()
            for feature in RankingFeature.allCases where Bool.random(using: &random) { vector[feature] = value() }
            return vector
        }
        func row(_ position: Int) -> ShownRankingRow {
            let widget = ["w1", "w2", "caf\u{E9}", "cafe\u{301}", "w/~"][Int.random(in: 0..<5, using: &random)]
            let member = RankedMember(
                position: position, eligible: Bool.random(using: &random), features: vector(), contributions: vector(),
                score: value())
            return ShownRankingRow(widget: widget, row: member)
        }
        func edited(_ rows: [ShownRankingRow]) -> [ShownRankingRow] {
            var rows = rows
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                switch Int.random(in: 0..<6, using: &random) {
                case 0: rows.insert(row(rows.count), at: Int.random(in: 0...rows.count, using: &random))
                case 1 where !rows.isEmpty: rows.remove(at: Int.random(in: 0..<rows.count, using: &random))
                case 2 where rows.count > 1: rows.append(rows.removeFirst())
                case 3 where rows.count > 1: rows.insert(rows.removeLast(), at: 0)
                case 4 where !rows.isEmpty:
                    // Only the position changes: the document does not show it.
                    rows[Int.random(in: 0..<rows.count, using: &random)].row.position += 1
                default:
                    if !rows.isEmpty {
                        let index = Int.random(in: 0..<rows.count, using: &random)
                        let fresh = row(index)
                        switch Int.random(in: 0..<4, using: &random) {
                        case 0: rows[index].row.features = fresh.row.features
                        case 1: rows[index].row.score = fresh.row.score
                        case 2: rows[index].row.eligible.toggle()
                        default: rows[index].widget = fresh.widget
                        }
                    }
                }
            }
            return rows
        }
        for _ in 0..<500 {
            let old = (0..<Int.random(in: 0...10, using: &random)).map(row)
            let new = edited(Bool.random(using: &random) ? old : (0..<Int.random(in: 0...10, using: &random)).map(row))
            let path: JSONPointer = "/stacks/s~1/ranking"
            var fromRows: [PatchOperation] = []
            JSONPatch.diff(old, new, path, &fromRows, json: \.json, element: { ShownRankingRow.diff($0, $1, $2, &$3) })
            let fromJSON = JSONPatch.diff(from: .array(old.map(\.json)), to: .array(new.map(\.json)), at: path)
            #expect(fromRows == fromJSON)
            #expect((old == new) == (JSONValue.array(old.map(\.json)) == .array(new.map(\.json))))
        }
    }

    @Test("strings and keys compare by code point, not by canonical equivalence (RFC 6901 §4, RFC 6902 §4.6)")
    func codePointEquality() throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(JSONValue.string(composed) != .string(decomposed))
        let diff = JSONPatch.diff(from: ["name": .string(composed)], to: ["name": .string(decomposed)])
        #expect(diff.map(\.description) == [#"{"op":"replace","path":"/name","value":"cafe\#u{301}"}"#])

        let parse = { (text: String) throws -> JSONValue in try JSONParser.input.parse(text) }
        let both = try parse(#"{"caf\u00e9": 1, "cafe\u0301": 2}"#)
        #expect(both.objectValue?.keys == [decomposed, composed], "two keys; canonically equivalent, so in byte order (e < é)")
        #expect(both[composed] == 1 && both[decomposed] == 2)
        #expect(JSONPatch.diff(from: both, to: both.removingMember(composed)).map(\.description) == [#"{"op":"remove","path":"/caf\#u{E9}"}"#])

        let failing = try parse(#"[{"op":"test","path":"/cafe\u0301","value":1}]"#)
        #expect(throws: APIError.self) { try JSONPatch.apply(patch: failing, to: both) }
        let missing = try parse(#"[{"op":"test","path":"/caf\u00e9","value":1}]"#)
        #expect(throws: APIError.self) { try JSONPatch.apply(patch: missing, to: ["cafe\u{301}": 1]) }
    }
}

/// Random JSON values and small random edits of them, from a seeded generator.
enum RandomJSON {
    static func value(depth: Int, using random: inout SplitMix64) -> JSONValue {
        let kind = depth == 0 ? Int.random(in: 0..<4, using: &random) : Int.random(in: 0..<6, using: &random)
        switch kind {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2: return .number(Double(Int.random(in: -5...5, using: &random)))
        case 3: return .string(["a", "b", "~", "/", "x/y~z"][Int.random(in: 0..<5, using: &random)])
        case 4:
            return .array(
                (0..<Int.random(in: 0..<6, using: &random)).map { _ in value(depth: depth - 1, using: &random) })
        default:
            let keys = ["k", "a/b", "m~n", "z", "", "q"]
            return .object(
                JSONObject(
                    (0..<Int.random(in: 0..<5, using: &random)).map { _ in
                        (keys[Int.random(in: 0..<keys.count, using: &random)], value(depth: depth - 1, using: &random))
                    }))
        }
    }

    static func mutate(_ input: JSONValue, using random: inout SplitMix64) -> JSONValue {
        switch input {
        case .array(var elements):
            switch Int.random(in: 0..<5, using: &random) {
            case 0:
                elements.insert(value(depth: 1, using: &random), at: Int.random(in: 0...elements.count, using: &random))
            case 1 where !elements.isEmpty: elements.remove(at: Int.random(in: 0..<elements.count, using: &random))
            case 2 where !elements.isEmpty:
                let index = Int.random(in: 0..<elements.count, using: &random)
                elements[index] = mutate(elements[index], using: &random)
            case 3 where elements.count > 1:
                let moved = elements.remove(at: 0)
                elements.append(moved)
            default: elements.append(value(depth: 1, using: &random))
            }
            return .array(elements)
        case .object(var object):
            let key = ["k", "a/b", "m~n", "new"][Int.random(in: 0..<4, using: &random)]
            object[key] = Bool.random(using: &random) ? nil : mutate(object[key] ?? .null, using: &random)
            return .object(object)
        default:
            return Bool.random(using: &random) ? value(depth: 2, using: &random) : input
        }
    }
}
