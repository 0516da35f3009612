import IsletCore
import IsletServer
import IsletTestSupport
import Testing

/// Found by the OpenAPI fuzzing (scripts/openapi-fuzz): libwebsockets 4.1.6 ends the request line
/// at a percent-decoded CR or LF and keeps the path up to it, so `PUT /v1/devices/zz%0Ab` used to
/// create device `zz`. Such a target is now refused before any route sees it.
@Suite("Request targets with an encoded CR or LF on a real socket")
struct LiveRequestTargetTests {
    @Test("a CR or LF in the path or query is 400 invalid_argument, and nothing is applied")
    func refused() async throws {
        try await withRunningServer { server in
            let port = server.port
            let put = try TestHTTP.request(
                port: port, "PUT", "/v1/devices/zz%0Ab", headers: LiveRouteTests.json, body: Array("{}".utf8))
            #expect(put.status == 400)
            #expect(put.errorCode == "invalid_argument")
            for target in ["/v1/state?path=%2Fclock%0D", "/v1/devices/zz%0D%0Ax"] {
                let reply = try TestHTTP.request(port: port, target)
                #expect(reply.status == 400, "\(target): \(reply.text)")
            }
            #expect(try TestHTTP.request(port: port, "/v1/devices/zz").status == 404)
            #expect(try TestHTTP.request(port: port, "/v1/state?path=%2Fclock%09").status == 404)
        }
    }

    @Test("on an APNs path it is 404 BadPath, as APNs answers a bad path")
    func apnsPath() async throws {
        try await withRunningServer { server in
            let reply = try TestHTTP.request(
                port: server.port, "POST", "/3/device/ab%0Acd", headers: LiveRouteTests.json, body: Array("{}".utf8))
            #expect(reply.status == 404)
            #expect(try reply.json()["reason"] == "BadPath")
        }
    }

    @Test("a Content-Length that is not a decimal number of bytes is 400 invalid_argument, and the connection closes")
    func invalidContentLength() async throws {
        try await withRunningServer { server in
            for length in ["-5", "+5", "1e3", "0x10", "99999999999999999999"] {
                let connection = try TestHTTPConnection(port: server.port)
                let reply = try connection.request(
                    "POST", "/v1/commands", headers: LiveRouteTests.json + [("Content-Length", length)])
                #expect(reply.status == 400, "Content-Length \(length): \(reply.text)")
                #expect(reply.errorCode == "invalid_argument")
            }
            #expect(try TestHTTP.request(port: server.port, "/healthz").status == 200)
        }
    }
}
