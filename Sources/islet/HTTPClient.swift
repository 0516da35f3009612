import ArgumentParser
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The CLI's HTTP requests (`islet push`, `islet sim`, `islet tail`'s epoch look-up and the
/// benchmarks' setup), through the toolchain's `URLSession` (libcurl on Linux).
enum HTTPClient {
    struct Reply {
        var status: Int
        /// Header names in lower case.
        var headers: [String: String]
        var body: [UInt8]
    }

    /// One session for the process, so consecutive requests reuse their connection.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: configuration)
    }()

    /// Sends one request to `http://host:port` + `path` (which includes any query).
    static func request(
        host: String, port: Int, method: String, path: String, headers: [(String, String)] = [], body: [UInt8] = []
    ) async throws -> Reply {
        guard let url = URL(string: "http://\(host):\(port)\(path)") else {
            throw ValidationError("http://\(host):\(port)\(path) is not a URL")
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
            throw ValidationError("cannot reach \(host):\(port): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else { throw ValidationError("no HTTP response") }
        var replyHeaders: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { replyHeaders[name.lowercased()] = value }
        }
        return Reply(status: http.statusCode, headers: replyHeaders, body: [UInt8](data))
    }
}
