import IsletCore
import IsletServer
import IsletTestSupport
import Testing

/// Issue 18: a WebSocket that shows no sign of life is pinged, and closed when it does not
/// answer; one that answers stays, however quiet the stream.
@Suite("Idle connections on a live server", .serialized)
struct LiveIdleTests {
    @Test("a silent WebSocket is pinged and then closed; one that answers the pings stays open")
    func pingAndHangUp() async throws {
        var configuration = IsletConfiguration.testing()
        configuration.stream.pingSeconds = 1
        configuration.stream.idleTimeoutSeconds = 2
        try await withRunningServer(configuration) { server in
            let silent = try TestWebSocketClient.connect(port: server.port)
            let alive = try TestWebSocketClient.connect(port: server.port)
            #expect(try silent.readJSON()["type"] == "hello")
            #expect(try alive.readJSON()["type"] == "hello")
            // The answering client: three pings answered is over three seconds, past the hang-up time.
            var answered = 0
            while answered < 3 {
                let frame = try alive.readFrame()
                guard frame.opcode == TestWebSocketClient.Frame.ping else { continue }
                try alive.send(opcode: TestWebSocketClient.Frame.pong, payload: frame.payload)
                answered += 1
            }
            try alive.send(json: ["op": "ping", "id": "still-here"])
            #expect(try alive.read(until: "pong")["id"] == "still-here")
            // The silent one got its ping and was hung up on (it never answered).
            var opcodes: [UInt8] = []
            var closed = false
            while !closed {
                do {
                    let frame = try silent.readFrame()
                    opcodes.append(frame.opcode)
                    closed = frame.opcode == TestWebSocketClient.Frame.close
                } catch {
                    closed = true
                }
            }
            #expect(opcodes.contains(TestWebSocketClient.Frame.ping))
            #expect(!opcodes.contains(TestWebSocketClient.Frame.text))
        }
    }

    @Test("the idle policy is checked: the hang-up must come after the ping")
    func validation() {
        var configuration = IsletConfiguration.testing()
        configuration.stream.pingSeconds = 30
        configuration.stream.idleTimeoutSeconds = 10
        #expect(throws: ConfigurationError.self) { try configuration.validate() }
        configuration.stream.idleTimeoutSeconds = 0
        #expect(throws: Never.self) { try configuration.validate() }
    }
}
