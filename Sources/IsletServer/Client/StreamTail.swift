import IsletCore
import IsletTransport
public import Logging

/// A `/v1/stream` client for `islet tail`: connects, subscribes to paths once `hello` arrives,
/// and hands every message's text to a callback, on its own event loop (libwebsockets client
/// mode). `islet` may import only IsletServer, so the client lives here.
public final class StreamTail: Sendable {
    /// How the stream ended.
    public enum End: Sendable, Equatable {
        /// The server closed with this code (nil: no code).
        case closed(UInt16?)
        /// The connection could not be made.
        case failed(String)
        /// `limit` messages were printed.
        case limitReached
        /// The server refused every subscription (an unknown simulation, a path that is not a
        /// JSON Pointer…): nothing more can arrive. The error message's text.
        case refused(String)
    }

    /// What to subscribe to.
    public struct Options: Sendable {
        public var host: String
        public var port: Int
        /// The request path with its query (e.g. `/v1/stream?token=…`).
        public var path: String
        public var paths: [String]
        /// Resume from this revision of the hello's epoch (or `epoch`, if given).
        public var since: UInt64?
        public var epoch: String?
        /// Stop after this many messages (nil: until the server closes).
        public var limit: Int?
        /// The simulation the paths point into (nil: `default`).
        public var simulation: String?

        public init(
            host: String, port: Int, path: String, paths: [String], since: UInt64? = nil, epoch: String? = nil,
            limit: Int? = nil, simulation: String? = nil
        ) {
            self.host = host
            self.port = port
            self.path = path
            self.paths = paths
            self.since = since
            self.epoch = epoch
            self.limit = limit
            self.simulation = simulation
        }
    }

    private let loop: EventLoop
    private let state: State

    private init(loop: EventLoop, state: State) {
        self.loop = loop
        self.state = state
    }

    /// Connects and runs until the stream ends; `line` receives each message's text.
    public static func run(
        _ options: Options, logger: Logger, line: @escaping @Sendable (String) -> Void
    ) async throws -> End {
        let loop = try EventLoop(name: "islet-tail", logger: logger)
        try loop.start()
        let state = State(options: options, line: line)
        let end: End = try await withCheckedThrowingContinuation { continuation in
            let accepted = loop.execute {
                do {
                    let pool = try WebSocketClientPool(loop: loop, logger: logger)
                    state.pool = pool
                    pool.delegate = state
                    state.finished = { end in
                        pool.shutdown(gracePeriod: .seconds(1)) { loop.stop() }
                        continuation.resume(returning: end)
                    }
                    if pool.connect(host: options.host, port: options.port, path: options.path, subprotocol: "islet.v1")
                        == nil
                    {
                        state.finish(.failed("could not start a connection"))
                    }
                } catch {
                    loop.stop()
                    continuation.resume(throwing: error)
                }
            }
            if !accepted { continuation.resume(throwing: TransportError.loopStopped) }
        }
        _ = await loop.terminated()
        return end
    }

    /// Loop-confined.
    private final class State: WebSocketClientDelegate, @unchecked Sendable {
        let options: Options
        let line: @Sendable (String) -> Void
        var pool: WebSocketClientPool?
        var finished: ((End) -> Void)?
        var count = 0
        var greeted = false
        /// The subscriptions the server has not refused.
        var standing: Set<String> = []

        init(options: Options, line: @escaping @Sendable (String) -> Void) {
            self.options = options
            self.line = line
        }

        func finish(_ end: End) {
            guard let finished = self.finished else { return }
            self.finished = nil
            finished(end)
        }

        func client(_ pool: WebSocketClientPool, didOpen connection: ConnectionID) {}

        func client(_ pool: WebSocketClientPool, didReceive message: WebSocketMessage, from connection: ConnectionID) {
            // Messages read together arrive together: none is printed after the end.
            guard self.finished != nil else { return }
            let text = String(decoding: message.bytes, as: UTF8.self)
            self.line(text)
            self.count += 1
            let json = try? JSONParser.stored.parse(message.bytes)
            if !self.greeted {
                self.greeted = true
                self.subscribe(hello: json, pool: pool, connection: connection)
            } else if json?["type"] == "error", let id = json?["id"]?.stringValue, self.standing.remove(id) != nil,
                self.standing.isEmpty
            {
                return self.finish(.refused(text))
            }
            if let limit = self.options.limit, self.count >= limit { self.finish(.limitReached) }
        }

        private func subscribe(hello: JSONValue?, pool: WebSocketClientPool, connection: ConnectionID) {
            let epoch = self.options.epoch ?? hello?["epoch"]?.stringValue ?? ""
            for (index, path) in self.options.paths.enumerated() {
                var message: JSONObject = [
                    "op": "subscribe", "id": .string("tail-\(index + 1)"), "path": .string(path),
                ]
                if let simulation = self.options.simulation { message["simulation"] = .string(simulation) }
                if let since = self.options.since {
                    message["since"] = ["epoch": .string(epoch), "rev": .number(Double(since))]
                }
                self.standing.insert("tail-\(index + 1)")
                pool.send(.text(JSONValue.object(message).encoded), to: connection)
            }
        }

        func client(_ pool: WebSocketClientPool, didFail connection: ConnectionID, reason: String) {
            self.finish(.failed(reason))
        }

        func client(_ pool: WebSocketClientPool, didClose connection: ConnectionID, code: WebSocketCloseCode?) {
            self.finish(.closed(code?.rawValue))
        }
    }
}
