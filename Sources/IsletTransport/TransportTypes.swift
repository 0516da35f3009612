/// Identifies one connection (an HTTP keep-alive connection or a WebSocket) for its lifetime.
/// Identifiers are never reused within a transport.
public struct ConnectionID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "c\(self.rawValue)" }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Identifies one HTTP request: its connection and its position on that connection, so a late
/// reply can never be sent as the answer to a later request on the same keep-alive connection.
public struct RequestID: Hashable, Sendable, CustomStringConvertible {
    public let connection: ConnectionID
    public let sequence: UInt32
    public init(connection: ConnectionID, sequence: UInt32) {
        self.connection = connection
        self.sequence = sequence
    }
    public var description: String { "\(self.connection).\(self.sequence)" }
}

/// The HTTP methods that reach the server. Others are refused by the transport.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable {
    case GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS
}

/// HTTP header fields, in order, with case-insensitive lookup. Names are stored lowercased.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    public private(set) var fields: [Field] = []

    public init() {}
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { self.add(name: name, value: value) }
    }

    /// Appends a field (the name is lowercased).
    public mutating func add(name: String, value: String) {
        self.fields.append(Field(name: name.lowercased(), value: value))
    }

    /// Replaces every field of that name with one field.
    public mutating func replaceOrAdd(name: String, value: String) {
        let lowered = name.lowercased()
        self.fields.removeAll { $0.name == lowered }
        self.fields.append(Field(name: lowered, value: value))
    }

    /// The first value of the field `name` (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        let lowered = name.lowercased()
        return self.fields.first { $0.name == lowered }?.value
    }

    public func makeIterator() -> IndexingIterator<[Field]> { self.fields.makeIterator() }
}

/// One query parameter, percent-decoded. A parameter without `=` has an empty value.
public struct QueryItem: Sendable, Equatable {
    public var name: String
    public var value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == QueryItem {
    /// The first value of the parameter `name`, or nil.
    public subscript(name: String) -> String? { self.first { $0.name == name }?.value }
}

/// A complete HTTP request, delivered once its body has arrived (or been refused).
public struct HTTPRequest: Sendable {
    /// Why the transport refused the body, if it did. The server must still answer.
    public enum BodyProblem: Sendable, Equatable {
        /// `Content-Length` was above `maxRequestBodyBytes`; no byte of the body was kept.
        case tooLarge(limit: Int)
        /// A chunked body (`Transfer-Encoding`), which libwebsockets 4.1 cannot decode.
        case lengthRequired
        /// `Content-Length` was not a decimal number of bytes (`-5`, `1e3`, 20 digits).
        case invalidLength
        /// The request target held a CR or LF once percent-decoded: libwebsockets 4.1.6 cuts the
        /// path there, so `path` is not what the client asked for and nothing may act on it.
        case truncatedTarget
    }

    public let id: RequestID
    public let method: HTTPMethod
    /// The path, percent-decoded, without the query, e.g. `/v1/state`.
    public let path: String
    public let query: [QueryItem]
    public let headers: HTTPHeaders
    public var body: [UInt8]
    public var bodyProblem: BodyProblem?
    /// Set when the request's connection is beyond `maxConnections` (this many are served): the
    /// server must still answer, saying so; an HTTP/1.1 connection closes after the reply.
    public var connectionLimit: Int?

    public init(
        id: RequestID, method: HTTPMethod, path: String, query: [QueryItem] = [], headers: HTTPHeaders = [:],
        body: [UInt8] = [], bodyProblem: BodyProblem? = nil
    ) {
        self.id = id
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.bodyProblem = bodyProblem
    }
}

/// An HTTP response. The transport adds `content-length`, and omits the body for `HEAD`.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Close the connection after this response (used when a request body was refused).
    public var closeConnection: Bool

    public init(status: Int, headers: HTTPHeaders = [:], body: [UInt8] = [], closeConnection: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.closeConnection = closeConnection
    }
}

/// What a client asked for when it opened a WebSocket.
public struct WebSocketUpgrade: Sendable, Equatable {
    public let path: String
    public let query: [QueryItem]
    public let headers: HTTPHeaders
    /// The subprotocol the transport selected (one the client offered), or nil if it offered none.
    public let subprotocol: String?
    /// Set when the connection is beyond `maxConnections` (this many are served): accept it to
    /// tell the client so, then close it.
    public let connectionLimit: Int?

    public init(
        path: String, query: [QueryItem] = [], headers: HTTPHeaders = [:], subprotocol: String?,
        connectionLimit: Int? = nil
    ) {
        self.path = path
        self.query = query
        self.headers = headers
        self.subprotocol = subprotocol
        self.connectionLimit = connectionLimit
    }
}

/// A complete WebSocket message (fragments are reassembled by the transport).
///
/// The bytes are a copy-on-write array: queueing the same message to many connections shares
/// one buffer ("encode once, send many").
public enum WebSocketMessage: Sendable, Equatable {
    case text([UInt8])
    case binary([UInt8])

    public var bytes: [UInt8] {
        switch self {
        case .text(let bytes), .binary(let bytes): return bytes
        }
    }

    public var isText: Bool {
        if case .text = self { return true }
        return false
    }
}

/// What a broadcast did: how many connections took the message, and which refused it for
/// being over their cap (connections not open are skipped).
public struct BroadcastResult: Sendable, Equatable {
    public var queued = 0
    public var overCap: [ConnectionID] = []

    public init() {}
}

/// A WebSocket close code (RFC 6455 §7.4, plus Islet's application range 4000–4999).
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let normal = Self(1000)
    /// The server is shutting down.
    public static let goingAway = Self(1001)
    public static let protocolError = Self(1002)
    /// No code was present in the close frame.
    public static let noStatus = Self(1005)
    /// The connection ended without a close frame.
    public static let abnormal = Self(1006)
    public static let invalidPayload = Self(1007)
    public static let policyViolation = Self(1008)
    /// A message exceeded the configured limit.
    public static let messageTooBig = Self(1009)
    public static let internalError = Self(1011)
    /// The server restarted the service behind the connection: reconnect.
    public static let serviceRestart = Self(1012)
    /// The server is overloaded (a slow consumer, too many connections): reconnect later.
    public static let tryAgainLater = Self(1013)

    public var description: String { "\(self.rawValue)" }
}

/// What happened to a message given to `Transport.send`.
public enum SendResult: Sendable, Equatable {
    /// Queued; it will be written when the socket is writable.
    case queued
    /// Not queued: the connection's outbound queue would exceed its cap. Policy is the caller's.
    case overCap
    /// Not queued: no open WebSocket has that identifier (closed, closing, or never opened).
    case notOpen
}

/// Counters the transport keeps for metrics. Totals since the transport started.
public struct TransportStatistics: Sendable, Equatable {
    public var bytesReceived: UInt64 = 0
    public var bytesSent: UInt64 = 0
    /// WebSocket messages handed to sockets, and the writes (`send` calls) that carried them:
    /// with write coalescing, or a queue drained after a backlog, one write carries several.
    public var webSocketMessagesSent: UInt64 = 0
    public var webSocketWrites: UInt64 = 0
    public var connectionsAccepted: UInt64 = 0
    /// Connections served now (those `maxConnections` counts).
    public var openConnections: Int = 0
    /// Requests and WebSocket handshakes refused because their connection was beyond
    /// `maxConnections`, plus connections closed at accept for it.
    public var connectionRefusals: UInt64 = 0
    public var openWebSockets: Int = 0
    public var openHTTPConnections: Int = 0
    /// Bytes held now, over every WebSocket, for messages being reassembled from fragments.
    public var reassemblyBytes: Int = 0
    /// The most bytes one WebSocket has held for one message being reassembled (bounded by
    /// `maxMessageBytes`: a message that would exceed it is refused before it is stored).
    public var largestReassemblyBytes: Int = 0
    public init() {}
}
