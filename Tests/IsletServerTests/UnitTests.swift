import IsletCore
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletServer

@Suite("Errors, configuration, router and static files")
struct ServerUnitTests {
    @Test(
        "each API error code has its HTTP status",
        arguments: [
            (APIError.Code.invalidJSON, 400), (.invalidArgument, 400), (.unauthorized, 401), (.forbidden, 403),
            (.notFound, 404), (.methodNotAllowed, 405), (.conflict, 409), (.payloadTooLarge, 413),
            (.unsupportedMediaType, 415), (.limitExceeded, 422), (.rateLimited, 429), (.internal, 500),
        ])
    func statuses(code: APIError.Code, status: Int) throws {
        let error = APIError(code, "m", field: "/a/0")
        let response = error.httpResponse()
        #expect(response.status == status)
        #expect(
            try JSONParser().parse(response.body) == [
                "error": ["code": .string(code.rawValue), "message": "m", "field": "/a/0"]
            ])
        #expect(
            try JSONParser().parse(error.streamMessage(id: "c1")) == [
                "type": "error", "id": "c1",
                "error": ["code": .string(code.rawValue), "message": "m", "field": "/a/0"],
            ])
    }

    @Test("validate reports every problem at once")
    func validation() {
        var configuration = IsletConfiguration(host: "0.0.0.0", port: 70000)
        configuration.limits.outboundBytes = 0
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        do {
            try configuration.validate()
        } catch {
            #expect(error.problems.map(\.setting) == ["port", "admin-token", "limits.outboundBytes"])
        }
        configuration = IsletConfiguration(host: "0.0.0.0", adminToken: "0123456789abcdef")
        #expect(throws: Never.self) { try configuration.validate() }
        #expect(throws: Never.self) { try IsletConfiguration().validate() }
    }

    @Test(
        "a snapshot interval that is not a finite positive number of seconds is refused",
        arguments: [0, -1, .infinity, .nan, 1e20])
    func snapshotInterval(seconds: Double) {
        var configuration = IsletConfiguration()
        configuration.store.snapshotEverySeconds = seconds
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
    }

    @Test("router: HEAD uses GET, 405 lists the methods, parameters bind one segment")
    func router() {
        var router = Router()
        router.add(.GET, "/a/{id}") { _ in .now(HTTPResponse(status: 200)) }
        router.add(.DELETE, "/a/{id}") { _ in .now(HTTPResponse(status: 204)) }
        guard case .found(_, let parameters) = router.match(.HEAD, "/a/x") else {
            Issue.record("no match")
            return
        }
        #expect(parameters == ["id": "x"])
        guard case .methodNotAllowed(let allowed) = router.match(.POST, "/a/x") else {
            Issue.record("no 405")
            return
        }
        #expect(allowed == [.GET, .DELETE, .HEAD])
        guard case .notFound = router.match(.GET, "/a") else {
            Issue.record("matched /a")
            return
        }
    }

    @Test(
        "static paths that may not be served",
        arguments: [
            "/../Package.swift", "/a/../../Package.swift", "/.hidden", "/%2e%2e/x", "/a\\b", "relative", "/x\0y",
        ])
    func refusedPaths(path: String) throws {
        let files = try StaticFiles(directory: PackagePaths.publicDirectory)
        #expect(files.resolve(path) == nil)
    }

    @Test("MIME types by extension")
    func mime() {
        #expect(MIMEType.forPath("/x/index.html") == "text/html; charset=utf-8")
        #expect(MIMEType.forPath("/a.mjs") == "text/javascript; charset=utf-8")
        #expect(MIMEType.forPath("/a.SVG") == "image/svg+xml")
        #expect(MIMEType.forPath("/a.d/noext") == "application/octet-stream")
    }

    @Test(
        "HTTP dates",
        arguments: [
            (0, "Thu, 01 Jan 1970 00:00:00 GMT"), (1_795_334_400, "Sun, 22 Nov 2026 08:00:00 GMT"),
            (951_782_400, "Tue, 29 Feb 2000 00:00:00 GMT"),
        ])
    func dates(seconds: Int, text: String) {
        #expect(httpDate(secondsSince1970: seconds) == text)
    }

    @Test("a missing public directory or index.html is a configuration error")
    func publicDirectory() {
        #expect(throws: ConfigurationError.self) { try StaticFiles(directory: "/nonexistent/dir") }
        #expect(throws: ConfigurationError.self) { try StaticFiles(directory: PackagePaths.root + "/Sources") }
    }
}

@Suite("APNs token and apns-id syntax")
struct APNsSyntaxTests {
    @Test("device tokens and apns-id are ASCII hexadecimal only: fullwidth digits are refused")
    func asciiHexOnly() {
        #expect(isHexToken("0a1B"))
        #expect(!isHexToken("０１"), "fullwidth digits, which Character.isHexDigit accepts")
        #expect(!isHexToken("ａｂ"))
        #expect(!isHexToken("0g"))
        #expect(isCanonicalUUID("123e4567-e89b-12d3-a456-426614174000"))
        #expect(!isCanonicalUUID("１23e4567-e89b-12d3-a456-426614174000"))
    }
}
