import IsletCore
import Testing

@Suite struct JSONParserTests {
    let parser = JSONParser()

    @Test("parses every JSON type and re-encodes it canonically")
    func roundTrip() throws {
        let text = #" { "b" : [1, -2.5, 1e3, true, false, null], "a": "x\ny\u00e9\ud83d\ude00", "c": {} } "#
        let value = try parser.parse(text)
        #expect(value.encodedString == #"{"a":"x\nyé😀","b":[1,-2.5,1000,true,false,null],"c":{}}"#)
        #expect(try parser.parse(value.encoded) == value)
    }

    @Test("object equality ignores member order and encoding sorts keys")
    func keyOrder() throws {
        let a = try parser.parse(#"{"z":1,"a":2}"#)
        let b = try parser.parse(#"{"a":2,"z":1}"#)
        #expect(a == b)
        #expect(a.encoded == b.encoded)
    }

    @Test(
        "rejects malformed text with invalid_json",
        arguments: [
            "", "   ", "{", "[1,]", "{\"a\":1,}", "01", "-", "1.", "1e", ".5", "+1", "nul", "truex",
            "\"unterminated", "\"bad \\x escape\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"",
            "\"\\ud800\\u0041\"", "{\"a\" 1}", "{1:2}", "[1 2]", "1e400", "-1e400", "\"tab\there\"", "[] []",
            "{\"a\":1,\"a\":2}",
        ])
    func rejectsMalformed(text: String) {
        #expect(throws: APIError.invalidJSON) { try parser.parse(text) }
    }

    @Test("rejects invalid UTF-8 inside strings")
    func rejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect(throws: APIError.invalidJSON) { try parser.parse(bytes) }
        let overlong: [UInt8] = [0x22, 0xC0, 0xAF, 0x22]
        #expect(throws: APIError.invalidJSON) { try parser.parse(overlong) }
        let surrogate: [UInt8] = [0x22, 0xED, 0xA0, 0x80, 0x22]
        #expect(throws: APIError.invalidJSON) { try parser.parse(surrogate) }
    }

    @Test("a repeated key is refused and named, also the last of 20,000 (found in one pass, not n²)")
    func repeatedKey() throws {
        let many = (0..<20_000).map { "\"k\($0)\":0" }.joined(separator: ",")
        let text = "{" + many + ",\"k7\":1}"
        let error = try #require(throws: APIError.self) { try JSONParser().parse(text) }
        #expect(error.code == .invalidJSON)
        #expect(error.message.contains("\"k7\" appears twice"))
        #expect(try JSONParser(duplicateKeys: .keepLast).parse(text)["k7"] == 1)
    }

    @Test("limits nesting depth and says so")
    func depthLimit() throws {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        let error = #expect(throws: APIError.self) { try parser.parse(deep) }
        #expect(error?.message.contains("nesting") == true)
        let fine = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try parser.parse(fine) }
    }

    @Test("keepLast policy keeps the last of repeated keys")
    func keepLast() throws {
        let value = try JSONParser(duplicateKeys: .keepLast).parse(#"{"op":"add","op":"remove"}"#)
        #expect(value["op"] == "remove")
    }

    @Test("error messages give the byte offset")
    func offsets() {
        let error = #expect(throws: APIError.self) { try parser.parse("[1, x]") }
        #expect(error?.message.contains("byte 4") == true)
    }

    @Test("numbers: integers exact, large and fractional values round-trip")
    func numbers() throws {
        #expect(try parser.parse("9007199254740991") == .number(9_007_199_254_740_991))
        #expect(try parser.parse("-0").encodedString == "0")
        #expect(try parser.parse("0.1").encodedString == "0.1")
        #expect(try parser.parse("1E+2").encodedString == "100")
        #expect(try parser.parse("12345678901234567890").encodedString == "12345678901234567890")
        #expect(try parser.parse("1e-7") == .number(1e-7))
    }
}
