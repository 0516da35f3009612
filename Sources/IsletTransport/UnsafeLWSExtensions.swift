// Thread and lifetime rules: libwebsockets keeps the pointer to a vhost's extension table (and
// to the C strings in it) for the vhost's whole life, and reads it on the loop thread whenever a
// handshake offers an extension. An `LWSExtensionTable` is allocated once, by the `LWSContext`
// that owns the vhost, and freed with it, after the second `lws_context_destroy`. The extension
// callback runs on the loop thread only; it finds its table through `lws_context_user` (the
// `LWSContext`, kept alive by its owner), and its per-connection entries are removed when lws
// destroys the extension's state (LWS_EXT_CB_DESTROY). `in` and `user` are valid only during
// the call.

internal import CLibWebSockets

/// The one extension Islet offers and accepts: permessage-deflate (RFC 7692), implemented by
/// libwebsockets' `lws_extension_callback_pm_deflate` on zlib, called through
/// `isletPMDeflateCallback`, which repairs its inflate path. A zero-terminated C table.
///
/// As a server, lws accepts the extension when a client offers it and, of the offer's
/// parameters, applies `server_no_context_takeover` and `client_no_context_takeover`; it
/// answers no window-size parameter. As a client (the benchmarks' load generator), lws sends
/// `clientOffer`.
final class LWSExtensionTable {
    /// What a client connection offers in `Sec-WebSocket-Extensions`.
    static let clientOffer = "permessage-deflate; client_max_window_bits"
    /// Bytes one inflate step may produce (a message over the 64 KiB limit takes several).
    static let outputBytes = 64 * 1024

    /// The table to put in `lws_context_creation_info.extensions`.
    let pointer: UnsafeMutablePointer<lws_extension>
    private let name: UnsafeMutablePointer<CChar>
    private let offer: UnsafeMutablePointer<CChar>
    /// Where the last input of a frame is inflated; lws hands it to the receive callback before
    /// the next step, so one buffer serves every connection (+1: lws writes a NUL after it).
    fileprivate let output: UnsafeMutablePointer<UInt8>
    /// The 00 00 FF FF that RFC 7692 §7.2.2 has the receiver append to each message.
    fileprivate let trailer: UnsafeMutablePointer<UInt8>
    fileprivate var connections: [OpaquePointer: InflateState] = [:]

    init() {
        self.name = strdup("permessage-deflate")!
        self.offer = strdup(Self.clientOffer)!
        self.output = .allocate(capacity: Self.outputBytes + 1)
        self.trailer = .allocate(capacity: 4)
        self.trailer.initialize(from: [0x00, 0x00, 0xFF, 0xFF], count: 4)
        self.pointer = .allocate(capacity: 2)
        self.pointer.initialize(
            to: lws_extension(
                name: UnsafePointer(self.name), callback: isletPMDeflateCallback,
                client_offer: UnsafePointer(self.offer)))
        // The terminator: an entry with no callback.
        (self.pointer + 1).initialize(to: lws_extension())
    }

    deinit {
        for state in self.connections.values { state.deallocate() }
        self.pointer.deinitialize(count: 2)
        self.pointer.deallocate()
        self.output.deallocate()
        self.trailer.deallocate()
        free(self.name)
        free(self.offer)
    }
}

/// What the wrapper keeps per connection.
final class InflateState {
    /// The message being received is compressed (RSV1 on its first frame) and not finished.
    var inCompressedMessage = false
    /// The trailer of the current message was given to zlib.
    var trailerAdded = false
    /// The compressed message has ended; lws may still call for its frame, and must not add a
    /// second trailer (that would corrupt the stream), until the next message starts.
    var messageEnded = false
    /// A frame's last input is being inflated over several steps: whether that frame is final.
    var finalFrame: Bool?
    /// The last byte of a step that reported more to come, delivered first in the next step,
    /// so that no step of a message ends it with nothing to deliver.
    var carry: UInt8?
    /// The previous step filled the output: zlib may still hold bytes.
    var outputWasFull = false
    /// Copies of input zlib has not used yet (see `keepPendingInput`).
    var pendingRX = UnsafeMutableRawBufferPointer(start: nil, count: 0)
    var pendingTX = UnsafeMutableRawBufferPointer(start: nil, count: 0)

    func deallocate() {
        self.pendingRX.deallocate()
        self.pendingTX.deallocate()
    }
}

/// The extension callback: lws's permessage-deflate, except where lws 4.1.6 gets it wrong.
///
/// 1. The last input of a compressed frame. lws inflates it 1 KiB at a time and, when zlib
///    used up the input exactly as a 1 KiB buffer filled, feeds zlib the message trailer with
///    only 5 bytes of room: if zlib still held more of a back-reference, lws stops the process
///    (`assert(priv->rx.avail_out)`, kept in Debian's build), which any client can trigger with
///    ordinary text. When the rest of such a message is left to lws's drain list, a last step
///    that yields no bytes is dropped (`ending drain on 0 read`) and the message never ends.
///    So this function inflates a frame's last input itself, into one 64 KiB buffer, and adds
///    the trailer (for a final frame) with the room left.
/// 2. Input zlib has not used yet stays in buffers lws and Islet reuse for other connections
///    (see `keepPendingInput`): it is copied into the connection's own memory after each call.
///
/// Everything else (negotiation, deflating, frames) is lws's. One limit remains: lws gives no
/// way to tell a pong's payload from data, so a pong with a payload between the frames of a
/// compressed message would be inflated as part of it (the message then fails; no client
/// library sends such pongs).
func isletPMDeflateCallback(
    _ context: OpaquePointer?, _ ext: UnsafePointer<lws_extension>?, _ wsi: OpaquePointer?,
    _ reason: lws_extension_callback_reasons, _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
    _ length: Int
) -> Int32 {
    let forward = { lws_extension_callback_pm_deflate(context, ext, wsi, reason, user, input, length) }
    guard let context, let wsi, let user, let owner = lws_context_user(context),
        let table = Unmanaged<LWSContext>.fromOpaque(owner).takeUnretainedValue().extensionTable
    else { return forward() }
    let priv = user.assumingMemoryBound(to: islet_lws_pmd_priv.self)
    switch reason {
    case LWS_EXT_CB_DESTROY:
        table.connections.removeValue(forKey: wsi)?.deallocate()
        return forward()
    case LWS_EXT_CB_PAYLOAD_RX:
        let state = table.connections[wsi] ?? InflateState()
        table.connections[wsi] = state
        if lws_is_first_fragment(wsi) != 0 && !state.inCompressedMessage {
            state.inCompressedMessage = lws_get_reserved_bits(wsi) & 0x40 != 0
            state.trailerAdded = false
            state.messageEnded = false
        }
        if state.messageEnded { return Int32(islet_pmdr_did_nothing) }
        let verdict: Int32
        if state.inCompressedMessage, lws_remaining_packet_payload(wsi) == 0, let input {
            let buffers = input.assumingMemoryBound(to: islet_lws_pmd_ebufs.self)
            verdict = table.inflateLastInput(wsi, priv, buffers, state)
        } else {
            verdict = forward()
        }
        keepPendingInput(priv, \.rx, in: &state.pendingRX)
        return verdict
    case LWS_EXT_CB_PAYLOAD_TX:
        let verdict = forward()
        let state = table.connections[wsi] ?? InflateState()
        table.connections[wsi] = state
        keepPendingInput(priv, \.tx, in: &state.pendingTX)
        return verdict
    default:
        return forward()
    }
}

extension LWSExtensionTable {
    /// One inflate step over a compressed frame's last input (see `isletPMDeflateCallback`).
    /// Returns lws's result code: more pending, done with the frame, or done with the message.
    fileprivate func inflateLastInput(
        _ wsi: OpaquePointer, _ priv: UnsafeMutablePointer<islet_lws_pmd_priv>,
        _ buffers: UnsafeMutablePointer<islet_lws_pmd_ebufs>, _ state: InflateState
    ) -> Int32 {
        let rx = UnsafeMutableRawPointer(priv).assumingMemoryBound(to: z_stream.self)  // `rx` is the first member
        if priv.pointee.rx_init == 0 {
            // As lws does on a message's first input (again after server_no_context_takeover),
            // buffer included: lws inflates the frames' earlier input itself, into that buffer.
            if priv.pointee.buf_rx_inflated == nil {
                let bytes = islet_lws_pre + islet_pmd_rx_buffer_slack + (1 << Int(priv.pointee.args.4))  // rx_buf_pwr2
                guard let buffer = malloc(bytes) else { return -1 }  // lws frees it with lws_free: free()
                priv.pointee.buf_rx_inflated = buffer.assumingMemoryBound(to: UInt8.self)
            }
            guard islet_inflate_init_raw(rx, Int32(priv.pointee.args.2)) == Z_OK else { return -1 }  // window bits
            priv.pointee.rx_init = 1
        }
        let isFinal = state.finalFrame ?? (lws_is_final_fragment(wsi) != 0)
        var produced = 0
        if let carry = state.carry {
            self.output[0] = carry
            produced = 1
            state.carry = nil
        }
        let loaded = rx.pointee.avail_in == 0 && buffers.pointee.eb_in.len > 0 && buffers.pointee.eb_in.token != nil
        if loaded {
            rx.pointee.next_in = buffers.pointee.eb_in.token
            rx.pointee.avail_in = UInt32(buffers.pointee.eb_in.len)
        }
        rx.pointee.next_out = self.output + produced
        rx.pointee.avail_out = UInt32(Self.outputBytes - produced)
        if rx.pointee.avail_in > 0 || state.outputWasFull {
            guard inflated(rx, Z_NO_FLUSH) else { return -1 }
        }
        if rx.pointee.avail_in == 0 && isFinal && !state.trailerAdded && rx.pointee.avail_out > 0 {
            rx.pointee.next_in = self.trailer
            rx.pointee.avail_in = 4
            state.trailerAdded = true
            guard inflated(rx, Z_SYNC_FLUSH) else { return -1 }
        }
        // As lws does: the input still in zlib is what remains of the caller's.
        if let token = buffers.pointee.eb_in.token {
            buffers.pointee.eb_in.token = token + (Int(buffers.pointee.eb_in.len) - Int(rx.pointee.avail_in))
        }
        buffers.pointee.eb_in.len = Int32(rx.pointee.avail_in)
        produced = Self.outputBytes - Int(rx.pointee.avail_out)
        state.outputWasFull = rx.pointee.avail_out == 0
        let more = rx.pointee.avail_in > 0 || state.outputWasFull || (isFinal && !state.trailerAdded)
        buffers.pointee.eb_out.token = self.output
        if more {
            if produced > 0 {
                produced -= 1
                state.carry = self.output[produced]
            }
            buffers.pointee.eb_out.len = Int32(produced)
            state.finalFrame = isFinal
            return Int32(islet_pmdr_has_pending)
        }
        buffers.pointee.eb_out.len = Int32(produced)
        state.finalFrame = nil
        guard isFinal else { return Int32(islet_pmdr_empty_nonfinal) }
        state.inCompressedMessage = false
        state.messageEnded = true
        if priv.pointee.args.0 != 0 {  // server_no_context_takeover: each message starts afresh
            inflateEnd(rx)
            priv.pointee.rx_init = 0
        }
        return Int32(islet_pmdr_empty_final)
    }
}

/// Runs zlib's inflate; false on corrupt data (lws then fails the connection).
private func inflated(_ stream: UnsafeMutablePointer<z_stream>, _ flush: Int32) -> Bool {
    let result = inflate(stream, flush)
    return result == Z_OK || result == Z_BUF_ERROR || result == Z_STREAM_END
}

/// Moves the input zlib still holds into memory of this connection's own.
///
/// lws leaves zlib pointing into the buffer the input came in until a later call uses it up:
/// for received data, the read buffer every connection of the loop shares (`pt->serv_buf`);
/// for sent data, Islet's one `WriteBuffer`. By the time lws comes back to a connection,
/// another one may have overwritten those bytes, so they are copied after each call.
private func keepPendingInput(
    _ priv: UnsafeMutablePointer<islet_lws_pmd_priv>, _ member: KeyPath<islet_lws_pmd_priv, z_stream>,
    in copy: inout UnsafeMutableRawBufferPointer
) {
    let stream = (UnsafeMutableRawPointer(priv) + MemoryLayout<islet_lws_pmd_priv>.offset(of: member)!)
        .assumingMemoryBound(to: z_stream.self)
    let count = Int(stream.pointee.avail_in)
    guard count > 0, let next = stream.pointee.next_in else { return }
    let start = UnsafeMutableRawPointer(next)
    if let base = copy.baseAddress, start >= base, start < base + copy.count { return }  // already ours
    if copy.count < count {
        copy.deallocate()
        copy = .allocate(byteCount: max(count, 4096), alignment: 16)
    }
    copy.baseAddress!.copyMemory(from: start, byteCount: count)
    stream.pointee.next_in = copy.baseAddress!.assumingMemoryBound(to: UInt8.self)
}
