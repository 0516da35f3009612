/// Reassembles WebSocket fragments (and the pieces libwebsockets delivers a large frame in)
/// into whole messages, refusing any message longer than a limit as soon as that is known.
struct MessageAssembler {
    enum Result: Equatable {
        case incomplete
        case message(WebSocketMessage)
        /// The message would exceed the limit; close with 1009.
        case tooLarge
    }

    let limitBytes: Int
    private var buffer: [UInt8] = []
    private var isBinary = false
    private var isCompressed = false
    private var inMessage = false

    init(limitBytes: Int) { self.limitBytes = limitBytes }

    /// Bytes held for the message being reassembled; never more than `limitBytes`.
    var bufferedBytes: Int { self.buffer.count }

    /// True while a compressed message is being reassembled (more inflated pieces to come).
    var isAssemblingCompressed: Bool { self.inMessage && self.isCompressed }

    /// Whether the next piece belongs to a compressed message, given the RSV1 bit of the frame
    /// it arrives in (only a message's first frame carries it).
    func nextPieceIsCompressed(frameIsCompressed: Bool) -> Bool {
        self.inMessage ? self.isCompressed : frameIsCompressed
    }

    /// Adds a piece of the current message.
    ///
    /// - Parameters:
    ///   - piece: The payload bytes received.
    ///   - isBinary: Whether the message's first frame was binary (read at the first piece).
    ///   - isFinal: Whether this piece ends the message.
    ///   - remainingInFrame: Bytes of the current frame still to come (from the frame header),
    ///     so an oversize frame is refused before it arrives.
    ///   - isCompressed: Whether the message's first frame was compressed (permessage-deflate,
    ///     read at the first piece). Pieces are then inflated bytes, and the frame's remaining
    ///     bytes are compressed ones, which say nothing about the message's size: only the
    ///     inflated bytes count, as they arrive (lws inflates at most one receive buffer at a time).
    mutating func append(
        _ piece: UnsafeRawBufferPointer, isBinary: Bool, isFinal: Bool, remainingInFrame: Int,
        isCompressed: Bool = false
    ) -> Result {
        if !self.inMessage {
            self.inMessage = true
            self.isBinary = isBinary
            self.isCompressed = isCompressed
        }
        let announced = self.isCompressed ? 0 : remainingInFrame
        // Compared by subtraction: a frame header may announce up to 2^63 − 1 bytes, and adding
        // that to what is held would overflow.
        guard self.buffer.count + piece.count <= self.limitBytes,
            announced <= self.limitBytes - self.buffer.count - piece.count
        else {
            self.reset()
            return .tooLarge
        }
        if isFinal && self.buffer.isEmpty {
            let bytes = [UInt8](piece)
            let binary = self.isBinary
            self.reset()
            return .message(binary ? .binary(bytes) : .text(bytes))
        }
        self.buffer.append(contentsOf: piece)
        guard isFinal else { return .incomplete }
        let bytes = self.buffer
        let binary = self.isBinary
        self.reset()
        return .message(binary ? .binary(bytes) : .text(bytes))
    }

    private mutating func reset() {
        self.buffer = []
        self.inMessage = false
    }
}
