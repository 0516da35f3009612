import DequeModule

/// A connection's queue of outgoing WebSocket messages, with a byte cap.
///
/// Messages are shared copy-on-write arrays: the same bytes queued to many connections are
/// stored once. The queue hands out bounded chunks (`nextChunk`), so a large message is
/// written as several WebSocket fragments across writable callbacks; bytes are copied only
/// into the write buffer, at write time.
///
/// The cap counts bytes not yet written. A message that would take the queue over the cap is
/// refused (`.overCap`), except into an empty queue, so that one message larger than the cap
/// (a big snapshot) can still be sent to a reader that keeps up.
struct OutboundQueue {
    /// A slice of the head message to write as one frame or fragment.
    struct Chunk: Equatable {
        let isText: Bool
        let isFirst: Bool
        let isLast: Bool
        let bytes: ArraySlice<UInt8>
    }

    enum EnqueueResult: Equatable { case queued, overCap }

    let capBytes: Int
    private var messages: Deque<WebSocketMessage> = []
    private var headOffset = 0
    /// Bytes queued and not yet handed to the socket.
    private(set) var queuedBytes = 0
    /// `messages.count`, kept beside the deque's reference: the fan-out asks every connection
    /// whether its queue is empty, and this answers without reading the deque's storage.
    private(set) var count = 0

    init(capBytes: Int) { self.capBytes = capBytes }

    var isEmpty: Bool { self.count == 0 }

    /// Appends a message unless that would exceed the cap (see the type's note).
    mutating func enqueue(_ message: WebSocketMessage) -> EnqueueResult {
        let size = message.bytes.count
        if !self.messages.isEmpty && self.queuedBytes + size > self.capBytes { return .overCap }
        self.messages.append(message)
        self.count += 1
        self.queuedBytes += size
        return .queued
    }

    /// The next part of the head message, at most `maxBytes` long, or nil when empty.
    func nextChunk(maxBytes: Int) -> Chunk? {
        guard let head = self.messages.first else { return nil }
        let bytes = head.bytes
        let end = min(bytes.count, self.headOffset + maxBytes)
        return Chunk(
            isText: head.isText, isFirst: self.headOffset == 0, isLast: end == bytes.count,
            bytes: bytes[self.headOffset..<end])
    }

    /// The message at `index` from the head, if there is one.
    func message(at index: Int) -> WebSocketMessage? {
        index < self.messages.count ? self.messages[index] : nil
    }

    /// Whether part of the head message was written already (it must be finished in fragments).
    var isHeadStarted: Bool { self.headOffset > 0 }

    /// Records that the first `count` messages, none of them started, were written whole.
    mutating func removeFirst(_ count: Int) {
        precondition(self.headOffset == 0 && count <= self.messages.count)
        for _ in 0..<count { self.queuedBytes -= self.messages.removeFirst().bytes.count }
        self.count -= count
    }

    /// Records that `chunk` (from `nextChunk`) was written.
    mutating func consume(_ chunk: Chunk) {
        self.queuedBytes -= chunk.bytes.count
        if chunk.isLast {
            self.messages.removeFirst()
            self.count -= 1
            self.headOffset = 0
        } else {
            self.headOffset += chunk.bytes.count
        }
    }

    /// Drops every message not yet started, except those `keep` accepts (they stay in order).
    /// Returns the bytes dropped.
    mutating func discardUnstarted(keeping keep: (WebSocketMessage) -> Bool = { _ in false }) -> Int {
        let started = self.headOffset > 0 ? 1 : 0
        guard self.messages.count > started else { return 0 }
        var kept: Deque<WebSocketMessage> = []
        var dropped = 0
        for (index, message) in self.messages.enumerated() {
            if index < started || keep(message) {
                kept.append(message)
            } else {
                dropped += message.bytes.count
            }
        }
        self.messages = kept
        self.count = kept.count
        self.queuedBytes -= dropped
        return dropped
    }
}
