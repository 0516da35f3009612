import IsletTestSupport
import Testing

@testable import IsletCore

/// Numbers keep their exact value through parse and write (AP-8), compare by value, and are
/// written one way: integers in plain digits.
@Suite struct JSONNumberTests {
    let parser = JSONParser.input

    func roundTrip(_ text: String) throws -> String { try self.parser.parse(text).encodedString }

    @Test(
        "integers come back digit for digit, also beyond 2^53 and 2^64",
        arguments: [
            "1795560793900123456", "9007199254740993", "-9007199254740993", "9007199254740992", "-9223372036854775808",
            "9223372036854775807", "18446744073709551615", "18446744073709551616", "18446744073709551617",
            "123456789012345678901234567890", "-100000000000000000000000",
        ])
    func integers(_ text: String) throws {
        #expect(try self.roundTrip(text) == text)
        #expect(try self.roundTrip("[\(text)]") == "[\(text)]")
    }

    @Test("integers are never written with an exponent")
    func noExponent() throws {
        #expect(try self.roundTrip("1e20") == "100000000000000000000")
        #expect(try self.roundTrip("1E+23") == "100000000000000000000000")
        #expect(try self.roundTrip("1.5e300").count == 301)
        #expect(JSONValue.number(1e300).encodedString.count == 301)
        #expect(JSONValue.number(-0x1p70).encodedString == "-1180591620717411303424")
        #expect(JSONValue.number(Double.greatestFiniteMagnitude).encodedString.hasPrefix("17976931348623157"))
        #expect(!JSONValue.number(Double.greatestFiniteMagnitude).encodedString.contains("e"))
    }

    @Test("fractions keep their shortest form, or every digit a Double would drop")
    func fractions() throws {
        #expect(try self.roundTrip("0.1") == "0.1")
        #expect(try self.roundTrip("-2.50") == "-2.5")
        #expect(try self.roundTrip("0.30000000000000004") == "0.30000000000000004")
        #expect(try self.roundTrip("0.10000000000000000001") == "0.10000000000000000001")
        #expect(try self.roundTrip("12345678901234567890.5") == "12345678901234567890.5")
        #expect(try self.roundTrip("1e-7") == "1e-07")
        #expect(try self.roundTrip("1e-400") == "1e-400")
        #expect(try self.roundTrip("-1.25e-400") == "-1.25e-400")
        #expect(try self.roundTrip("0.00012345678901234567891") == "0.00012345678901234567891")
    }

    @Test("-0 is 0, and 1.0, 1e0 and 1 are one value with one encoding")
    func equalValues() throws {
        #expect(try self.roundTrip("-0") == "0")
        #expect(try self.roundTrip("-0.0e5") == "0")
        #expect(try self.parser.parse("-0") == .number(0))
        #expect(try self.parser.parse("1.0") == self.parser.parse("1"))
        #expect(try self.parser.parse("1e0") == .number(1))
        #expect(try self.roundTrip("1.0") == "1")
        let big = try self.parser.parse("9007199254740993")
        #expect(try big == self.parser.parse("9007199254740993.000"))
        #expect(try big == self.parser.parse("90071992547409930e-1"))
        #expect(try big != self.parser.parse("9007199254740992"))
        #expect(big != .number(9_007_199_254_740_992))
        #expect(try Set([big, self.parser.parse("9.007199254740993e15")]).count == 1)
        #expect(try self.parser.parse("1e23") != .number(1e23))
        #expect(try self.parser.parse("99999999999999991611392") == .number(1e23))
    }

    @Test("an unsigned 64-bit integer is read exactly over its whole range; fractions, negatives and larger values are not one")
    func uint64Values() throws {
        func exact(_ text: String) throws -> UInt64? {
            guard case .number(let number) = try self.parser.parse(text) else { return nil }
            return number.uint64Value
        }
        #expect(try exact("0") == 0)
        #expect(try exact("9007199254740993") == 9_007_199_254_740_993)
        #expect(try exact("18446744073709551615") == .max)
        #expect(try exact("1.8446744073709551615e19") == .max)
        #expect(try exact("18446744073709549568") == 18_446_744_073_709_549_568)  // a Double's
        #expect(try exact("18446744073709551616") == nil)
        #expect(try exact("1.5") == nil)
        #expect(try exact("-1") == nil)
        #expect(try exact("1e30") == nil)
    }

    @Test("the engine reads the nearest Double")
    func nearestDouble() throws {
        #expect(try self.parser.parse("1795560793900123456").numberValue == 1_795_560_793_900_123_456)
        #expect(try self.parser.parse("1e-400").numberValue == 0)
        #expect(try self.parser.parse("0.10000000000000000001").numberValue == 0.1)
    }

    @Test("magnitudes beyond a Double's are refused as out of range", arguments: ["1e400", "-1e400", "1e999999999999", "1e999999999999999999999"])
    func outOfRange(_ text: String) {
        let error = #expect(throws: APIError.self) { try self.parser.parse(text) }
        #expect(error?.code == .invalidJSON)
        #expect(error?.message.contains("out of range") == true)
    }

    @Test("zero and tiny values with huge exponents; beyond 17 exponent digits the Double (0), as before")
    func hugeExponents() throws {
        #expect(try self.roundTrip("0e999999999999999999999") == "0")
        #expect(try self.roundTrip("1e-99999999999999999") == "1e-99999999999999999")
        #expect(try self.roundTrip("1e-999999999999999999") == "0")
    }

    @Test("any Double's encoding parses back to the same number, and any exact number's to itself", arguments: 0..<4)
    func roundTripsRandomly(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<2000 {
            let double = Double(bitPattern: random.next())
            guard double.isFinite else { continue }
            let value = JSONValue.number(double)
            #expect(try self.parser.parse(value.encodedString) == value, "\(double)")
            let digits = (0..<Int.random(in: 16...30, using: &random)).map { _ in String(Int.random(in: 0...9, using: &random)) }
            let text = "1" + digits.joined() + (Bool.random(using: &random) ? "" : "e-\(Int.random(in: 0...40, using: &random))")
            let exact = try self.parser.parse(text)
            #expect(try self.parser.parse(exact.encodedString) == exact, "\(text)")
            #expect(exact.encodedCount == exact.encoded.count)
        }
    }

    @Test("encodedCount counts exact numbers too")
    func counts() throws {
        for text in ["1795560793900123456", "1e300", "-18446744073709551616", "1e-400", "0.1", "-0", "42"] {
            let value = try self.parser.parse(text)
            #expect(value.encodedCount == value.encoded.count, "\(text)")
        }
    }
}
