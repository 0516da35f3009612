import IsletCore
import IsletServer
import IsletTestSupport
import Testing

@testable import IsletStore

/// A world store that cannot write (a full disk, staged with SQLite triggers the server's own
/// connection obeys): what was acknowledged stays true.
@Suite("Simulations: a world store that cannot write")
struct LiveWorldStoreFailureTests {
    /// A server configuration with its store in `dir`, and a connection of the test's own to
    /// `file` there, for the triggers that make the server's writes fail.
    static func store(in dir: TemporaryDirectory, failing file: String) throws -> (IsletConfiguration, SQLiteConnection) {
        var configuration = IsletConfiguration.testing()
        configuration.store.path = dir.file("islet.sqlite")
        return (configuration, try SQLiteConnection(path: dir.file(file)))
    }

    @Test("its source's delete is refused (503) while the write fails, done once it succeeds; the fork survives a restart")
    func sourceKeptUntilWritten() async throws {
        try await withTemporaryDirectory { dir in
            // SQLite refuses the genesis as a full disk would: a trigger on the world store's
            // snapshots, which the server's own connection obeys.
            let (configuration, store) = try Self.store(in: dir, failing: "islet.simulations.sqlite")
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

    @Test("a delete that cannot be written is 500 and the simulation stays (refusing commands, then whole after a restart); once it can be, 200 for good")
    func deleteIsAcknowledgedWhenWritten() async throws {
        try await withTemporaryDirectory { dir in
            let (configuration, store) = try Self.store(in: dir, failing: "islet.simulations.sqlite")
            let document: [UInt8] = try await withRunningServer(configuration) { server in
                let port = server.port
                _ = try LiveSimulationsTests.created(try TestHTTP.createSimulation(port: port, ["id": "kept"]))
                _ = try TestHTTP.commands(port: port, LiveSimulationsTests.world(now: "2027-05-01T10:00:00Z"), simulation: "kept")
                try store.execute(
                    """
                    CREATE TRIGGER full_disk BEFORE DELETE ON world WHEN OLD.name = 'kept'
                    BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;
                    """)
                let refused = try TestHTTP.request(port: port, "DELETE", "/v1/simulations/kept")
                #expect(refused.status == 500 && refused.errorCode == "internal", "\(refused.text)")
                #expect(try TestHTTP.request(port: port, "/v1/simulations/kept").status == 200)
                #expect(try TestHTTP.commands(port: port, [Fixture.device], simulation: "kept").status == 500)
                return try LiveSimulationsTests.document(port, "kept").bytes
            }
            try await withRunningServer(configuration) { server in
                let port = server.port
                let restored = try LiveSimulationsTests.document(port, "kept")
                #expect(restored.bytes == document, "its log was intact")
                let command = try TestHTTP.commands(port: port, [Fixture.device], simulation: "kept")
                #expect(command.status == 200)
                try store.execute("DROP TRIGGER full_disk")
                let deleted = try TestHTTP.request(port: port, "DELETE", "/v1/simulations/kept")
                #expect(deleted.status == 200, "\(deleted.text)")
            }
            try await withRunningServer(configuration) { server in
                let gone = try TestHTTP.request(port: server.port, "/v1/simulations/kept")
                #expect(gone.status == 404)
            }
        }
    }

    @Test("a commit that cannot be written is 500, and reads and forks then show the published revision, never the refused batch")
    func failedCommitServesThePublishedRevision() async throws {
        try await withTemporaryDirectory { dir in
            let (configuration, log) = try Self.store(in: dir, failing: "islet.sqlite")
            try await withRunningServer(configuration) { server in
                let port = server.port
                _ = try TestHTTP.commands(port: port, LiveSimulationsTests.world(now: "2027-05-01T10:00:00Z"))
                let before = try LiveSimulationsTests.document(port, nil)
                try log.execute(
                    "CREATE TRIGGER full_disk BEFORE INSERT ON record BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;")
                let refused = try TestHTTP.commands(port: port, [["type": "device.upsert", "id": "refused"]])
                #expect(refused.status == 500, "\(refused.text)")
                let after = try LiveSimulationsTests.document(port, nil)
                #expect(after.bytes == before.bytes && after.rev == before.rev, "the published revision, as a restart will show")
                _ = try LiveSimulationsTests.created(
                    try TestHTTP.createSimulation(port: port, ["id": "copy", "from": ["simulation": "default"]]))
                let copied = try LiveSimulationsTests.document(port, "copy")
                #expect(copied.bytes == before.bytes, "the fork copies the published revision")
                #expect(try TestHTTP.commands(port: port, [Fixture.device]).status == 500, "commands stay refused")
            }
        }
    }
}

