import Testing

@testable import IsletStore

@Suite("Appending and reading records")
struct CommandLogAppendTests {
    @Test("Appended records read back in order, byte for byte, after reopening")
    func roundTrip() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let written = [
                LogRecord(sequence: 1, instant: -5, kind: .batch, payload: (0...255).map(UInt8.init)),
                LogRecord(sequence: 2, instant: 0, kind: .tick, payload: []),
                LogRecord(sequence: 7, instant: Int64.max, kind: .batch, payload: [0, 0, 0]),
                LogRecord(sequence: UInt64(Int64.max), instant: Int64.min, kind: .tick, payload: [0xFF]),
            ]
            do {
                let log = try openLog(path)
                try log.append(Array(written[0...1]))
                try log.append(Array(written[2...3]))
                #expect(log.lastSequence == UInt64(Int64.max))
            }
            let reopened = try openLog(path)
            #expect(try readAll(reopened) == written)
            #expect(reopened.lastSequence == UInt64(Int64.max))
            #expect(try reopened.recordCount() == 4)
        }
    }

    @Test("A group with a non-increasing sequence in the middle writes nothing of the group")
    func groupIsAtomic() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let log = try openLog(path)
            try log.append(records(1...2))
            let group = [record(3), record(4), record(4), record(5)]

            let error = try #require(throws: StoreError.self) { try log.append(group) }
            #expect(error == .sequenceNotIncreasing)
            #expect(error.description.contains("record sequence 4 is not greater than the last sequence 4"))
            #expect(log.lastSequence == 2)
            #expect(try readAll(log) == records(1...2))
            #expect(try readAll(openLog(path)) == records(1...2))

            try log.append(records(3...5))
            #expect(try readAll(log) == records(1...5))
        }
    }

    @Test("A record numbered at or below the last sequence is refused", arguments: [1, 3] as [UInt64])
    func belowLastIsRefused(sequence: UInt64) throws {
        let log = try openLog(":memory:")
        try log.append(records(1...3))
        #expect(throws: StoreError.sequenceNotIncreasing) { try log.append([record(sequence)]) }
        #expect(throws: StoreError.sequenceNotIncreasing) { try openLog(":memory:").append([record(0)]) }
    }

    @Test("A sequence above Int64.max is refused")
    func tooLarge() throws {
        let log = try openLog(":memory:")
        #expect(throws: StoreError.sequenceTooLarge) { try log.append([record(UInt64(Int64.max) + 1)]) }
        #expect(log.lastSequence == 0)
    }

    @Test("Appending an empty group changes nothing")
    func emptyGroup() throws {
        let log = try openLog(":memory:")
        try log.append([])
        #expect(log.lastSequence == 0)
        #expect(try log.recordCount() == 0)
    }

    @Test("Reading after a sequence returns only the later records, in order", arguments: [0, 1, 49, 99, 100, 500])
    func readAfter(sequence: UInt64) throws {
        let log = try openLog(":memory:")
        try log.append(records(1...100))
        let expected = records(1...100).filter { $0.sequence > sequence }
        #expect(try readAll(log, after: sequence) == expected)
        #expect(try log.records(after: sequence, limit: 10) == Array(expected.prefix(10)))
    }

    @Test("Reading page by page visits every record once")
    func pages() throws {
        let log = try openLog(":memory:")
        try log.append(records(1...25))
        var seen: [LogRecord] = []
        while case let page = try log.records(after: seen.last?.sequence ?? 0, limit: 7), !page.isEmpty {
            seen += page
        }
        #expect(seen == records(1...25))
    }

    @Test("An error thrown by the reading body stops the reading and is rethrown")
    func bodyErrorStops() throws {
        struct Stop: Error {}
        let log = try openLog(":memory:")
        try log.append(records(1...10))
        var count = 0
        #expect(throws: Stop.self) {
            try log.forEachRecord(after: 0) { _ in
                count += 1
                if count == 3 { throw Stop() }
            }
        }
        #expect(count == 3)
        try log.append([record(11)])
    }

    @Test("The first record's sequence and the count follow appends")
    func firstAndCount() throws {
        let log = try openLog(":memory:")
        #expect(try log.firstRecordSequence() == nil)
        try log.append(records(4...9))
        #expect(try log.firstRecordSequence() == 4)
        #expect(try log.recordCount() == 6)
    }
}
