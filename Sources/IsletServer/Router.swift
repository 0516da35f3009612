public import IsletCore
public import IsletTransport

/// What a route handler receives.
public struct RouteContext: Sendable {
    public let request: HTTPRequest
    /// Values of the pattern's `{name}` segments, percent-decoded.
    public let parameters: [String: String]
    /// The parsed body, for routes declared with `body: .json`.
    public let json: JSONValue?
    /// Answers the request later (for handlers that return `.later`). Loop thread only.
    public let respondLater: @Sendable (HTTPResponse) -> Void
    /// The token the request presented (`Authorization: Bearer`), or "" (rate-limit key).
    public let token: String
}

/// A handler's answer: a response now, or a promise to call `respondLater` once.
public enum RouteReply: Sendable {
    case now(HTTPResponse)
    case later
}

/// The body a route accepts.
public enum RouteBody: Sendable {
    /// No body is read (one sent is ignored).
    case none
    /// A JSON body: `Content-Type: application/json` (else 415) holding valid JSON (else 400).
    case json
    /// A JSON body as for `.json`, or an empty body (then `json` is nil).
    case optionalJSON
}

/// A route: method + path pattern → handler.
public struct Route: Sendable {
    public typealias Handler = @Sendable (RouteContext) throws(APIError) -> RouteReply

    public let method: HTTPMethod
    /// The pattern as written, e.g. `/v1/devices/{id}`; also the route's metrics label.
    public let pattern: String
    public let body: RouteBody
    /// What the request must present when tokens are configured.
    public let access: RouteAccess
    let segments: [Segment]
    let handler: Handler

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    public init(
        _ method: HTTPMethod, _ pattern: String, body: RouteBody = .none, access: RouteAccess = .read,
        _ handler: @escaping Handler
    ) {
        precondition(pattern.hasPrefix("/"), "route patterns start with /")
        self.method = method
        self.pattern = pattern
        self.body = body
        self.access = access
        self.handler = handler
        self.segments = Route.split(pattern).map { segment in
            segment.hasPrefix("{") && segment.hasSuffix("}")
                ? .parameter(String(segment.dropFirst().dropLast())) : .literal(segment)
        }
    }

    static func split(_ path: String) -> [String] {
        path.split(separator: "/" as Character, omittingEmptySubsequences: false).dropFirst().map(String.init)
    }

    func parameters(matching segments: [String]) -> [String: String]? {
        guard segments.count == self.segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (pattern, segment) in zip(self.segments, segments) {
            switch pattern {
            case .literal(let literal): guard literal == segment else { return nil }
            case .parameter(let name):
                guard !segment.isEmpty else { return nil }
                parameters[name] = segment
            }
        }
        return parameters
    }
}

/// Matches requests to routes. `HEAD` is answered by the `GET` route of the same path.
public struct Router: Sendable {
    public enum Match {
        case found(Route, parameters: [String: String])
        /// The path exists with other methods.
        case methodNotAllowed(allowed: [HTTPMethod])
        case notFound
    }

    public private(set) var routes: [Route] = []

    public init() {}

    /// Adds a route. Later routes never shadow earlier ones with the same method and pattern.
    public mutating func add(_ route: Route) { self.routes.append(route) }

    public mutating func add(
        _ method: HTTPMethod, _ pattern: String, body: RouteBody = .none, access: RouteAccess = .read,
        _ handler: @escaping Route.Handler
    ) {
        self.add(Route(method, pattern, body: body, access: access, handler))
    }

    /// The route for `method` and `path`.
    /// - Complexity: O(routes × segments).
    public func match(_ method: HTTPMethod, _ path: String) -> Match {
        let segments = Route.split(path)
        var allowed: [HTTPMethod] = []
        let wanted = method == .HEAD ? HTTPMethod.GET : method
        for route in self.routes {
            guard let parameters = route.parameters(matching: segments) else { continue }
            if route.method == wanted { return .found(route, parameters: parameters) }
            allowed.append(route.method)
        }
        if allowed.contains(.GET) { allowed.append(.HEAD) }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed)
    }
}
