import Testing

@testable import IsletStore

@Suite("Schema migrations")
struct MigrationTests {
    @Test("Migration steps are numbered 1, 2, 3… in order")
    func stepsAreNumberedInOrder() {
        let versions = StoreSchema.migrations.map(\.version)
        #expect(versions == Array(1...Int32(versions.count)))
        #expect(StoreSchema.latestVersion == Int32(versions.count))
    }

    @Test("A version-1 database is upgraded to the latest version, keeping its records and epoch")
    func upgradesVersionOne() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            let epoch: String
            do {
                let v1 = try SQLiteConnection(path: path)
                try StoreSchema.migrate(v1, to: 1)
                try v1.execute("INSERT INTO record VALUES (1, 1000, 1, x'0102'), (2, 2000, 2, x'')")
                epoch = try StoreSchema.readEpoch(v1)
                #expect(try v1.scalarInt64("PRAGMA user_version") == 1)
                #expect(try v1.scalarInt64("SELECT count(*) FROM sqlite_schema WHERE name = 'snapshot'") == 0)
            }

            let log = try openLog(path)
            #expect(try log.connection.scalarInt64("PRAGMA user_version") == Int64(StoreSchema.latestVersion))
            #expect(log.epoch == epoch)
            #expect(log.lastSequence == 2)
            #expect(
                try readAll(log) == [
                    LogRecord(sequence: 1, instant: 1000, kind: .batch, payload: [1, 2]),
                    LogRecord(sequence: 2, instant: 2000, kind: .tick, payload: []),
                ])
            try log.writeSnapshot(sequence: 2, instant: 2000, payload: [9])
            #expect(try log.latestSnapshot()?.payload == [9])
        }
    }

    @Test("Opening an up-to-date database runs no migration and changes nothing")
    func upToDateIsUntouched() throws {
        try withTemporaryDirectory { dir in
            let path = dir.file("islet.sqlite")
            do { try openLog(path).append(records(1...3)) }
            let connection = try SQLiteConnection(path: path)
            #expect(try StoreSchema.migrate(connection) == StoreSchema.latestVersion)
            #expect(try connection.scalarInt64("SELECT count(*) FROM record") == 3)
        }
    }
}
