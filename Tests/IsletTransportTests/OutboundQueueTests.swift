import Testing

@testable import IsletTransport

@Suite("Outbound queue")
struct OutboundQueueTests {
    @Test("messages come out in order, large ones in bounded chunks")
    func chunks() {
        var queue = OutboundQueue(capBytes: 1000)
        #expect(queue.enqueue(.text(Array(repeating: 1, count: 250))) == .queued)
        #expect(queue.enqueue(.binary([2, 3])) == .queued)
        #expect(queue.queuedBytes == 252)
        var seen: [(Bool, Bool, Bool, Int)] = []
        while let chunk = queue.nextChunk(maxBytes: 100) {
            seen.append((chunk.isText, chunk.isFirst, chunk.isLast, chunk.bytes.count))
            queue.consume(chunk)
        }
        #expect(seen.map(\.3) == [100, 100, 50, 2])
        #expect(seen.map(\.1) == [true, false, false, true])
        #expect(seen.map(\.2) == [false, false, true, true])
        #expect(seen.map(\.0) == [true, true, true, false])
        #expect(queue.queuedBytes == 0)
        #expect(queue.isEmpty)
    }

    @Test("the cap refuses a message that would exceed it, except into an empty queue")
    func cap() {
        var queue = OutboundQueue(capBytes: 100)
        #expect(queue.enqueue(.text(Array(repeating: 0, count: 150))) == .queued)
        #expect(queue.enqueue(.text([1])) == .overCap)
        var drained = OutboundQueue(capBytes: 100)
        #expect(drained.enqueue(.text(Array(repeating: 0, count: 60))) == .queued)
        #expect(drained.enqueue(.text(Array(repeating: 0, count: 40))) == .queued)
        #expect(drained.enqueue(.text([1])) == .overCap)
        #expect(drained.queuedBytes == 100)
    }

    @Test("discarding keeps a message that has started to be written")
    func discard() {
        var queue = OutboundQueue(capBytes: 1000)
        _ = queue.enqueue(.text(Array(repeating: 0, count: 10)))
        _ = queue.enqueue(.text(Array(repeating: 0, count: 20)))
        _ = queue.enqueue(.text(Array(repeating: 0, count: 30)))
        let first = queue.nextChunk(maxBytes: 4)!
        queue.consume(first)
        #expect(queue.discardUnstarted() == 50)
        #expect(queue.queuedBytes == 6)
        #expect(queue.count == 1)
        var fresh = OutboundQueue(capBytes: 1000)
        _ = fresh.enqueue(.text([1, 2]))
        #expect(fresh.discardUnstarted() == 2)
        #expect(fresh.isEmpty)
    }

    @Test("one buffer queued to many connections is shared, not copied")
    func shared() {
        let bytes = [UInt8](repeating: 7, count: 4096)
        var queues = (0..<100).map { _ in OutboundQueue(capBytes: 1 << 20) }
        for index in queues.indices { _ = queues[index].enqueue(.text(bytes)) }
        let addresses = Set(
            queues.map { queue in
                queue.nextChunk(maxBytes: 10)!.bytes.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) }
            })
        #expect(addresses.count == 1)
    }
}

@Suite("Message reassembly")
struct MessageAssemblerTests {
    private func feed(
        _ assembler: inout MessageAssembler, _ bytes: [UInt8], binary: Bool = false, final: Bool, remaining: Int = 0
    )
        -> MessageAssembler.Result
    {
        bytes.withUnsafeBytes { assembler.append($0, isBinary: binary, isFinal: final, remainingInFrame: remaining) }
    }

    @Test("pieces become one message; the kind is the first frame's")
    func reassembly() {
        var assembler = MessageAssembler(limitBytes: 100)
        #expect(self.feed(&assembler, [1, 2], binary: true, final: false) == .incomplete)
        #expect(self.feed(&assembler, [3], binary: false, final: true) == .message(.binary([1, 2, 3])))
        #expect(self.feed(&assembler, Array("hi".utf8), final: true) == .message(.text(Array("hi".utf8))))
        #expect(self.feed(&assembler, [], final: true) == .message(.text([])))
    }

    @Test("a message over the limit is refused as soon as the frame header says so")
    func limit() {
        var assembler = MessageAssembler(limitBytes: 10)
        #expect(self.feed(&assembler, [1, 2, 3], final: false, remaining: 100) == .tooLarge)
        var pieces = MessageAssembler(limitBytes: 10)
        #expect(self.feed(&pieces, Array(repeating: 0, count: 6), final: false) == .incomplete)
        #expect(self.feed(&pieces, Array(repeating: 0, count: 5), final: true) == .tooLarge)
        // A continuation frame may announce 2^63 − 1 bytes: refused, not an overflow.
        var huge = MessageAssembler(limitBytes: 10)
        #expect(self.feed(&huge, [1, 2, 3], final: false) == .incomplete)
        #expect(self.feed(&huge, [4, 5], final: false, remaining: Int.max - 1) == .tooLarge)
        var exact = MessageAssembler(limitBytes: 10)
        #expect(
            self.feed(&exact, Array(repeating: 0, count: 10), final: true)
                == .message(.text(Array(repeating: 0, count: 10))))
    }
}

@Suite("Outbound queue, whole messages")
struct OutboundQueueWholeMessageTests {
    @Test("messages are read in place and removed whole from the head")
    func wholeMessages() {
        var queue = OutboundQueue(capBytes: 1000)
        _ = queue.enqueue(.text([1, 2, 3]))
        _ = queue.enqueue(.binary([4]))
        _ = queue.enqueue(.text([5, 6]))
        #expect(queue.message(at: 1) == .binary([4]))
        #expect(queue.message(at: 3) == nil)
        #expect(!queue.isHeadStarted)
        queue.removeFirst(2)
        #expect(queue.queuedBytes == 2)
        #expect(queue.message(at: 0) == .text([5, 6]))
        if let chunk = queue.nextChunk(maxBytes: 1) { queue.consume(chunk) }
        #expect(queue.isHeadStarted)
    }
}
