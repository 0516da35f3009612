import IsletCore
import IsletTransport

/// Where the stream is: the history (`epoch`) and the latest published revision.
public struct StreamPosition: Sendable, Equatable {
    public var epoch: String
    public var revision: UInt64
    public init(epoch: String, revision: UInt64) {
        self.epoch = epoch
        self.revision = revision
    }
}

/// Builds the `hello` message of API.md.
struct StreamHello {
    let limits: IsletConfiguration.Limits
    /// The cluster node that answered (`--node-id`), so a client behind a balancer knows where it is.
    var node: String?

    func encoded(at position: StreamPosition) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeRaw("{\"epoch\":")
        writer.write(string: position.epoch)
        writer.writeRaw(",\"limits\":")
        writer.write(self.limitsJSON)
        if let node = self.node {
            writer.writeRaw(",\"node\":")
            writer.write(string: node)
        }
        writer.writeRaw(",\"rev\":")
        writer.write(integer: position.revision)
        writer.writeRaw(",\"server\":")
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
