// Thread and lifetime rules for the hiredis async context:
// - Every call here runs on the loop thread; hiredis's libuv adapter polls the socket on the
//   same loop, so its callbacks run there too.
// - The connection retains itself through `ac->data` from `init` until hiredis reports the end
//   (a failed connect, or the disconnect callback); hiredis frees the context right after that
//   callback, and the adapter closes its `uv_poll_t`.
// - Each command's callback box is retained through `privdata` until hiredis calls it, exactly
//   once (with NULL when the connection goes away first).

internal import CHiredis

/// A reply from Redis (RESP2), copied out of hiredis's reply tree.
public enum RedisReply: Sendable, Equatable {
    case string([UInt8])
    case status(String)
    case integer(Int64)
    case array([RedisReply])
    case null
    case error(String)

    /// The bytes of a bulk string or a status, as UTF-8 text.
    public var text: String? {
        switch self {
        case .string(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        default: nil
        }
    }

    /// The bytes of a bulk string.
    public var bytes: [UInt8]? {
        if case .string(let bytes) = self { return bytes }
        return nil
    }

    /// The elements of an array reply (`nil` for a null array).
    public var elements: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    fileprivate init(_ reply: UnsafePointer<redisReply>) {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING:
            self = .string(value.str.map { Array(UnsafeRawBufferPointer(start: $0, count: value.len)) } ?? [])
        case REDIS_REPLY_STATUS:
            self = .status(value.str.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: value.len), as: UTF8.self) } ?? "")
        case REDIS_REPLY_ERROR:
            self = .error(value.str.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: value.len), as: UTF8.self) } ?? "")
        case REDIS_REPLY_INTEGER:
            self = .integer(value.integer)
        case REDIS_REPLY_ARRAY:
            self = .array((0..<value.elements).compactMap { value.element[$0].map { RedisReply(UnsafePointer($0)) } })
        default:
            self = .null
        }
    }
}

/// Why a Redis connection or command failed: the connection could not be made, or it went away.
public struct RedisConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { self.message }
}

/// One connection to a Redis server, driven by the event loop (hiredis's async API on its libuv
/// adapter): commands are pipelined and their replies arrive in order, on the loop thread.
///
/// A connection is used once: when it fails or is closed, `onDisconnect` runs and a new one is
/// made (the owner decides the backoff). A blocking command (`XREAD BLOCK`) holds the replies
/// behind it, so a reader keeps a connection of its own.
public final class RedisConnection {
    /// Called once on the loop thread: `nil` when connected, or why it could not connect.
    public typealias Connected = (RedisConnectionError?) -> Void
    /// Called once on the loop thread when an established connection ends (nil after `close()`).
    public typealias Disconnected = (RedisConnectionError?) -> Void
    public typealias Reply = (Result<RedisReply, RedisConnectionError>) -> Void

    private var context: UnsafeMutablePointer<redisAsyncContext>?
    private let loop: EventLoop
    private var onConnect: Connected?
    private var onDisconnect: Disconnected?
    public private(set) var isConnected = false
    private var closing = false

    /// Starts connecting to `host:port` on `loop` (on the loop thread).
    public init(loop: EventLoop, host: String, port: Int, connected: @escaping Connected, disconnected: @escaping Disconnected) {
        loop.preconditionInEventLoop()
        self.loop = loop
        self.onConnect = connected
        self.onDisconnect = disconnected
        guard let context = redisAsyncConnect(host, Int32(clamping: port)) else {
            self.fail("out of memory")
            return
        }
        if context.pointee.err != 0 {
            let message = String(cString: context.pointee.errstr)
            redisAsyncFree(context)
            self.fail(message)
            return
        }
        guard islet_redis_attach_uv(context, loop.uv.raw) == REDIS_OK else {
            redisAsyncFree(context)
            self.fail("cannot attach to the event loop")
            return
        }
        self.context = context
        context.pointee.data = Unmanaged.passRetained(self).toOpaque()
        redisAsyncSetConnectCallback(context) { context, status in
            guard let connection = RedisConnection.owner(of: context) else { return }
            if status == REDIS_OK {
                connection.isConnected = true
                connection.onConnect.take()?(nil)
            } else {
                let message = context.map { String(cString: $0.pointee.errstr) } ?? "connect failed"
                // hiredis frees the context after this callback, without the disconnect callback.
                connection.ended()
                connection.onConnect.take()?(RedisConnectionError(message))
                connection.onDisconnect = nil
            }
        }
        redisAsyncSetDisconnectCallback(context) { context, status in
            guard let connection = RedisConnection.owner(of: context) else { return }
            let error = status == REDIS_OK ? nil : RedisConnectionError(context.map { String(cString: $0.pointee.errstr) } ?? "connection lost")
            connection.ended()
            connection.onDisconnect.take()?(error)
        }
    }

    /// Sends one command (its arguments as bytes); `reply` runs once, on the loop thread.
    public func send(_ arguments: [[UInt8]], reply: @escaping Reply) {
        guard let context = self.context, !self.closing else {
            return reply(.failure(RedisConnectionError("not connected")))
        }
        let box = Unmanaged.passRetained(ReplyBox(reply)).toOpaque()
        let lengths = arguments.map(\.count)
        // hiredis copies the arguments into its output buffer before returning.
        let status = withCStrings(arguments) { pointers in
            lengths.withUnsafeBufferPointer { lengths in
                redisAsyncCommandArgv(
                    context, { _, reply, privdata in
                        guard let privdata else { return }
                        let box = Unmanaged<ReplyBox>.fromOpaque(privdata).takeRetainedValue()
                        if let reply {
                            box.body(.success(RedisReply(reply.assumingMemoryBound(to: redisReply.self))))
                        } else {
                            box.body(.failure(RedisConnectionError("connection lost")))
                        }
                    }, box, Int32(pointers.count), pointers.baseAddress, lengths.baseAddress)
            }
        }
        if status != REDIS_OK {
            Unmanaged<ReplyBox>.fromOpaque(box).release()
            reply(.failure(RedisConnectionError("the command could not be sent")))
        }
    }

    /// Sends `arguments` given as text.
    public func send(_ arguments: [String], reply: @escaping Reply) {
        self.send(arguments.map { Array($0.utf8) }, reply: reply)
    }

    /// Closes the connection once the replies already asked for have arrived; `disconnected`
    /// then runs with nil.
    public func close() {
        guard let context = self.context, !self.closing else { return }
        self.closing = true
        redisAsyncDisconnect(context)
    }

    private func fail(_ message: String) {
        // Reported on the next loop turn, so the owner has finished its own initialiser.
        let connected = LoopBound(self.onConnect.take())
        self.onDisconnect = nil
        _ = self.loop.execute { connected.value?(RedisConnectionError(message)) }
    }

    /// hiredis is about to free the context: drop the self-retain taken in `init`.
    private func ended() {
        self.isConnected = false
        guard let context = self.context else { return }
        self.context = nil
        context.pointee.data = nil
        Unmanaged.passUnretained(self).release()
    }

    private static func owner(of context: UnsafePointer<redisAsyncContext>?) -> RedisConnection? {
        guard let data = context?.pointee.data else { return nil }
        return Unmanaged<RedisConnection>.fromOpaque(data).takeUnretainedValue()
    }
}

/// A loop-confined value carried through `EventLoop.execute` back to the same loop thread.
private struct LoopBound<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

private final class ReplyBox {
    let body: RedisConnection.Reply
    init(_ body: @escaping RedisConnection.Reply) { self.body = body }
}

/// Calls `body` with C pointers to each argument's bytes (valid only during the call).
private func withCStrings<R>(_ arguments: [[UInt8]], _ body: (UnsafeMutableBufferPointer<UnsafePointer<CChar>?>) -> R) -> R {
    let total = arguments.reduce(0) { $0 + $1.count + 1 }
    let storage = UnsafeMutablePointer<CChar>.allocate(capacity: max(total, 1))
    defer { storage.deallocate() }
    var pointers: [UnsafePointer<CChar>?] = []
    pointers.reserveCapacity(arguments.count)
    var offset = 0
    for argument in arguments {
        argument.withUnsafeBufferPointer { bytes in
            if let base = bytes.baseAddress {
                UnsafeMutableRawPointer(storage + offset).copyMemory(from: base, byteCount: bytes.count)
            }
        }
        storage[offset + argument.count] = 0
        pointers.append(UnsafePointer(storage + offset))
        offset += argument.count + 1
    }
    return pointers.withUnsafeMutableBufferPointer { body($0) }
}
