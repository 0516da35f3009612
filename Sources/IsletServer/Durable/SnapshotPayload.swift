import IsletCore

/// What the server stores in a snapshot row of the command log: the engine's state and the
/// stream history, so that a restarted server both continues the same simulation and resumes
/// stream clients whose `since` lies before the snapshot.
///
/// Layout (integers little-endian): the magic line `islet.snapshot.v1\n`; the engine snapshot's
/// length (8 bytes) and its canonical JSON (`Engine.snapshotBytes`); the number of history
/// revisions (4 bytes), then for each its `rev` (8 bytes), the length of its encoded operations
/// (8 bytes) and those bytes, exactly as they were published.
package struct SnapshotPayload {
    static let magic = Array("islet.snapshot.v1\n".utf8)

    var engine: [UInt8]
    var history: [RevisionHistory.Entry]

    /// The bytes to store.
    /// - Complexity: O(size of the engine snapshot + history).
    package func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes.reserveCapacity(
            bytes.count + 12 + self.engine.count + self.history.reduce(0) { $0 + 16 + $1.encodedOps.count })
        append(UInt64(self.engine.count), to: &bytes)
        bytes += self.engine
        append(UInt32(self.history.count), to: &bytes)
        for entry in self.history {
            append(entry.rev, to: &bytes)
            append(UInt64(entry.encodedOps.count), to: &bytes)
            bytes += entry.encodedOps
        }
        return bytes
    }

    /// Reads stored bytes back.
    /// - Throws: `SnapshotPayload.Malformed` when the bytes are not a snapshot of this format.
    init(decoding bytes: [UInt8]) throws(Malformed) {
        var reader = ByteReader(bytes)
        guard try reader.bytes(Self.magic.count) == Self.magic else {
            throw Malformed("not an islet.snapshot.v1 payload")
        }
        self.engine = try reader.bytes(Int(clamping: try reader.integer(UInt64.self)))
        let count = try reader.integer(UInt32.self)
        var history: [RevisionHistory.Entry] = []
        for _ in 0..<count {
            let rev = try reader.integer(UInt64.self)
            let ops = try reader.bytes(Int(clamping: try reader.integer(UInt64.self)))
            history.append(RevisionHistory.Entry(rev: rev, encodedOps: ops))
        }
        guard reader.isAtEnd else { throw Malformed("\(reader.remaining) bytes after the history") }
        self.history = history
    }

    package init(engine: [UInt8], history: [RevisionHistory.Entry]) {
        self.engine = engine
        self.history = history
    }

    /// The engine state as a value `Engine(snapshot:renderer:)` takes. Deep member nesting is
    /// allowed: command content is stored several levels down.
    func engineValue() throws(APIError) -> JSONValue {
        try JSONParser(maxDepth: 1024).parse(self.engine)
    }

    struct Malformed: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

private func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
}

/// Reads little-endian integers and byte runs, refusing to read past the end.
private struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { self.offset == self.bytes.count }
    var remaining: Int { self.bytes.count - self.offset }

    mutating func bytes(_ count: Int) throws(SnapshotPayload.Malformed) -> [UInt8] {
        guard count >= 0, count <= self.remaining else {
            throw SnapshotPayload.Malformed("truncated: \(count) bytes wanted, \(self.remaining) left")
        }
        defer { self.offset += count }
        return Array(self.bytes[self.offset..<self.offset + count])
    }

    mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(SnapshotPayload.Malformed) -> T {
        let raw = try self.bytes(MemoryLayout<T>.size)
        var value: T = 0
        for (index, byte) in raw.enumerated() { value |= T(byte) << (8 * index) }
        return value
    }
}
