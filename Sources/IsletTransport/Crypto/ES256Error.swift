/// Why an ES256 key was refused or a signature could not be made.
///
/// Equality compares the code only; the message carries OpenSSL's words for the log or the
/// person who gave the key.
public struct ES256Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// The text is not a PEM key of the expected kind (or it is encrypted).
        public static let unreadableKey = Code("unreadable_key")
        /// The key is readable but not an elliptic-curve key on P-256 (ES256 needs exactly that).
        public static let notP256 = Code("not_p256")
        /// OpenSSL could not sign.
        public static let signingFailed = Code("signing_failed")

        public var description: String { self.rawValue }
    }

    public var code: Code
    /// A sentence for the person who gave the key.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(self.code): \(self.message)" }

    public static func == (lhs: ES256Error, rhs: ES256Error) -> Bool { lhs.code == rhs.code }
}
