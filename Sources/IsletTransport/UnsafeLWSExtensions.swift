// Thread and lifetime rules: libwebsockets keeps the pointer to a vhost's extension table (and
// to the C strings in it) for the vhost's whole life, and reads it on the loop thread whenever a
// handshake offers an extension. An `LWSExtensionTable` is allocated once, by the `LWSContext`
// that owns the vhost, and freed with it, after the second `lws_context_destroy`.

internal import CLibWebSockets

/// The one extension Islet offers and accepts: permessage-deflate (RFC 7692), implemented by
/// libwebsockets' `lws_extension_callback_pm_deflate` on zlib. A zero-terminated C table.
///
/// As a server, lws accepts the extension when a client offers it and, of the offer's
/// parameters, applies only `server_no_context_takeover` and `client_no_context_takeover`
/// (window-size parameters are not answered, which RFC 7692 §7.1.2 allows for
/// `client_max_window_bits` without a value). As a client (the benchmarks' load generator),
/// lws sends `clientOffer`.
final class LWSExtensionTable {
    /// What a client connection offers in `Sec-WebSocket-Extensions`.
    static let clientOffer = "permessage-deflate; client_max_window_bits"

    /// The table to put in `lws_context_creation_info.extensions`.
    let pointer: UnsafeMutablePointer<lws_extension>
    private let name: UnsafeMutablePointer<CChar>
    private let offer: UnsafeMutablePointer<CChar>

    init() {
        self.name = strdup("permessage-deflate")!
        self.offer = strdup(Self.clientOffer)!
        self.pointer = .allocate(capacity: 2)
        self.pointer.initialize(
            to: lws_extension(
                name: UnsafePointer(self.name), callback: lws_extension_callback_pm_deflate,
                client_offer: UnsafePointer(self.offer)))
        // The terminator: an entry with no callback.
        (self.pointer + 1).initialize(to: lws_extension())
    }

    deinit {
        self.pointer.deinitialize(count: 2)
        self.pointer.deallocate()
        free(self.name)
        free(self.offer)
    }
}
