import IsletCore
import IsletTransport

/// Where the stream is: the history (`epoch`) and the latest revision. The engine integration
/// provides the real values; until then the server uses `StreamPosition.unpersisted`.
public struct StreamPosition: Sendable, Equatable {
    public var epoch: String
    public var revision: UInt64
    public init(epoch: String, revision: UInt64) {
        self.epoch = epoch
        self.revision = revision
    }
    /// The position of a server with no engine yet: an empty history.
    public static let unpersisted = StreamPosition(epoch: "unpersisted", revision: 0)
}

/// The protocol logic of one `/v1/stream` connection, as a value that returns actions.
///
/// It performs no I/O: the server carries out the actions (`send`, `close`) on the transport,
/// so every rule here is tested without sockets.
struct StreamSession {
    enum Action: Equatable {
        case send([UInt8])
        case close(WebSocketCloseCode, reason: String)
    }

    let connection: ConnectionID
    private let parser = JSONParser(maxDepth: 32)

    init(connection: ConnectionID) { self.connection = connection }

    /// On open: the hello.
    func opened(hello: [UInt8]) -> [Action] { [.send(hello)] }

    /// A client message arrived.
    mutating func received(_ message: WebSocketMessage) -> [Action] {
        guard message.isText else {
            return [
                .send(APIError(.invalidArgument, "binary messages are not accepted: send JSON text").streamMessage())
            ]
        }
        let value: JSONValue
        do { value = try self.parser.parse(message.bytes) } catch { return [.send(error.streamMessage())] }
        guard case .object(let object) = value else {
            return [.send(APIError(.invalidArgument, "a message must be a JSON object", field: .root).streamMessage())]
        }
        let id = object["id"] ?? .null
        guard let op = object["op"]?.stringValue else {
            return [.send(APIError(.invalidArgument, "\"op\" must be a string", field: "/op").streamMessage(id: id))]
        }
        switch op {
        case "ping":
            return [.send(JSONValue.object(["type": "pong", "id": id]).encoded)]
        default:
            return [.send(APIError(.invalidArgument, "unknown op \"\(op)\"", field: "/op").streamMessage(id: id))]
        }
    }
}

/// Builds the `hello` message of API.md.
struct StreamHello {
    let limits: IsletConfiguration.Limits

    func encoded(at position: StreamPosition) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeRaw("{\"epoch\":")
        writer.write(string: position.epoch)
        writer.writeRaw(",\"limits\":")
        writer.write(self.limitsJSON)
        writer.writeRaw(",\"rev\":\(position.revision),\"server\":")
        writer.write(string: "islet/\(IsletVersion.current)")
        writer.writeRaw(",\"type\":\"hello\"}")
        return writer.bytes
    }

    private var limitsJSON: JSONValue {
        .object([
            "maxMessageBytes": .number(Double(self.limits.webSocketMessageBytes)),
            "maxOutboundBytes": .number(Double(self.limits.outboundBytes)),
            "maxRequestBodyBytes": .number(Double(self.limits.httpBodyBytes)),
            "maxSubscriptions": .number(Double(self.limits.subscriptionsPerConnection)),
        ])
    }
}

/// Islet's version, as reported in `hello` and `/healthz`.
public enum IsletVersion {
    public static let current = "0.1.0"
}
