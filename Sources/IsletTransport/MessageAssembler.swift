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
    private var inMessage = false

    init(limitBytes: Int) { self.limitBytes = limitBytes }

    /// Adds a piece of the current message.
    ///
    /// - Parameters:
    ///   - piece: The payload bytes received.
    ///   - isBinary: Whether the message's first frame was binary (read at the first piece).
    ///   - isFinal: Whether this piece ends the message.
    ///   - remainingInFrame: Bytes of the current frame still to come (from the frame header),
    ///     so an oversize frame is refused before it arrives.
    mutating func append(_ piece: UnsafeRawBufferPointer, isBinary: Bool, isFinal: Bool, remainingInFrame: Int)
        -> Result
    {
        if !self.inMessage {
            self.inMessage = true
            self.isBinary = isBinary
        }
        guard self.buffer.count + piece.count + remainingInFrame <= self.limitBytes else {
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
