import Foundation
import IsletCore
import IsletTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Simulations with the real `islet` binary: `islet sim`, `islet tail --simulation`, and kill -9
/// while simulations are being created.
@Suite("Simulations with the islet binary")
struct SimulationProcessTests {
    @Test("kill -9 during creates and forks loses no acknowledged simulation")
    func killDuringCreates() throws {
        try withTemporaryDirectory { dir in
            let db = dir.file("islet.sqlite")
            let server = try ServeProcess.start(db: db)
            let acknowledged = Mutex<[String: String]>([:])
            let twelve = DispatchSemaphore(value: 0)
            let port = server.port
            onThreads(3) { index in
                if index == 0 {
                    _ = twelve.wait(timeout: .now() + 30)
                    server.process.send(signal: SIGKILL)
                    return
                }
                for n in 0..<200 {
                    let id = "t\(index)-\(n)"
                    let fork = n.isMultiple(of: 3) && n > 0
                    let body: JSONValue =
                        fork ? ["id": .string(id), "from": ["simulation": .string("t\(index)-\(n - 1)")]] : ["id": .string(id)]
                    guard let reply = try? TestHTTP.createSimulation(port: port, body), reply.status == 201,
                        let epoch = try? reply.json()["epoch"]?.stringValue
                    else { return }
                    if acknowledged.withLock({ $0[id] = epoch; return $0.count == 12 }) { twelve.signal() }
                }
            }
            #expect(try server.process.waitForExit() == SIGKILL)
            let restarted = try ServeProcess.start(db: db)
            defer { _ = try? restarted.stop() }
            let listed = try TestHTTP.request(port: restarted.port, "/v1/simulations").json()["simulations"]?.arrayValue ?? []
            let epochs = Dictionary(
                uniqueKeysWithValues: listed.compactMap { entry in
                    entry["id"]?.stringValue.flatMap { id in entry["epoch"]?.stringValue.map { (id, $0) } }
                })
            let acked = acknowledged.withLock { $0 }
            #expect(acked.count >= 12)
            for (id, epoch) in acked { #expect(epochs[id] == epoch, "\(id) was acknowledged") }
            // At most one creation per client was under way: anything else listed was acknowledged.
            #expect(Set(epochs.keys).subtracting(acked.keys).subtracting(["default"]).count <= 2)
        }
    }

    @Test("islet sim create, fork, list and delete against a running server; islet tail --simulation")
    func simCommands() throws {
        try withTemporaryDirectory { dir in
            let server = try ServeProcess.start(db: dir.file("islet.sqlite"))
            defer { _ = try? server.stop() }
            let url = ["--url", "http://127.0.0.1:\(server.port)"]
            let created = try runIslet(["sim", "create", "alpha", "--virtual-clock", "2027-01-01T08:00:00Z"] + url)
            #expect(created.status == 0, "\(created.errors)")
            #expect(try JSONParser().parse(created.output)["id"] == "alpha")
            _ = try TestHTTP.commands(port: server.port, [Fixture.device], simulation: "alpha")
            let forked = try runIslet(["sim", "fork", "alpha", "beta", "--rev", "1"] + url)
            #expect(forked.status == 0, "\(forked.errors)")
            let badDate = try runIslet(["sim", "create", "delta", "--virtual-clock", "nope"] + url)
            #expect(badDate.status == 64 && badDate.errors.contains("--virtual-clock must be an RFC 3339 date"))
            let negative = try runIslet(["sim", "create", "delta", "--rate", "-1"] + url)
            #expect(negative.status == 1 && negative.errors.contains("/clock/rate"), "the server's refusal: \(negative.errors)")
            let refused = try runIslet(["sim", "fork", "alpha", "gamma", "--rev", "9"] + url)
            #expect(refused.status == 1)
            #expect(refused.errors.contains("the earliest available is 0"), "\(refused.errors)")
            let listed = try runIslet(["sim", "list"] + url)
            let rows = listed.output.split(separator: "\n").map { $0.split(separator: " ").first.map(String.init) ?? "" }
            #expect(rows == ["ID", "alpha", "beta", "default"])
            #expect(listed.output.contains("2027-01-01T08:00:00Z"))
            let tail = try runIslet(["tail", "--simulation", "beta", "--path", "/devices", "--limit", "2"] + url)
            let snapshot = try JSONParser().parse(String(tail.output.split(separator: "\n")[1]))
            #expect(snapshot["simulation"] == "beta")
            #expect(snapshot["value"]?["d1"] != nil, "the fork has alpha's device")
            #expect(try runIslet(["sim", "delete", "beta"] + url).status == 0)
            #expect(try runIslet(["sim", "delete", "beta"] + url).status == 1)
            #expect(try runIslet(["sim", "delete", "../x"] + url).status != 0)
        }
    }
}

/// The commands the process tests send.
private enum Fixture {
    static let device: JSONValue = ["type": "device.upsert", "id": "d1", "model": "iphone-15-pro"]
}
