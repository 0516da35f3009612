// Thread and lifetime rules: a `TestSocket` is used by one test at a time (it is not
// thread-safe). It owns its file descriptor and closes it in `close()` or `deinit`. All
// pointer use is confined to single system calls here; every wait goes through poll() with
// a timeout, so no test can hang on a socket.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A test-side failure: a timeout, a refused connection, a malformed reply.
public struct TestClientError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A non-blocking TCP socket to 127.0.0.1 whose every read and write waits with a timeout.
public final class TestSocket {
    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Connects to `host:port` (IPv4 literal).
    /// - Parameter receiveBufferBytes: A small kernel receive buffer (`SO_RCVBUF`), so that a
    ///   client that stops reading makes the server's queue grow soon.
    public static func connect(
        host: String = "127.0.0.1", port: Int, timeout: Duration = .seconds(5), receiveBufferBytes: Int? = nil
    ) throws -> TestSocket {
        let fd = socket(
            AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestClientError("socket() failed: errno \(errno)") }
        let sock = TestSocket(fd: fd)
        if let size = receiveBufferBytes {
            var value = Int32(size)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw TestClientError("bad address \(host)") }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc != 0 {
            guard errno == EINPROGRESS else { throw TestClientError("connect failed: errno \(errno)") }
            try sock.wait(for: Int16(POLLOUT), timeout: timeout, what: "connect")
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0 else { throw TestClientError("connect to \(host):\(port) failed: errno \(error)") }
        }
        return sock
    }

    /// A port on 127.0.0.1 that nothing listens on (bound, read back, released).
    public static func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 ? getsockname(fd, pointer, &length) : -1
            }
        }
        guard rc == 0 else { throw TestClientError("cannot find a free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8], timeout: Duration = .seconds(5)) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes {
                Glibc.send(self.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                offset += n
            } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                try self.wait(for: Int16(POLLOUT), timeout: timeout, what: "write")
            } else {
                throw TestClientError("write failed: errno \(errno)")
            }
        }
    }

    /// Reads what is available (at most `maxBytes`), waiting up to `timeout` for something.
    /// Returns an empty array at end of stream.
    public func read(maxBytes: Int = 65536, timeout: Duration = .seconds(5)) throws -> [UInt8] {
        while true {
            var buffer = [UInt8](repeating: 0, count: maxBytes)
            let n = buffer.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
            if n >= 0 { return Array(buffer.prefix(n)) }
            if errno == ECONNRESET { return [] }
            guard errno == EAGAIN || errno == EWOULDBLOCK else { throw TestClientError("read failed: errno \(errno)") }
            try self.wait(for: Int16(POLLIN), timeout: timeout, what: "read")
        }
    }

    /// Stops sending (half-close).
    public func shutdownWrite() { _ = Glibc.shutdown(self.fd, Int32(SHUT_WR)) }

    /// Closes the socket. Further use throws.
    public func close() {
        guard self.fd >= 0 else { return }
        _ = Glibc.close(self.fd)
        self.fd = -1
    }

    deinit { self.close() }

    private func wait(for events: Int16, timeout: Duration, what: String) throws {
        var descriptor = pollfd(fd: self.fd, events: events, revents: 0)
        let (seconds, attoseconds) = timeout.components
        let milliseconds = Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        let rc = poll(&descriptor, 1, milliseconds)
        guard rc > 0 else {
            throw TestClientError(rc == 0 ? "\(what) timed out after \(timeout)" : "poll failed: errno \(errno)")
        }
    }
}
