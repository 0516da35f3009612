import IsletCore
import IsletTestSupport
import IsletTransport
import Testing

@testable import IsletServer

/// A server on an in-memory transport: the whole HTTP and stream logic, no sockets.
func makeServer(
    _ configuration: IsletConfiguration = .testing(virtualClockStart: nil), routes: [Route] = [], epoch: String? = nil,
    commitStage: any CommitStage = ImmediateCommitStage(),
    time: SettableTimeSource = SettableTimeSource(now: Instant(millisecondsSinceEpoch: 1_795_766_400_000))
) throws -> (IsletServer, InMemoryTransport) {
    let transport = InMemoryTransport(outboundCapBytes: configuration.limits.outboundBytes)
    let server = try IsletServer(
        configuration: configuration, transport: transport, logger: makeTestLogger(), timeSource: time,
        commitStage: commitStage, epoch: epoch, routes: routes)
    transport.delegate = server
    return (server, transport)
}

@Suite("Server on the in-memory transport")
struct InMemoryServerTests {
    @Test("healthz, unknown routes and wrong methods")
    func routing() throws {
        let (server, transport) = try makeServer()
        #expect(transport.request(.GET, "/healthz")?.body == Array(#"{"status":"ok"}"#.utf8))
        #expect(transport.request(.GET, "/v2/missing")?.status == 404)
        let wrong = try #require(transport.request(.PUT, "/healthz"))
        #expect(wrong.status == 405)
        #expect(wrong.headers["allow"] == "GET, HEAD, OPTIONS")
        let options = try #require(transport.request(.OPTIONS, "/healthz"))
        #expect(options.status == 204)
        #expect(options.headers["allow"] == "GET, HEAD, OPTIONS")
        _ = server
    }

    @Test("a refused body becomes 413 or 400 in the API error format")
    func bodyProblems() throws {
        let (server, transport) = try makeServer(routes: [echoRoute])
        let large = try #require(transport.request(.POST, "/test/echo", bodyProblem: .tooLarge(limit: 10)))
        #expect(large.status == 413)
        #expect(try JSONParser().parse(large.body)["error"]?["code"] == "payload_too_large")
        let chunked = try #require(transport.request(.POST, "/test/echo", bodyProblem: .lengthRequired))
        #expect(chunked.status == 400)
        _ = server
    }

    @Test("JSON routes check the content type, then the JSON")
    func jsonRoutes() throws {
        let (server, transport) = try makeServer(routes: [echoRoute])
        let json: HTTPHeaders = ["content-type": "application/json; charset=utf-8"]
        #expect(transport.request(.POST, "/test/echo", headers: json, body: Array("[1]".utf8))?.status == 200)
        #expect(transport.request(.POST, "/test/echo", headers: json, body: Array("[1,".utf8))?.status == 400)
        #expect(transport.request(.POST, "/test/echo", headers: ["content-type": "text/json"], body: [])?.status == 415)
        #expect(transport.request(.POST, "/test/echo", body: Array("[1]".utf8))?.status == 415)
        _ = server
    }

    @Test("route parameters are matched and passed")
    func parameters() throws {
        let route = Route(.PUT, "/test/devices/{id}") { context in
            .now(.json(["id": .string(context.parameters["id"] ?? "")]))
        }
        let (server, transport) = try makeServer(routes: [route])
        let reply = try #require(transport.request(.PUT, "/test/devices/demo-1"))
        #expect(reply.body == Array(#"{"id":"demo-1"}"#.utf8))
        #expect(transport.request(.PUT, "/test/devices/")?.status == 404)
        #expect(transport.request(.PUT, "/test/devices/a/b")?.status == 404)
        _ = server
    }

    @Test("a handler may answer later")
    func deferredReply() throws {
        nonisolated(unsafe) var later: (@Sendable (HTTPResponse) -> Void)?
        let route = Route(.GET, "/test/later") { context in
            later = context.respondLater
            return .later
        }
        let (server, transport) = try makeServer(routes: [route])
        #expect(transport.request(.GET, "/test/later") == nil)
        later?(.json(["done": true]))
        #expect(transport.responses.values.first?.status == 200)
        _ = server
    }

    @Test("a POST to a static file is 405 with GET and HEAD allowed")
    func staticWrongMethod() throws {
        let (server, transport) = try makeServer()
        let reply = try #require(transport.request(.POST, "/index.html"))
        #expect(reply.status == 405)
        #expect(reply.headers["allow"]?.contains("HEAD") == true)
        _ = server
    }
}

@Suite("Stream sessions on the in-memory transport")
struct InMemoryStreamTests {
    @Test("hello carries the epoch and the published revision, the version and the limits")
    func hello() throws {
        let (server, transport) = try makeServer(epoch: "e-42")
        let id = try #require(transport.openWebSocket())
        let text = String(decoding: transport.sent(to: id)[0].bytes, as: UTF8.self)
        #expect(text.contains(#""epoch":"e-42""#))
        #expect(text.contains(#""rev":0"#))
        let hello = try transport.sentJSON(to: id)[0]
        #expect(hello["type"] == "hello")
        #expect(hello["server"] == .string("islet/\(IsletVersion.current)"))
        #expect(hello["limits"]?["maxSubscriptions"] == 64)
        #expect(server.openStreams == 1)
    }

    @Test("upgrades need /v1/stream and islet.v1")
    func upgradeRules() throws {
        let (server, transport) = try makeServer()
        #expect(transport.openWebSocket(subprotocol: nil) == nil)
        #expect(transport.openWebSocket(path: "/v1/other") == nil)
        #expect(transport.openWebSocket() != nil)
        _ = server
    }

    @Test("ping, unknown op, non-object, missing op, binary and malformed messages")
    func messages() throws {
        let (server, transport) = try makeServer()
        let id = try #require(transport.openWebSocket())
        transport.receive(text: #"{"op":"ping","id":{"n":1}}"#, from: id)
        transport.receive(text: #"{"op":"fly","id":3}"#, from: id)
        transport.receive(text: #"[1,2]"#, from: id)
        transport.receive(text: #"{"id":"x"}"#, from: id)
        transport.receive(.binary([1, 2, 3]), from: id)
        transport.receive(text: #"{"op":"#, from: id)
        let replies = try transport.sentJSON(to: id).dropFirst()
        #expect(replies.map { $0["type"] } == ["pong", "error", "error", "error", "error", "error"])
        #expect(replies.map { $0["id"] } == [["n": 1], 3, .null, "x", .null, .null])
        #expect(
            replies.dropFirst().map { $0["error"]?["code"] } == [
                "invalid_argument", "invalid_argument", "invalid_argument", "invalid_argument", "invalid_json",
            ])
        #expect(transport.isOpen(id))
        _ = server
    }

    @Test("shutdown closes every stream with 1001 and completes")
    func shutdown() throws {
        let (server, transport) = try makeServer()
        let a = try #require(transport.openWebSocket())
        let b = try #require(transport.openWebSocket())
        var completed = false
        server.shutdown { completed = true }
        #expect(transport.closes[a]?.code == .goingAway)
        #expect(transport.closes[b]?.code == .goingAway)
        #expect(completed)
        #expect(!transport.isAccepting)
        #expect(transport.openWebSocket() == nil)
        #expect(server.openStreams == 0)
    }
}
