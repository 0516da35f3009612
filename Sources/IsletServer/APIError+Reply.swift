public import IsletCore
public import IsletTransport

/// The one place where errors become wire replies: an HTTP response or a stream `error` message.
extension APIError {
    /// The HTTP status of each API.md code (documented in docs/API.md).
    public var httpStatus: Int {
        switch self.code {
        case .invalidJSON, .invalidArgument: return 400
        case .unauthorized: return 401
        case .forbidden: return 403
        case .notFound: return 404
        case .methodNotAllowed: return 405
        case .conflict: return 409
        case .payloadTooLarge: return 413
        case .unsupportedMediaType: return 415
        case .limitExceeded: return 422
        case .rateLimited: return 429
        case .unavailable: return 503
        default: return 500
        }
    }

    /// Any error as an API error: an `APIError` as it is, anything else as `internal` with no
    /// detail (the caller logs the original at debug).
    public static func wrapping(_ error: any Error) -> APIError {
        (error as? APIError) ?? APIError(.internal, "internal error")
    }

    /// `{"error": {"code", "message", "field"}}` with the code's status.
    public func httpResponse(headers extra: HTTPHeaders = [:]) -> HTTPResponse {
        var response = HTTPResponse.json(.object(["error": self.json]), status: self.httpStatus)
        for field in extra { response.headers.add(name: field.name, value: field.value) }
        return response
    }

    /// `{"type": "error", "id": id-or-null, "error": {…}}`, encoded.
    public func streamMessage(id: JSONValue = .null) -> [UInt8] {
        JSONValue.object(["type": "error", "id": id, "error": self.json]).encoded
    }
}

extension HTTPResponse {
    /// A JSON response in Islet's canonical encoding.
    public static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: ["content-type": "application/json", "cache-control": "no-store"],
            body: value.encoded)
    }
}
