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
