public import IsletTransport

/// Serves the files of one directory (the dashboard in `Public/`) for GET and HEAD.
///
/// Paths are checked before the file system is touched (no `..`, `.` or hidden segments, no
/// backslashes or NUL), and the resolved file must still lie inside the directory (a symbolic
/// link cannot lead out). Anything else is "not found". Responses carry the MIME type, an
/// `ETag` and `Last-Modified`, and `If-None-Match`/`If-Modified-Since` give 304.
public struct StaticFiles: Sendable {
    /// The directory, as an absolute path with links resolved.
    public let root: String
    /// Files larger than this are not served (the dashboard's files are small).
    public var maxFileBytes = 16 * 1024 * 1024

    /// - Throws: `ConfigurationError` if `directory` does not exist or has no `index.html`.
    public init(directory: String) throws(ConfigurationError) {
        guard let root = FileSystem.realPath(directory), FileSystem.info(root)?.isDirectory == true else {
            throw ConfigurationError(problems: [.init("public-dir", "\(directory) is not a directory")])
        }
        guard FileSystem.info(root + "/index.html")?.isRegularFile == true else {
            throw ConfigurationError(problems: [.init("public-dir", "\(directory) has no index.html")])
        }
        self.root = root
    }

    /// The response for `path`, or nil if no such file may be served.
    public func response(for path: String, headers: HTTPHeaders) -> HTTPResponse? {
        guard let file = self.resolve(path), let info = FileSystem.info(file), info.isRegularFile,
            info.size <= self.maxFileBytes
        else { return nil }
        let etag =
            "\"\(String(info.size, radix: 16))-\(String(info.modifiedSeconds, radix: 16))"
            + "\(String(info.modifiedNanoseconds, radix: 16))\""
        let lastModified = httpDate(secondsSince1970: info.modifiedSeconds)
        var responseHeaders: HTTPHeaders = [
            "etag": etag, "last-modified": lastModified, "cache-control": "no-cache",
            "x-content-type-options": "nosniff",
        ]
        let type = MIMEType.forPath(file)
        if type.hasPrefix("text/html") { responseHeaders.add(name: "content-security-policy", value: Self.policy) }
        if Self.matches(headers["if-none-match"], etag) || headers["if-modified-since"] == lastModified {
            return HTTPResponse(status: 304, headers: responseHeaders)
        }
        guard let body = FileSystem.read(file, maxBytes: self.maxFileBytes) else { return nil }
        responseHeaders.add(name: "content-type", value: type)
        return HTTPResponse(status: 200, headers: responseHeaders, body: body)
    }

    /// Whether some file would be served for `path` (for 405 versus 404 on other methods).
    public func exists(_ path: String) -> Bool {
        guard let file = self.resolve(path) else { return false }
        return FileSystem.info(file)?.isRegularFile == true
    }

    /// The only scripts, styles and connections the dashboard may use: its own, and WebSockets;
    /// no form submits anywhere.
    static let policy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

    private static func matches(_ header: String?, _ etag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { $0.trimmingSpaces == etag || $0.trimmingSpaces == "*" }
    }

    /// The file a request path names, or nil if the path is not acceptable.
    func resolve(_ path: String) -> String? {
        guard path.hasPrefix("/"), !path.contains("\\"), !path.contains("\0"), !path.contains("%") else {
            return nil
        }
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        guard !segments.contains(where: { $0.hasPrefix(".") }) else { return nil }
        var relative = segments.joined(separator: "/")
        if relative.isEmpty || path.hasSuffix("/") { relative += relative.isEmpty ? "index.html" : "/index.html" }
        guard let resolved = FileSystem.realPath(self.root + "/" + relative),
            resolved.hasPrefix(self.root + "/")
        else { return nil }
        return resolved
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return text
    }
}

/// Content types by file extension.
enum MIMEType {
    static let byExtension: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8",
        "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8", "json": "application/json",
        "map": "application/json", "webmanifest": "application/manifest+json",
        "svg": "image/svg+xml", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
        "gif": "image/gif", "webp": "image/webp", "ico": "image/x-icon", "woff2": "font/woff2",
        "woff": "font/woff", "txt": "text/plain; charset=utf-8", "wasm": "application/wasm",
    ]

    static func forPath(_ path: String) -> String {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return "application/octet-stream" }
        return self.byExtension[path[path.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }
}

/// An IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 22 Nov 2026 08:00:00 GMT`.
func httpDate(secondsSince1970 seconds: Int) -> String {
    let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
    let secondOfDay = seconds - days * 86400
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    let weekday = weekdays[((days % 7) + 7) % 7]
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    return "\(weekday), \(two(day)) \(months[month - 1]) \(year) "
        + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
}
