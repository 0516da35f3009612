// Thread and lifetime rules: each function here is one short sequence of system calls on a
// path it is given; any thread may call them. Buffers come from Swift arrays and never
// outlive the call; `realpath`'s malloc'd result is freed before returning.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What static file serving needs to know about a file.
struct FileInfo: Equatable {
    var size: Int
    var modifiedSeconds: Int
    var modifiedNanoseconds: Int
    var isRegularFile: Bool
    var isDirectory: Bool
}

/// The few file-system calls Islet's server makes, without Foundation.
enum FileSystem {
    /// The absolute path with every symbolic link and `.`/`..` resolved, or nil if it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Size, modification time and kind of the file at `path` (following links), or nil.
    static func info(_ path: String) -> FileInfo? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let kind = status.st_mode & S_IFMT
        return FileInfo(
            size: Int(status.st_size), modifiedSeconds: Int(status.st_mtim.tv_sec),
            modifiedNanoseconds: Int(status.st_mtim.tv_nsec), isRegularFile: kind == S_IFREG,
            isDirectory: kind == S_IFDIR)
    }

    /// The whole file, or nil if it cannot be read or is larger than `maxBytes`.
    static func read(_ path: String, maxBytes: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<n])
            if bytes.count > maxBytes { return nil }
        }
    }
}
