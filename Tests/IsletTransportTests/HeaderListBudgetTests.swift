import Testing

@testable import IsletTransport

@Suite("HTTP/2 header list budget")
struct HeaderListBudgetTests {
    @Test("HPACK bomb arithmetic: fields count name + value + 32, and the budget stays refused once over")
    func budget() {
        var budget = HeaderListBudget(maxBytes: 100, maxFields: 3)
        let admitted = [(4, 4), (10, 18), (0, 0), (0, 0)].map { budget.admit(nameBytes: $0.0, valueBytes: $0.1) }
        #expect(admitted == [true, true, false, false])  // 40, 100, then 132: over
        #expect(budget.bytes == 132)
        var count = HeaderListBudget(maxBytes: 1 << 20, maxFields: 2)
        let counted = (0..<3).map { _ in count.admit(nameBytes: 1, valueBytes: 1) }
        #expect(counted == [true, true, false])
    }
}

@Suite("HTTP/2 request targets")
struct HTTP2TargetTests {
    @Test("a percent escape is two hexadecimal digits: a sign is not one, and the escape stays as written")
    func percentEscapes() {
        let (path, query) = splitTarget("/v1/devices/a%41%+f%-1b?path=%2Fclock%+2&x=1+2")
        #expect(path == "/v1/devices/aA%+f%-1b")
        #expect(query.map(\.name) == ["path", "x"])
        #expect(query.map(\.value) == ["/clock% 2", "1 2"])
    }
}
