// Thread and lifetime rules: libwebsockets calls `isletLWSCallback` on the loop thread only.
// The trampoline captures nothing: it finds its `LWSContext` through `lws_context_user` (an
// unretained pointer the context's owner keeps alive until the second lws_context_destroy) and
// hands the typed event to the handler. `input` and `length` are valid only during the call:
// every handler copies what it keeps. This file is the only place that switches on callback
// reasons; each case is one line.

internal import CLibWebSockets
import Logging
import Synchronization

/// A callback's verdict: keep the connection, or close it (return -1 to lws).
enum LWSVerdict {
    case proceed
    case close

    var code: Int32 { self == .proceed ? 0 : -1 }
}

/// The Swift side of every libwebsockets callback Islet handles. Defaults ignore the event.
protocol LWSEvents: AnyObject {
    /// `descriptor` is the accepted socket's.
    func networkConnectionOffered(descriptor: Int) -> LWSVerdict
    func connectionAccepted(_ connection: LWSConnection)
    func httpRequestStarted(_ connection: LWSConnection) -> LWSVerdict
    func httpBodyReceived(_ connection: LWSConnection, _ bytes: UnsafeRawBufferPointer) -> LWSVerdict
    func httpBodyCompleted(_ connection: LWSConnection) -> LWSVerdict
    func httpWritable(_ connection: LWSConnection) -> LWSVerdict
    func httpClosed(_ connection: LWSConnection)
    func upgradeRequested(_ connection: LWSConnection) -> LWSVerdict
    func webSocketOpened(_ connection: LWSConnection) -> LWSVerdict
    func webSocketReceived(_ connection: LWSConnection, _ bytes: UnsafeRawBufferPointer) -> LWSVerdict
    func webSocketWritable(_ connection: LWSConnection) -> LWSVerdict
    func webSocketPeerClosing(_ connection: LWSConnection, _ payload: UnsafeRawBufferPointer) -> LWSVerdict
    func webSocketClosed(_ connection: LWSConnection)
    func clientConnectFailed(_ connection: LWSConnection, _ reason: String?)
    func connectionDestroyed(_ connection: LWSConnection)
}

extension LWSEvents {
    func networkConnectionOffered(descriptor: Int) -> LWSVerdict { .proceed }
    func connectionAccepted(_ connection: LWSConnection) {}
    func httpRequestStarted(_ connection: LWSConnection) -> LWSVerdict { .close }
    func httpBodyReceived(_ connection: LWSConnection, _ bytes: UnsafeRawBufferPointer) -> LWSVerdict { .close }
    func httpBodyCompleted(_ connection: LWSConnection) -> LWSVerdict { .close }
    func httpWritable(_ connection: LWSConnection) -> LWSVerdict { .proceed }
    func httpClosed(_ connection: LWSConnection) {}
    func upgradeRequested(_ connection: LWSConnection) -> LWSVerdict { .close }
    func clientConnectFailed(_ connection: LWSConnection, _ reason: String?) {}
    func connectionDestroyed(_ connection: LWSConnection) {}
}

/// The one `@convention(c)` callback every Islet protocol entry points to.
func isletLWSCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
    _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context),
        let events = Unmanaged<LWSContext>.fromOpaque(owner).takeUnretainedValue().handler
    else { return lws_callback_http_dummy(wsi, reason, user, input, length) }
    let connection = LWSConnection(wsi: wsi)
    let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
    switch reason {
    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
        return events.networkConnectionOffered(descriptor: Int(bitPattern: input)).code
    case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED: events.connectionAccepted(connection)
    case LWS_CALLBACK_HTTP: return events.httpRequestStarted(connection).code
    case LWS_CALLBACK_HTTP_BODY: return events.httpBodyReceived(connection, bytes).code
    case LWS_CALLBACK_HTTP_BODY_COMPLETION: return events.httpBodyCompleted(connection).code
    case LWS_CALLBACK_HTTP_WRITEABLE: return events.httpWritable(connection).code
    case LWS_CALLBACK_CLOSED_HTTP: events.httpClosed(connection)
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: return events.upgradeRequested(connection).code
    // lws 4.1 would upgrade `Upgrade: h2c` to an HTTP/2 of its own (HTTP/2 is the TLS port's,
    // docs/API.md), and turn a `CONNECT` into a raw socket it read for ever: both are hung up.
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        // Read from the header table, not `input`: after answering an unknown upgrade with 403,
        // lws calls this with `input` pointing into a table it may have let go.
        return connection.header(WSI_TOKEN_UPGRADE)?.lowercased() == "websocket" ? 0 : -1
    case LWS_CALLBACK_RAW_ADOPT: return -1
    case LWS_CALLBACK_ESTABLISHED, LWS_CALLBACK_CLIENT_ESTABLISHED: return events.webSocketOpened(connection).code
    case LWS_CALLBACK_RECEIVE, LWS_CALLBACK_CLIENT_RECEIVE: return events.webSocketReceived(connection, bytes).code
    case LWS_CALLBACK_SERVER_WRITEABLE, LWS_CALLBACK_CLIENT_WRITEABLE: return events.webSocketWritable(connection).code
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE: return events.webSocketPeerClosing(connection, bytes).code
    case LWS_CALLBACK_CLOSED, LWS_CALLBACK_CLIENT_CLOSED: events.webSocketClosed(connection)
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        events.clientConnectFailed(connection, input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) })
    case LWS_CALLBACK_WSI_DESTROY: events.connectionDestroyed(connection)
    default: return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    return 0
}

/// Routes libwebsockets' own log lines to swift-log, at low levels: lws errors at info, warnings
/// at debug, notices at trace. lws's log settings are process-wide, so the last installed
/// logger receives them. Lines lws repeats are thinned out (`RepeatedLines`).
enum LWSLog {
    private static let current = Mutex<Logger?>(nil)
    private static let repeats = Mutex(RepeatedLines())

    static func install(logger: Logger) {
        self.current.withLock { $0 = logger }
        var mask = 0
        if logger.logLevel <= .info { mask |= Int(LLL_ERR) }
        if logger.logLevel <= .debug { mask |= Int(LLL_WARN) }
        if logger.logLevel <= .trace { mask |= Int(LLL_NOTICE) }
        lws_set_log_level(Int32(mask), isletLWSLogEmit)
    }

    fileprivate static func emit(_ level: Int32, _ line: UnsafePointer<CChar>?) {
        guard let line, let logger = LWSLog.current.withLock({ $0 }) else { return }
        var text = String(cString: line)
        while text.last?.isNewline == true { text.removeLast() }
        let swiftLevel: Logger.Level =
            level == Int32(LLL_ERR) ? .info : level == Int32(LLL_WARN) ? .debug : .trace
        let now = ContinuousClock.now
        let (logged, leftOut) = self.repeats.withLock { $0.admit(text, at: now) }
        let metadata: Logger.Metadata = ["islet.source": "libwebsockets"]
        for (line, count) in leftOut {
            logger.log(level: swiftLevel, "\(line) (\(count) more in a second, not logged)", metadata: metadata)
        }
        if logged { logger.log(level: swiftLevel, "\(text)", metadata: metadata) }
    }
}

/// The C-callable log emitter given to `lws_set_log_level`.
private func isletLWSLogEmit(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    LWSLog.emit(level, line)
}
