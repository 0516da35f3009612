// Thread and lifetime rules: libwebsockets keeps the pointer to a vhost's extension table (and
// to the C strings in it) for the vhost's whole life, and reads it on the loop thread whenever a
// handshake offers an extension. An `LWSExtensionTable` is allocated once, by the `LWSContext`
// that owns the vhost, and freed with it, after the second `lws_context_destroy`. The extension
// callback runs on the loop thread only; it finds its table through `lws_context_user` (the
// `LWSContext`, kept alive by its owner), and its per-connection entries are removed when lws
// destroys the extension's state (LWS_EXT_CB_DESTROY). `in` and `user` are valid only during
// the call.

internal import CLibWebSockets

/// The one extension Islet offers and accepts: permessage-deflate (RFC 7692): libwebsockets'
/// `lws_extension_callback_pm_deflate`, called through `isletPMDeflateCallback`, which does the
/// inflating and deflating lws 4.1.6 gets wrong itself, on zlib. A zero-terminated C table.
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
    /// Where a write is deflated, with LWS_PRE bytes of headroom for the frame header; lws
    /// writes (or copies) the frame before `lws_write` returns, so one buffer serves every
    /// connection. It grows to the largest write's deflate bound.
    fileprivate var deflated = UnsafeMutableRawBufferPointer(start: nil, count: 0)
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
        self.deflated.deallocate()
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

    func deallocate() { self.pendingRX.deallocate() }
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
/// 2. Input zlib has not used yet stays in the read buffer that all connections share (see
///    `keepPendingInput`): it is copied into the connection's own memory after each call.
/// 3. Deflating. lws deflates a write into a 1 KiB buffer and sends the rest from later
///    writable callbacks; when what is left of the flush is under 4 bytes (an output that
///    ends just past a buffer, or an empty message after another one, for which zlib writes
///    nothing), it stops the process (`assert(0)`, "want to trim out length"), which a client
///    can provoke through what it makes the server send. So this function deflates each write
///    whole, into a buffer sized by `deflateBound`, strips the flush marker of a final fragment,
///    and leaves the frame header and RSV1 to lws as before.
///
/// Everything else (negotiation, options, the inflating of a frame's earlier input, frame
/// headers and RSV1, draining) is lws's. One limit remains: lws gives no
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
        let compressedFrame = lws_get_reserved_bits(wsi) & 0x40 != 0
        let noInput = input.map { $0.assumingMemoryBound(to: islet_lws_pmd_ebufs.self).pointee.eb_in.len <= 0 } ?? true
        // A new message starts at its first fragment, except for lws's second call on the frame
        // that just ended (no input, same RSV1: lws does not clear "first fragment" after a
        // message that inflated to nothing).
        let sameFrame = state.messageEnded && compressedFrame && noInput
        if lws_is_first_fragment(wsi) != 0 && !state.inCompressedMessage && !sameFrame {
            state.inCompressedMessage = compressedFrame
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
        guard let input else { return forward() }
        return table.deflate(wsi, priv, input.assumingMemoryBound(to: islet_lws_pmd_ebufs.self), flags: length)
    default:
        return forward()
    }
}

extension LWSExtensionTable {
    /// Deflates one write whole (see `isletPMDeflateCallback`, 3). `flags` are lws_write's:
    /// the frame type, and LWS_WRITE_NO_FIN for a fragment that is not the message's last.
    fileprivate func deflate(
        _ wsi: OpaquePointer, _ priv: UnsafeMutablePointer<islet_lws_pmd_priv>,
        _ buffers: UnsafeMutablePointer<islet_lws_pmd_ebufs>, flags: Int
    ) -> Int32 {
        let tx = (UnsafeMutableRawPointer(priv) + MemoryLayout<islet_lws_pmd_priv>.offset(of: \.tx)!)
            .assumingMemoryBound(to: z_stream.self)
        if priv.pointee.tx_init == 0 {
            // As lws does: its level and memory level, and the window this side may use.
            let isClient = lws_get_vhost_listen_port(lws_get_vhost(wsi)) <= 0
            let windowBits = isClient ? priv.pointee.args.3 : priv.pointee.args.2
            let level = Int32(priv.pointee.args.6)
            let memoryLevel = Int32(priv.pointee.args.7)
            guard islet_deflate_init_raw(tx, level, Int32(windowBits), memoryLevel) == Z_OK else { return -1 }
            priv.pointee.tx_init = 1
        }
        let isFinal = flags & Int(LWS_WRITE_NO_FIN.rawValue) == 0
        let count = Int(max(0, buffers.pointee.eb_in.len))
        let capacity = Int(deflateBound(tx, UInt(count))) + 16
        let headroom = islet_lws_pre + 16
        if self.deflated.count < headroom + capacity {
            self.deflated.deallocate()
            self.deflated = .allocate(byteCount: headroom + max(capacity, 64 * 1024), alignment: 16)
        }
        let output = (self.deflated.baseAddress! + headroom).assumingMemoryBound(to: UInt8.self)
        tx.pointee.next_in = buffers.pointee.eb_in.token
        tx.pointee.avail_in = UInt32(count)
        tx.pointee.next_out = output
        tx.pointee.avail_out = UInt32(capacity)
        let result = zlib_deflate(tx, isFinal ? Z_SYNC_FLUSH : Z_NO_FLUSH)
        // The bound leaves room for everything: all input used, all output flushed.
        guard result == Z_OK || result == Z_BUF_ERROR, tx.pointee.avail_in == 0, tx.pointee.avail_out > 0 else {
            return -1
        }
        var produced = capacity - Int(tx.pointee.avail_out)
        if isFinal && produced == 0 {
            // Nothing new since the last flush (an empty message): zlib writes nothing, and the
            // message is the one byte of an empty stored block (RFC 7692 §7.2.3.6).
            output[0] = 0
            produced = 1
        } else if isFinal {
            // RFC 7692 §7.2.1: a message ends without the 00 00 FF FF of its flush.
            guard produced >= 4 else { return -1 }
            produced -= 4
            priv.pointee.count_tx_between_fin = 0
        } else {
            priv.pointee.count_tx_between_fin += count
        }
        // What lws's PACKET_TX_PRESEND step reads to set RSV1 and the first frame's type.
        switch flags & 0xF {
        case Int(LWS_WRITE_TEXT.rawValue): priv.pointee.tx_first_frame_type = 1  // text frame
        case Int(LWS_WRITE_BINARY.rawValue): priv.pointee.tx_first_frame_type = 2  // binary frame
        default: break
        }
        priv.pointee.compressed_out = 1
        if let token = buffers.pointee.eb_in.token { buffers.pointee.eb_in.token = token + count }
        buffers.pointee.eb_in.len = 0
        buffers.pointee.eb_out.token = output
        buffers.pointee.eb_out.len = Int32(produced)
        return Int32(isFinal ? islet_pmdr_empty_final : islet_pmdr_empty_nonfinal)
    }

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
            guard let ended = inflated(rx, Z_NO_FLUSH) else { return -1 }
            // A finished deflate stream with nothing after it takes no 00 00 FF FF (on a new
            // stream it would start a block); what follows it (RFC 7692's example ends with the
            // 00 of an empty stored block) goes to the new stream, and the trailer with it.
            if ended && rx.pointee.avail_in == 0 { state.trailerAdded = true }
        }
        if rx.pointee.avail_in == 0 && isFinal && !state.trailerAdded && rx.pointee.avail_out > 0 {
            rx.pointee.next_in = self.trailer
            rx.pointee.avail_in = 4
            state.trailerAdded = true
            guard inflated(rx, Z_SYNC_FLUSH) != nil else { return -1 }
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

/// zlib's deflate (the method of the same name shadows it inside the extension).
private func zlib_deflate(_ stream: UnsafeMutablePointer<z_stream>, _ flush: Int32) -> Int32 {
    deflate(stream, flush)
}

/// Runs zlib's inflate: nil on corrupt data (lws then fails the connection), else whether the
/// deflate stream ended. A message compressed with BFINAL set (RFC 7692 §7.2.3.4) ends it: zlib
/// is reset, keeping its window (what context takeover lets the next message refer to), so
/// that the next message inflates on a stream of its own. (Without this zlib took no more
/// input, and every later message on the connection was lost.)
private func inflated(_ stream: UnsafeMutablePointer<z_stream>, _ flush: Int32) -> Bool? {
    let result = inflate(stream, flush)
    guard result == Z_STREAM_END else { return result == Z_OK || result == Z_BUF_ERROR ? false : nil }
    var window = [UInt8](repeating: 0, count: 1 << 15)
    var length: UInt32 = 0
    guard inflateGetDictionary(stream, &window, &length) == Z_OK, inflateReset(stream) == Z_OK,
        length == 0 || inflateSetDictionary(stream, window, length) == Z_OK
    else { return nil }
    return true
}

/// Moves the input zlib still holds into memory of this connection's own.
///
/// lws leaves zlib pointing into the buffer the input came in until a later call uses it up:
/// the read buffer every connection of the loop shares (`pt->serv_buf`). By the time lws comes
/// back to a connection, another one may have overwritten those bytes, so they are copied after
/// each call. (Writes leave nothing behind: `deflate` uses all their input.)
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
