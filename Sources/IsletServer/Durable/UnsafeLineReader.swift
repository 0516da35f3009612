// Touches the C library for open(2), read(2) and close(2).
//
// Thread and lifetime rules: a reader belongs to one thread at a time; it owns its descriptor and
// closes it at the end of the file or in `deinit`. Buffers are Swift arrays that never outlive a call.

#if canImport(Glibc)
import Glibc
#endif

/// Reads a file one line at a time (lines end with `\n`; the last may not), with flat memory
/// however long the file is: for scenario files of any size.
final class LineReader {
    private var descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private let path: String
    /// The longest line accepted.
    static let maxLineBytes = 64 << 20

    /// Opens `path` for reading.
    /// - Throws: `ScenarioError` naming the file when it cannot be opened.
    init(path: String) throws {
        self.path = path
        self.descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard self.descriptor >= 0 else {
            throw ScenarioError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        if self.descriptor >= 0 { close(self.descriptor) }
    }

    /// The next line without its `\n`, or nil at the end of the file.
    /// - Throws: `ScenarioError` on a read error or a line longer than `maxLineBytes`.
    func next() throws -> [UInt8]? {
        while true {
            if let newline = self.buffer[self.start...].firstIndex(of: 0x0A) {
                defer { self.start = newline + 1 }
                return Array(self.buffer[self.start..<newline])
            }
            if self.start > 0 {
                self.buffer.removeFirst(self.start)
                self.start = 0
            }
            guard self.buffer.count <= Self.maxLineBytes else {
                throw ScenarioError("\(self.path) has a line longer than \(Self.maxLineBytes) bytes")
            }
            guard try self.fill() else {
                if self.buffer.isEmpty { return nil }
                defer { self.buffer = [] }
                return self.buffer
            }
        }
    }

    /// Reads the next chunk; false at the end of the file.
    private func fill() throws -> Bool {
        guard self.descriptor >= 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(self.descriptor, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw ScenarioError("cannot read \(self.path): \(String(cString: strerror(errno)))") }
            if n == 0 {
                close(self.descriptor)
                self.descriptor = -1
                return false
            }
            self.buffer.append(contentsOf: chunk[..<n])
            return true
        }
    }
}
