// Thread and lifetime rules: these helpers only read a C result and, for libuv, the static
// string uv_strerror returns; they may be called on any thread and keep no pointer.

internal import CLibUV

/// Checks a libuv result: negative values become a thrown `TransportError` naming the call.
///
/// - Parameters:
///   - rc: The value the libuv function returned.
///   - call: The function's name, for the error and the log.
///   - kind: What the failure means to the caller.
/// - Returns: `rc` when it is not an error (some calls return a count).
/// - Throws: `TransportError` when `rc < 0`.
@discardableResult
func uvCheck(_ rc: Int32, _ call: StaticString, kind: TransportError.Kind = .loopFailed) throws(TransportError)
    -> Int32
{
    guard rc < 0 else { return rc }
    throw TransportError(kind, call: "\(call)", code: rc, message: uvErrorText(rc))
}

/// Checks a libuv result that can only fail through a bug of ours (a closed handle, a bad
/// argument we built), so a failure stops the process with the call's name.
func uvMust(_ rc: Int32, _ call: StaticString) {
    precondition(rc >= 0, "\(call) failed: \(uvErrorText(rc))")
}

/// libuv's description of an error code, e.g. "address already in use".
func uvErrorText(_ rc: Int32) -> String {
    guard let text = uv_strerror(rc) else { return "libuv error \(rc)" }
    return String(cString: text)
}

/// Checks a libwebsockets result: lws reports failure as a negative number or a null pointer.
///
/// - Throws: `TransportError` of `kind` when `rc < 0`.
@discardableResult
func lwsCheck(_ rc: Int32, _ call: StaticString, kind: TransportError.Kind, _ message: @autoclosure () -> String)
    throws(TransportError) -> Int32
{
    guard rc < 0 else { return rc }
    throw TransportError(kind, call: "\(call)", code: rc, message: message())
}

/// Checks a libwebsockets call that returns a pointer, null meaning failure.
func lwsCheck<T>(_ value: T?, _ call: StaticString, kind: TransportError.Kind, _ message: @autoclosure () -> String)
    throws(TransportError) -> T
{
    guard let value else { throw TransportError(kind, call: "\(call)", code: -1, message: message()) }
    return value
}
