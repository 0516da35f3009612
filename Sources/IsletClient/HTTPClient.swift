import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The CLI's HTTP requests (`islet push`, `islet sim`, `islet tail`'s epoch look-up and the
/// benchmarks' setup), through the toolchain's `URLSession` (libcurl on Linux).
public enum HTTPClient {
    public struct Reply: Sendable {
        public var status: Int
        /// Header names in lower case.
        public var headers: [String: String]
        public var body: [UInt8]
    }

    /// One session for the process, so consecutive requests reuse their connection.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }()

    /// Sends one request to `http://host:port` + `path` (which includes any query).
    public static func request(
        host: String, port: Int, method: String, path: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) async throws -> Reply {
        guard let url = URL(string: "http://\(host):\(port)\(path)") else {
            throw HTTPClientError("http://\(host):\(port)\(path) is not a URL")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if !body.isEmpty || method == "POST" || method == "PUT" { request.httpBody = Data(body) }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await Self.session.data(for: request)
        } catch {
            throw HTTPClientError("cannot reach \(host):\(port): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else { throw HTTPClientError("no HTTP response") }
        var replyHeaders: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { replyHeaders[name.lowercased()] = value }
        }
        return Reply(status: http.statusCode, headers: replyHeaders, body: [UInt8](data))
    }
}

/// Why a CLI request got no HTTP reply.
public struct HTTPClientError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}
