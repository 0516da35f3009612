import IsletCore
import Testing

/// The public RFC 6902 suite (json-patch/json-patch-tests), read from the shared test data.
@Suite struct JSONPatchConformanceTests {
    struct Record: CustomTestStringConvertible, Sendable {
        var file: String
        var index: Int
        var value: JSONValue
        var testDescription: String { "\(self.file)#\(self.index): \(self.value["comment"]?.stringValue ?? "")" }
    }

    /// Every enabled record with a patch, from both files.
    static func records() throws -> [Record] {
        let directory = try TestData.directory("json-patch-tests")
        var records: [Record] = []
        for file in ["tests.json", "spec_tests.json"] {
            let bytes = try TestData.read(directory + "/" + file)
            let value = try JSONParser(duplicateKeys: .keepLast).parse(bytes)
            for (index, record) in (value.arrayValue ?? []).enumerated()
            where record["patch"] != nil && record["disabled"]?.boolValue != true {
                records.append(Record(file: file, index: index, value: record))
            }
        }
        return records
    }

    @Test("the shared test data has both files and enough records")
    func suiteIsPresent() throws {
        let records = try Self.records()
        #expect(records.filter { $0.file == "tests.json" }.count > 80)
        #expect(records.filter { $0.file == "spec_tests.json" }.count > 10)
    }

    @Test("passes every enabled record of json-patch-tests", arguments: try JSONPatchConformanceTests.records())
    func conformance(record: Record) throws {
        let document = try #require(record.value["doc"])
        let patch = try #require(record.value["patch"])
        if let expected = record.value["expected"] {
            let result = try JSONPatch.apply(patch: patch, to: document)
            #expect(result == expected)
        } else if record.value["error"] != nil {
            #expect(throws: APIError.self) { try JSONPatch.apply(patch: patch, to: document) }
        } else {
            _ = try JSONPatch.apply(patch: patch, to: document)
        }
    }
}
