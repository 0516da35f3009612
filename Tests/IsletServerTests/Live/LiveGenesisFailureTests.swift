import IsletCore
import IsletServer
import IsletTestSupport
import Testing

@testable import IsletStore

/// A fork's first snapshot that cannot be written (a full disk): the fork keeps needing its
/// source's log, so the source cannot be deleted until the snapshot is written.
@Suite("Simulations: a fork whose genesis snapshot failed")
struct LiveGenesisFailureTests {
    @Test("its source's delete is refused (503) while the write fails, done once it succeeds; the fork survives a restart")
    func sourceKeptUntilWritten() async throws {
        try await withTemporaryDirectory { dir in
            var configuration = IsletConfiguration.testing()
            configuration.store.path = dir.file("islet.sqlite")
            // SQLite refuses the genesis as a full disk would: a trigger on the world store's
            // snapshots, which the server's own connection obeys.
            let store = try SQLiteConnection(path: dir.file("islet.simulations.sqlite"))
            let before: [UInt8] = try await withRunningServer(configuration) { server in
                let port = server.port
                _ = try LiveSimulationsTests.created(try TestHTTP.createSimulation(port: port, ["id": "src"]))
                _ = try TestHTTP.commands(port: port, LiveSimulationsTests.world(now: "2027-05-01T10:00:00Z"), simulation: "src")
                try store.execute(
                    """
                    CREATE TRIGGER full_disk BEFORE INSERT ON snapshot WHEN NEW.world = 'copy' AND NEW.sequence = 0
                    BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
                    """)
                _ = try LiveSimulationsTests.created(
                    try TestHTTP.createSimulation(port: port, ["id": "copy", "from": ["simulation": "src"]]))
                let refused = try TestHTTP.request(port: port, "DELETE", "/v1/simulations/src")
                #expect(refused.status == 503 && refused.errorCode == "unavailable", "\(refused.text)")
                #expect(try TestHTTP.request(port: port, "/v1/simulations/src").status == 200, "the source is kept")
                try store.execute("DROP TRIGGER full_disk")
                #expect(try TestHTTP.request(port: port, "DELETE", "/v1/simulations/src").status == 200)
                return try LiveSimulationsTests.document(port, "copy").bytes
            }
            try await withRunningServer(configuration) { server in
                let copy = try LiveSimulationsTests.document(server.port, "copy")
                #expect(copy.bytes == before)
                let source = try TestHTTP.request(port: server.port, "/v1/simulations/src")
                #expect(source.status == 404)
            }
        }
    }
}
