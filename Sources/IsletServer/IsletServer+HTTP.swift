import IsletCore
import IsletTransport

extension IsletServer {
    /// Routes a request. Returns the metrics label of what answered it and the reply.
    func handle(_ request: HTTPRequest) -> (route: String, reply: RouteReply) {
        if let limit = request.connectionLimit {
            return ("connection_refused", .now(Self.tooManyConnections(limit, apns: APNsRoutes.requestID(of: request))))
        }
        if let problem = request.bodyProblem {
            if let apns = APNsRoutes.requestID(of: request) {
                return ("body_refused", .now(APNsRoutes.refusal(problem, to: apns)))
            }
            return ("body_refused", .now(self.refusal(problem).httpResponse()))
        }
        if let refusal = self.joiningRefusal(request) { return ("joining", .now(refusal)) }
        switch self.router.match(request.method, request.path) {
        case .found(let route, let parameters):
            return (route.pattern, self.run(route, request, parameters))
        case .methodNotAllowed(let allowed):
            if request.method != .OPTIONS, let apns = APNsRoutes.requestID(of: request) {
                return ("method_not_allowed", .now(APNsRoutes.unrouted(request, to: apns, methodAllowed: false)))
            }
            return ("method_not_allowed", .now(self.notAllowed(request.method, allowed)))
        case .notFound:
            if let apns = APNsRoutes.requestID(of: request) {
                return ("unmatched", .now(APNsRoutes.unrouted(request, to: apns, methodAllowed: true)))
            }
            return self.serveStatic(request)
        }
    }

    /// The reply on a connection beyond `--max-connections`: 503 with `Retry-After`, in the
    /// API's error format (APNs' `ServiceUnavailable` on its paths), closing the connection.
    static func tooManyConnections(_ limit: Int, apns: APNsRoutes.RequestID?) -> HTTPResponse {
        var response = Self.retryShortly(Self.connectionLimitError(limit), apns: apns)
        response.closeConnection = true
        return response
    }

    /// 503 with `Retry-After: 1`: `error` in the API's format, or APNs' `ServiceUnavailable` on
    /// its paths.
    private static func retryShortly(_ error: APIError, apns: APNsRoutes.RequestID?) -> HTTPResponse {
        let unavailable = APNsFailure(status: 503, reason: "ServiceUnavailable")
        var response = apns.map { unavailable.httpResponse(idHeader: $0.header, id: $0.id) } ?? error.httpResponse()
        response.headers.add(name: "retry-after", value: "1")
        return response
    }

    /// A cluster node that has not yet read the log to its end serves only `/healthz`,
    /// `/metrics`, `/v1/cluster` and the dashboard's files: its worlds are not loaded yet (the
    /// `default` it holds is a placeholder of another epoch), so the API answers 503 with
    /// `Retry-After` (APNs' `ServiceUnavailable` on its paths) rather than a wrong world or a 404.
    private func joiningRefusal(_ request: HTTPRequest) -> HTTPResponse? {
        guard let cluster = self.cluster, !cluster.hasJoined else { return nil }
        let apns = APNsRoutes.requestID(of: request)
        guard apns != nil || (request.path.hasPrefix("/v1/") && request.path != "/v1/cluster") else { return nil }
        return Self.retryShortly(Self.joiningError, apns: apns)
    }

    static let joiningError = APIError(
        .unavailable, "this node is joining the cluster (reading the log to its end); retry shortly")

    /// The error told to a client whose connection is beyond `--max-connections`.
    static func connectionLimitError(_ limit: Int) -> APIError {
        var error = APIError(
            .unavailable, "the server serves at most \(limit) connections at once (--max-connections); retry shortly")
        error.limit = "connections"
        return error
    }

    private func refusal(_ problem: HTTPRequest.BodyProblem) -> APIError {
        switch problem {
        case .tooLarge(let limit):
            return APIError(.payloadTooLarge, "request body is larger than \(limit) bytes")
        case .lengthRequired:
            return APIError(.invalidArgument, "chunked request bodies are not accepted: send Content-Length")
        case .invalidLength:
            return APIError(.invalidArgument, "Content-Length must be a number of bytes, in decimal digits")
        case .truncatedTarget:
            return APIError(
                .invalidArgument, "the request target holds a CR or LF (%0D, %0A), which no path or query may hold")
        }
    }

    private func run(_ route: Route, _ request: HTTPRequest, _ parameters: [String: String]) -> RouteReply {
        do throws(APIError) {
            let mutating = request.method != .GET && request.method != .HEAD
            if let refusal = self.access.browserRefusal(headers: request.headers, mutating: mutating) { throw refusal }
            let principal = try self.access.check(route.access, headers: request.headers, scoped: self.simulationTokens)
            // A per-simulation token reaches only routes of its own simulation.
            if let scope = principal.simulation, parameters["simulation"] != scope {
                throw principal.refusal(for: parameters["simulation"] ?? "this route")
            }
            let json: JSONValue?
            switch route.body {
            case .none: json = nil
            case .json: json = try self.jsonBody(of: request)
            case .optionalJSON:
                // (Not a ternary: `nil` there would become JSONValue.null.)
                if request.body.isEmpty {
                    json = Optional<JSONValue>.none
                } else {
                    json = try self.jsonBody(of: request)
                }
            }
            let answered = LoopConfined(self)
            // The rate-limit key: the (checked) token; without tokens, one shared bucket, so that
            // made-up Authorization headers cannot grow the table.
            let token = self.access.isEnabled ? Access.presentedToken(headers: request.headers, query: nil) ?? "" : ""
            let context = RouteContext(
                request: request, parameters: parameters, json: json,
                respondLater: { response in
                    answered.value?.answer(request.id, route: route.pattern, with: response)
                }, token: token)
            return try route.handler(context)
        } catch {
            self.metrics.refused(error)
            return .now(error.httpResponse(headers: error.code == .unauthorized ? ["www-authenticate": "Bearer"] : [:]))
        }
    }

    /// The response to a refusal found after the route returned (a fork waiting for its source,
    /// a cluster's creation), counted as the route's own refusals are.
    func refusal(_ error: APIError) -> HTTPResponse {
        self.metrics.refused(error)
        return error.httpResponse()
    }

    private func jsonBody(of request: HTTPRequest) throws(APIError) -> JSONValue {
        let mediaType = request.headers["content-type"]?.split(separator: ";").first?
            .trimmingCharacters(in: " ").lowercased()
        guard mediaType == "application/json" else {
            throw APIError(.unsupportedMediaType, "send the body as Content-Type: application/json")
        }
        return try JSONParser.input.parse(request.body)
    }

    func notAllowed(_ method: HTTPMethod, _ allowed: [HTTPMethod]) -> HTTPResponse {
        let allow = (allowed + [.OPTIONS]).map(\.rawValue).joined(separator: ", ")
        if method == .OPTIONS { return HTTPResponse(status: 204, headers: ["allow": allow]) }
        return APIError(.methodNotAllowed, "\(method.rawValue) is not allowed here; use \(allow)")
            .httpResponse(headers: ["allow": allow])
    }

    private func serveStatic(_ request: HTTPRequest) -> (route: String, reply: RouteReply) {
        guard let files = self.staticFiles else { return ("unmatched", .now(APIError.notFound.httpResponse())) }
        if request.method == .GET || request.method == .HEAD {
            if let response = files.response(for: request.path, headers: request.headers) {
                return ("static", .now(response))
            }
        } else if files.exists(request.path) {
            return ("static", .now(self.notAllowed(request.method, [.GET, .HEAD])))
        }
        return ("unmatched", .now(APIError(.notFound, "no route or file at \(request.path)").httpResponse()))
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in character: Character) -> Substring {
        var text = self
        while text.first == character { text.removeFirst() }
        while text.last == character { text.removeLast() }
        return text
    }
}
