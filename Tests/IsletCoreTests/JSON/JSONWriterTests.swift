import IsletTestSupport
import Testing

@testable import IsletCore

/// The writer's shortcuts agree with its full form.
@Suite struct JSONWriterTests {
    static func randomValue(_ random: inout SplitMix64, depth: Int = 0) -> JSONValue {
        switch Int.random(in: 0..<(depth < 3 ? 8 : 5), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2:
            return .number(
                [0, -0.0, 7, -12, 1e15, 9_007_199_254_740_994, 0.1, -2.5e-8, 1e300][
                    Int.random(in: 0..<9, using: &random)])
        case 3, 4:
            return .string(["", "plain", "quote \" and \\ back", "tab\t\n\r\u{8}\u{c}", "\u{1}\u{1f}", "é日本🙂"][
                Int.random(in: 0..<6, using: &random)])
        case 5:
            return .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in Self.randomValue(&random, depth: depth + 1) })
        default:
            var object = JSONObject()
            for key in ["a", "b\"", "ç", "d/e~"] where Bool.random(using: &random) {
                object[key] = Self.randomValue(&random, depth: depth + 1)
            }
            return .object(object)
        }
    }

    @Test("encodedCount is the length of the encoding", arguments: 0..<4)
    func encodedCount(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let value = Self.randomValue(&random)
            #expect(value.encodedCount == value.encoded.count, "\(value)")
        }
    }

    @Test("pointers are written as their escaped string form")
    func pointers() {
        for pointer in [JSONPointer.root, "/a/b", "/a~1b/c~0d", "/x/\"q\"/é", "/devices/d1/scene/lockScreen/activities/12"]
        as [JSONPointer] {
            var writer = JSONWriter()
            writer.write(pointer: pointer)
            var reference = JSONWriter()
            reference.write(string: pointer.description)
            #expect(writer.bytes == reference.bytes)
        }
    }
}
