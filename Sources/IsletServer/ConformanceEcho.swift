public import IsletTransport

/// The `/v1/echo` WebSocket: it sends every message back unchanged. It exists only so that a
/// conformance suite (Autobahn, `scripts/autobahn`) can exercise the transport, and is mounted
/// only when `IsletConfiguration.conformanceEcho` is set (`islet serve --conformance-echo`,
/// loopback hosts only).
///
/// It sits in front of the server as the transport's delegate: upgrades to `/v1/echo` and the
/// events of echo connections stay here, everything else goes to the server unchanged. Echo
/// connections share the transport with `/v1/stream`, so they get the same limits (64 KiB
/// messages after reassembly, the outbound cap), UTF-8 validation, fragment reassembly, close
/// handling and, with `--ws-compression`, permessage-deflate. Unlike the stream, the echo
/// accepts a client that offers no subprotocol.
///
/// Loop-confined, like the server.
public final class ConformanceEcho: TransportDelegate {
    public static let path = "/v1/echo"

    public let server: IsletServer
    private var connections: Set<ConnectionID> = []
    private var isShuttingDown = false

    public init(server: IsletServer) { self.server = server }

    /// Open echo connections.
    public var openConnections: Int { self.connections.count }

    /// Closes every echo connection with 1001 (after its queued echoes), then shuts the server
    /// down (`IsletServer.shutdown`).
    public func shutdown(completion: @escaping () -> Void) {
        if !self.isShuttingDown {
            self.isShuttingDown = true
            for connection in self.connections.sorted() {
                self.server.transport.close(connection, code: .goingAway, reason: "server shutting down")
            }
        }
        self.server.shutdown(completion: completion)
    }

    // MARK: TransportDelegate

    public func transport(_ transport: any Transport, didReceive request: HTTPRequest) {
        self.server.transport(transport, didReceive: request)
    }

    public func transport(_ transport: any Transport, shouldAccept upgrade: WebSocketUpgrade) -> Bool {
        guard upgrade.path == Self.path else { return self.server.transport(transport, shouldAccept: upgrade) }
        return !self.isShuttingDown && !self.server.isShuttingDown
    }

    public func transport(_ transport: any Transport, didOpen connection: ConnectionID, upgrade: WebSocketUpgrade) {
        guard upgrade.path == Self.path else {
            return self.server.transport(transport, didOpen: connection, upgrade: upgrade)
        }
        self.connections.insert(connection)
    }

    public func transport(
        _ transport: any Transport, didReceive message: WebSocketMessage, from connection: ConnectionID
    ) {
        guard self.connections.contains(connection) else {
            return self.server.transport(transport, didReceive: message, from: connection)
        }
        if transport.send(message, to: connection) == .overCap {
            transport.close(connection, code: WebSocketCloseCode(4008), reason: "slow consumer")
        }
    }

    public func transport(_ transport: any Transport, didClose connection: ConnectionID, code: WebSocketCloseCode?) {
        guard self.connections.remove(connection) != nil else {
            return self.server.transport(transport, didClose: connection, code: code)
        }
    }

    public func transport(_ transport: any Transport, didDrain connection: ConnectionID) {
        guard self.connections.contains(connection) else { return self.server.transport(transport, didDrain: connection) }
    }
}
