import IsletCore
import Testing

@Suite struct JSONPointerTests {
    let document: JSONValue = ["foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "m~n": 8, " ": 7]

    @Test(
        "resolves the RFC 6901 section 5 examples",
        arguments: [
            ("/foo/0", "bar" as JSONValue), ("", nil), ("/", 0), ("/a~1b", 1), ("/c%d", 2), ("/m~0n", 8),
            ("/ ", 7),
        ] as [(String, JSONValue?)])
    func rfcExamples(text: String, expected: JSONValue?) throws {
        let pointer = try JSONPointer(parsing: text)
        let value = document[pointer]
        #expect(value == (expected ?? document))
        #expect(pointer.description == text)
    }

    @Test("the array a pointer goes through is the part before its first canonical index token")
    func arrayGoneThrough() throws {
        #expect(try JSONPointer(parsing: "/d/list/0/x").arrayGoneThrough == JSONPointer(tokens: ["d", "list"]))
        #expect(try JSONPointer(parsing: "/12").arrayGoneThrough == .root)
        for path in ["/d/list", "/d/007", "/d/-", "/d/1a", ""] {
            #expect(try JSONPointer(parsing: path).arrayGoneThrough == nil, "\(path)")
        }
    }

    @Test("escapes ~ before / so that ~01 means the key ~1")
    func escapeOrdering() throws {
        let pointer = try JSONPointer(parsing: "/~01")
        #expect(pointer.tokens == ["~1"])
        #expect(JSONPointer(tokens: ["~1", "a/b"]).description == "/~01/a~1b")
    }

    @Test("rejects pointers without a leading slash or with a bad escape", arguments: ["a", "/~2", "/a~"])
    func rejects(text: String) {
        #expect(throws: APIError.invalidArgument) { try JSONPointer(parsing: text) }
    }

    @Test("array indexes are canonical decimals only")
    func arrayIndexes() {
        #expect(arrayIndex("0") == 0)
        #expect(arrayIndex("12") == 12)
        #expect(arrayIndex("01") == nil)
        #expect(arrayIndex("1e0") == nil)
        #expect(arrayIndex("-") == nil)
        #expect(arrayIndex("") == nil)
        #expect(document["/foo/01" as JSONPointer] == nil)
    }

    @Test("containment and nesting of errors under a prefix")
    func containment() {
        let field: JSONPointer = "/commands/2/content"
        #expect(field.isWithin("/commands"))
        #expect(!JSONPointer("/commandsX").isWithin("/commands"))
        let error = APIError(.invalidArgument, "bad", field: "/content/state").nested(under: "/commands/3")
        #expect(error.field == "/commands/3/content/state")
        #expect(error.json == ["code": "invalid_argument", "message": "bad", "field": "/commands/3/content/state"])
    }
}
