public import IsletCore
public import IsletTransport

/// A response read by `TestHTTPConnection`.
public struct TestHTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public var text: String { String(decoding: self.body, as: UTF8.self) }

    /// The body parsed as JSON.
    public func json() throws -> JSONValue { try JSONParser.stored.parse(self.body) }

    /// The `error.code` of an API error body, if the body is one.
    public var errorCode: String? { (try? self.json())?["error"]?["code"]?.stringValue }
}

/// A minimal HTTP/1.1 client over one real socket, for tests. Every read has a timeout.
public final class TestHTTPConnection {
    public let socket: TestSocket
    private var buffer: [UInt8] = []
    public var timeout: Duration

    public init(port: Int, timeout: Duration = .seconds(5), receiveBufferBytes: Int? = nil) throws {
        self.socket = try TestSocket.connect(port: port, timeout: timeout, receiveBufferBytes: receiveBufferBytes)
        self.timeout = timeout
    }

    /// Sends a request and reads its response.
    public func request(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil
    ) throws -> TestHTTPResponse {
        try self.send(method, path, headers: headers, body: body)
        return try self.readResponse(isHead: method == "HEAD")
    }

    /// Sends a request without reading the response.
    public func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws {
        var head = "\(method) \(path) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += "Host: 127.0.0.1\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body, !headers.contains(where: { $0.0.lowercased() == "content-length" }) {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += "\r\n"
        try self.socket.write(Array(head.utf8) + (body ?? []), timeout: self.timeout)
    }

    /// Sends bytes exactly as given (for malformed or unnormalised requests).
    public func sendRaw(_ text: String) throws { try self.socket.write(Array(text.utf8), timeout: self.timeout) }

    /// Reads one response (status line, headers, `Content-Length` body).
    public func readResponse(isHead: Bool = false) throws -> TestHTTPResponse {
        let headEnd = try self.readUntilHeadEnd()
        let headText = String(decoding: self.buffer[..<headEnd], as: UTF8.self)
        self.buffer.removeFirst(headEnd + 4)
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw TestClientError("bad status line in \(headText)")
        }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(
                name: String(line[..<colon]),
                value: String(line[line.index(after: colon)...].drop { $0 == " " }))
        }
        let length = isHead || status == 304 || status == 101 ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        while self.buffer.count < length {
            let more = try self.socket.read(timeout: self.timeout)
            guard !more.isEmpty else { throw TestClientError("connection closed inside a body") }
            self.buffer += more
        }
        let body = Array(self.buffer.prefix(length))
        self.buffer.removeFirst(length)
        return TestHTTPResponse(status: status, headers: headers, body: body)
    }

    /// Bytes read past the last response (a WebSocket's first frames after the 101).
    public func takeBuffered() -> [UInt8] {
        defer { self.buffer = [] }
        return self.buffer
    }

    /// True if the server closed the connection (reads end of stream within the timeout).
    public func isClosedByServer() throws -> Bool {
        try self.socket.read(timeout: self.timeout).isEmpty
    }

    private func readUntilHeadEnd() throws -> Int {
        let marker: [UInt8] = [13, 10, 13, 10]
        while true {
            if self.buffer.count >= 4 {
                for index in 0...(self.buffer.count - 4) where self.buffer[index..<index + 4].elementsEqual(marker) {
                    return index
                }
            }
            let more = try self.socket.read(timeout: self.timeout)
            guard !more.isEmpty else { throw TestClientError("connection closed before a response") }
            self.buffer += more
        }
    }
}

/// One-shot HTTP requests.
public enum TestHTTP {
    /// Opens a connection, sends one request and returns the response.
    public static func request(
        port: Int, _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        timeout: Duration = .seconds(5)
    ) throws -> TestHTTPResponse {
        let connection = try TestHTTPConnection(port: port, timeout: timeout)
        defer { connection.socket.close() }
        return try connection.request(method, path, headers: headers, body: body)
    }

    /// A GET request.
    public static func request(
        port: Int, _ path: String, headers: [(String, String)] = [], timeout: Duration = .seconds(5)
    )
        throws -> TestHTTPResponse
    {
        try self.request(port: port, "GET", path, headers: headers, timeout: timeout)
    }

    /// `request` with a JSON body (`Content-Type: application/json`).
    public static func postJSON(
        port: Int, _ path: String, _ json: String, method: String = "POST"
    ) throws
        -> TestHTTPResponse
    {
        try self.request(
            port: port, method, path, headers: [("Content-Type", "application/json")], body: Array(json.utf8))
    }
}
