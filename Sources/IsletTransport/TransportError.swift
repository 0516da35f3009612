/// A failure of the transport layer: a libuv or libwebsockets call that did not succeed.
///
/// Equality compares the kind only, so callers can match `error == .bindFailed` while the
/// value still carries the C call and its result for the log.
public struct TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// The event loop could not be created or started.
        public static let loopFailed = Kind("loop_failed")
        /// The listening socket could not be opened (address in use, no permission, bad address).
        public static let bindFailed = Kind("bind_failed")
        /// libwebsockets refused to create its context (often: `libwebsockets-evlib-uv` missing).
        public static let contextFailed = Kind("context_failed")
        /// A signal handler could not be installed.
        public static let signalFailed = Kind("signal_failed")
        /// A client connection could not be started.
        public static let connectFailed = Kind("connect_failed")
        /// The loop has stopped and accepts no more work.
        public static let loopStopped = Kind("loop_stopped")

        public var description: String { self.rawValue }
    }

    public var kind: Kind
    /// The C function that failed, e.g. `uv_loop_init`.
    public var call: String
    /// The C result (a negative libuv error code, or -1 for libwebsockets), 0 when not applicable.
    public var code: Int32
    /// A sentence for operators.
    public var message: String

    public init(_ kind: Kind, call: String, code: Int32 = 0, message: String) {
        self.kind = kind
        self.call = call
        self.code = code
        self.message = message
    }

    public var description: String {
        self.code == 0
            ? "\(self.kind): \(self.message) (\(self.call))"
            : "\(self.kind): \(self.message) (\(self.call) returned \(self.code))"
    }

    public static func == (lhs: TransportError, rhs: TransportError) -> Bool { lhs.kind == rhs.kind }

    public static let loopFailed = TransportError(.loopFailed, call: "", message: "event loop failed")
    public static let bindFailed = TransportError(.bindFailed, call: "", message: "bind failed")
    public static let contextFailed = TransportError(.contextFailed, call: "", message: "lws context failed")
    public static let loopStopped = TransportError(.loopStopped, call: "", message: "loop stopped")
}
