/// What one HTTP/2 connection may ask of the server, from `TransportConfiguration`.
struct HTTP2Limits: Equatable {
    /// SETTINGS_MAX_HEADER_LIST_SIZE: a request's decoded header list in bytes, measured as
    /// RFC 9113 §6.5.2 does (each field's name and value plus 32).
    var maxHeaderListBytes: Int
    /// Header fields per request, pseudo-header fields and trailers included.
    var maxHeaderFields: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS; nghttp2 refuses the streams over it.
    var maxConcurrentStreams: Int
    /// Bytes of one request body (the HTTP/1.1 listener's `maxRequestBodyBytes`).
    var maxBodyBytes: Int
    /// Bytes of replies a connection may hold unsent: past it, no further request is handed to
    /// the delegate, and past it in the socket's own queue, the connection stops reading.
    var outboundCapBytes: Int

    init(configuration: TransportConfiguration, tls: TransportConfiguration.TLS) {
        self.maxHeaderListBytes = tls.maxHeaderListBytes
        self.maxHeaderFields = tls.maxHeaderFields
        self.maxConcurrentStreams = tls.maxConcurrentStreams
        self.maxBodyBytes = configuration.maxRequestBodyBytes
        self.outboundCapBytes = configuration.outboundCapBytes
    }
}

/// Counts one request's header fields against the limits while nghttp2 decodes them, so a
/// header list over them is refused without being stored: HPACK lets a 16 KiB frame of
/// one-byte references to a 4 KiB table entry decode to 64 MiB.
struct HeaderListBudget: Equatable {
    private let maxBytes: Int
    private let maxFields: Int
    /// Bytes counted so far, as RFC 9113 §6.5.2 measures them.
    private(set) var bytes = 0
    private(set) var fields = 0

    init(maxBytes: Int, maxFields: Int) {
        self.maxBytes = maxBytes
        self.maxFields = maxFields
    }

    /// True while the fields counted so far are within both limits.
    var isWithinLimits: Bool { self.bytes <= self.maxBytes && self.fields <= self.maxFields }

    /// Counts one field.
    /// - Returns: false once the list is over a limit (and for every field after that one).
    mutating func admit(nameBytes: Int, valueBytes: Int) -> Bool {
        guard self.isWithinLimits else { return false }
        self.fields += 1
        self.bytes += nameBytes + valueBytes + 32
        return self.isWithinLimits
    }
}
