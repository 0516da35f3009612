import IsletCore
import IsletServer
import IsletTestSupport
import IsletTransport
import Testing

/// A JSON route for the body tests: answers with the body it parsed.
let echoRoute = Route(.POST, "/test/echo", body: .json) { context in .now(.json(context.json ?? .null)) }

@Suite("HTTP on a real socket")
struct LiveHTTPTests {
    @Test("GET /healthz answers {\"status\":\"ok\"}")
    func healthz() async throws {
        try await withRunningServer { server in
            let response = try TestHTTP.request(port: server.port, "/healthz")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.text == #"{"status":"ok"}"#)
        }
    }

    @Test("a request whose headers hold 12 KiB (over libwebsockets' 4 KiB default, within Islet's 16 KiB) is answered")
    func largeHeaders() async throws {
        try await withRunningServer { server in
            let cookie = String(repeating: "c", count: 12 * 1024)
            let response = try TestHTTP.request(port: server.port, "/healthz", headers: [("Cookie", "big=" + cookie)])
            #expect(response.status == 200)
        }
    }

    @Test(
        "static files come with their MIME type, an ETag and Last-Modified",
        arguments: [
            ("/", "text/html; charset=utf-8"), ("/index.html", "text/html; charset=utf-8"),
            ("/js/app.js", "text/javascript; charset=utf-8"), ("/css/base.css", "text/css; charset=utf-8"),
        ])
    func staticFile(path: String, type: String) async throws {
        try await withRunningServer { server in
            let response = try TestHTTP.request(port: server.port, path)
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == type)
            #expect(response.headers["etag"] != nil)
            #expect(response.headers["last-modified"]?.hasSuffix(" GMT") == true)
            #expect(!response.body.isEmpty)
        }
    }

    @Test("a matching If-None-Match gives 304 without a body")
    func notModified() async throws {
        try await withRunningServer { server in
            let first = try TestHTTP.request(port: server.port, "/css/base.css")
            let etag = try #require(first.headers["etag"])
            let second = try TestHTTP.request(port: server.port, "/css/base.css", headers: [("If-None-Match", etag)])
            #expect(second.status == 304)
            #expect(second.body.isEmpty)
        }
    }

    @Test("HEAD gives the headers of GET and no body, and the connection stays usable")
    func head() async throws {
        try await withRunningServer { server in
            let connection = try TestHTTPConnection(port: server.port)
            let head = try connection.request("HEAD", "/index.html")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.headers["content-length"].flatMap { Int($0) } ?? 0 > 0)
            let get = try connection.request("GET", "/healthz")
            #expect(get.status == 200)
        }
    }

    @Test(
        "path traversal and its encoded variants are 404",
        arguments: [
            "/../Package.swift", "/%2e%2e/Package.swift", "/%2E%2E%2FPackage.swift", "/..%2fPackage.swift",
            "/.%2e/Package.swift", "/%2e%2e%2f%2e%2e%2fetc/passwd", "/../../../../etc/passwd", "/..\\Package.swift",
            "/%252e%252e/Package.swift", "/.git/config", "/Public/../Package.swift", "//etc/passwd",
        ])
    func traversal(path: String) async throws {
        try await withRunningServer { server in
            let connection = try TestHTTPConnection(port: server.port)
            try connection.sendRaw("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 404 || response.status == 403, "\(path) answered \(response.status)")
            #expect(!response.text.contains("PackageDescription"))
            #expect(!response.text.contains("root:"))
        }
    }

    @Test("an unknown route is 404 not_found in the API error format")
    func unknownRoute() async throws {
        try await withRunningServer { server in
            let response = try TestHTTP.request(port: server.port, "/v1/nothing-here")
            #expect(response.status == 404)
            #expect(response.errorCode == "not_found")
            #expect(try response.json()["error"]?["message"]?.stringValue != nil)
        }
    }

    @Test("a wrong method is 405 method_not_allowed with an Allow header")
    func wrongMethod() async throws {
        try await withRunningServer { server in
            let response = try TestHTTP.request(port: server.port, "DELETE", "/healthz")
            #expect(response.status == 405)
            #expect(response.errorCode == "method_not_allowed")
            #expect(response.headers["allow"]?.contains("GET") == true)
            let post = try TestHTTP.request(port: server.port, "POST", "/healthz", body: [])
            #expect(post.status == 405)
        }
    }

    @Test("every method reaches the router", arguments: ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
    func methods(method: String) async throws {
        let routes = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].map { name in
            Route(HTTPMethod(rawValue: name)!, "/test/method") { context in
                .now(.json(["method": .string(context.request.method.rawValue)]))
            }
        }
        try await withRunningServer(routes: routes) { server in
            let body: [UInt8]? = ["POST", "PUT", "PATCH"].contains(method) ? [] : nil
            let response = try TestHTTP.request(port: server.port, method, "/test/method", body: body)
            #expect(response.status == 200)
            if method != "HEAD" {
                #expect(try response.json()["method"]?.stringValue == method)
            }
        }
    }

    @Test("a JSON body reaches its route")
    func jsonBody() async throws {
        try await withRunningServer(routes: [echoRoute]) { server in
            let response = try TestHTTP.postJSON(port: server.port, "/test/echo", #"{"b": [1, 2], "a": "x"}"#)
            #expect(response.status == 200)
            #expect(response.text == #"{"a":"x","b":[1,2]}"#)
        }
    }

    @Test("a body over the limit is 413 payload_too_large and the connection closes")
    func oversizeBody() async throws {
        var configuration = IsletConfiguration.testing()
        configuration.limits.httpBodyBytes = 1024
        try await withRunningServer(configuration, routes: [echoRoute]) { server in
            let body = Array(repeating: UInt8(ascii: " "), count: 300 * 1024)
            let connection = try TestHTTPConnection(port: server.port)
            let response = try connection.request(
                "POST", "/test/echo", headers: [("Content-Type", "application/json")], body: body)
            #expect(response.status == 413)
            #expect(response.errorCode == "payload_too_large")
            #expect(try connection.isClosedByServer())
        }
    }

    @Test("a body is refused on its Content-Length alone, before it is sent")
    func oversizeBodyNotSent() async throws {
        try await withRunningServer(routes: [echoRoute]) { server in
            let connection = try TestHTTPConnection(port: server.port)
            try connection.send(
                "POST", "/test/echo", headers: [("Content-Type", "application/json"), ("Content-Length", "10000000")])
            let response = try connection.readResponse()
            #expect(response.status == 413)
        }
    }

    @Test("malformed JSON is 400 invalid_json")
    func malformedJSON() async throws {
        try await withRunningServer(routes: [echoRoute]) { server in
            let response = try TestHTTP.postJSON(port: server.port, "/test/echo", #"{"a": [1, 2"#)
            #expect(response.status == 400)
            #expect(response.errorCode == "invalid_json")
        }
    }

    @Test("a body that is not application/json is 415 unsupported_media_type")
    func wrongContentType() async throws {
        try await withRunningServer(routes: [echoRoute]) { server in
            let response = try TestHTTP.request(
                port: server.port, "POST", "/test/echo", headers: [("Content-Type", "text/plain")],
                body: Array("{}".utf8))
            #expect(response.status == 415)
            #expect(response.errorCode == "unsupported_media_type")
        }
    }

    @Test("a large response is written in chunks and arrives whole")
    func largeResponse() async throws {
        let big = JSONValue.string(String(repeating: "islet ", count: 400_000))
        let route = Route(.GET, "/test/big") { _ in .now(.json(["data": big])) }
        try await withRunningServer(routes: [route]) { server in
            let response = try TestHTTP.request(port: server.port, "/test/big")
            #expect(response.status == 200)
            #expect(response.body.count > 2_000_000)
            #expect(try response.json()["data"] == big)
        }
    }

    @Test("keep-alive: several requests on one connection")
    func keepAlive() async throws {
        try await withRunningServer(routes: [echoRoute]) { server in
            let connection = try TestHTTPConnection(port: server.port)
            for index in 0..<5 {
                let response = try connection.request(
                    "POST", "/test/echo", headers: [("Content-Type", "application/json")],
                    body: Array("[\(index)]".utf8))
                #expect(response.text == "[\(index)]")
            }
        }
    }

    @Test("/metrics exposes connections, requests by route and status, and bytes in and out")
    func metrics() async throws {
        try await withRunningServer { server in
            _ = try TestHTTP.request(port: server.port, "/healthz")
            _ = try TestHTTP.request(port: server.port, "/nope")
            let client = try TestWebSocketClient.connect(port: server.port)
            _ = try client.readJSON()
            let text = try TestHTTP.request(port: server.port, "/metrics").text
            #expect(text.contains(#"islet_http_requests_total{route="/healthz",status="200"} 1"#))
            #expect(text.contains(#"islet_http_requests_total{route="unmatched",status="404"} 1"#))
            #expect(text.contains("islet_websocket_connections 1"))
            #expect(text.contains("islet_bytes_sent_total"))
            #expect(text.contains("islet_bytes_received_total"))
            #expect(text.contains("islet_connections_accepted_total"))
            #expect(text.contains("islet_simulations 1"))
            _ = try TestHTTP.createSimulation(port: server.port, ["id": "two"])
            #expect(try TestHTTP.request(port: server.port, "/metrics").text.contains("islet_simulations 2"))
        }
    }

    @Test("/metrics counts group commits, their records and their time")
    func storeMetrics() async throws {
        try await withRunningServer { server in
            _ = try TestHTTP.commands(
                port: server.port, [["type": "device.upsert", "id": "d1", "model": "iphone-15-pro"]])
            _ = try TestHTTP.commands(port: server.port, [["type": "app.upsert", "id": "coffee"]])
            let text = try TestHTTP.request(port: server.port, "/metrics").text
            func value(_ name: String) -> Double? {
                text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
                    Double($0.split(separator: " ")[1])
                }
            }
            #expect(value("islet_store_commits_total") == 2, "\(text)")
            #expect(value("islet_store_records_total") == 2)
            #expect(text.contains("islet_store_commit_seconds"))
        }
    }
}
