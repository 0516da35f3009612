/*
 * libwebsockets 4.1 for IsletTransport. Only IsletTransport imports this
 * module.
 *
 * Macros Swift cannot import (function-like or 64-bit option masks) are
 * re-exported here as islet_-prefixed constants. No logic lives here.
 */
#ifndef ISLET_CLIBWEBSOCKETS_SHIM_H
#define ISLET_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

/* Bytes lws needs in front of every buffer passed to lws_write(). */
static const size_t islet_lws_pre = LWS_PRE;

/* Context and vhost options Islet uses. */
static const uint64_t islet_lws_option_libuv = LWS_SERVER_OPTION_LIBUV;
static const uint64_t islet_lws_option_disable_ipv6 =
  LWS_SERVER_OPTION_DISABLE_IPV6;
static const uint64_t islet_lws_option_validate_utf8 =
  LWS_SERVER_OPTION_VALIDATE_UTF8;
static const uint64_t islet_lws_option_explicit_vhosts =
  LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
static const uint64_t islet_lws_option_uv_no_sigsegv_sigfpe_spin =
  LWS_SERVER_OPTION_UV_NO_SIGSEGV_SIGFPE_SPIN;

/* Passed to lws_set_timeout() to close a connection on the next loop turn. */
static const int islet_lws_to_kill_async = LWS_TO_KILL_ASYNC;

/* The "port" of a context or vhost that does not listen (client only). */
static const int islet_lws_context_port_no_listen = CONTEXT_PORT_NO_LISTEN;

/*
 * The lws_write() opcode of a close frame. lws 4.1.6 keeps it private
 * (lib/roles/ws/private-lib-roles-ws.h); Islet writes its own close frames
 * because closing from a writable callback is broken in Debian's build.
 */
static const int islet_lws_write_close = 4;

/* lws_write() flags for one fragment of a multi-fragment message. */
static inline int
islet_lws_write_ws_flags(int initial, int is_start, int is_end) {
  return lws_write_ws_flags(initial, is_start, is_end);
}

/*
 * permessage-deflate (RFC 7692). Islet registers lws's own extension callback
 * behind a wrapper (IsletTransport/UnsafeLWSExtensions.swift) that works
 * around a bug in its inflate path. The wrapper needs lws 4.1.6's private
 * per-connection state and extension buffers, so they are declared here with
 * the same members in the same order (lib/roles/ws/ext/
 * extension-permessage-deflate.h and lib/roles/ws/private-lib-roles-ws.h at
 * v4.1.6). Valid for that version only: the build pins Debian's 4.1.6.
 */
#include <zlib.h>

struct islet_lws_pmd_priv {
  z_stream rx;
  z_stream tx;
  unsigned char *buf_rx_inflated;
  unsigned char *buf_tx_deflated;
  unsigned char *buf_tx_holding;
  size_t count_rx_between_fin;
  size_t count_tx_between_fin;
  size_t len_tx_holding;
  unsigned char args[8];
  unsigned char tx_first_frame_type;
  unsigned char tx_init:1;
  unsigned char rx_init:1;
  unsigned char compressed_out:1;
};

struct islet_lws_pmd_ebufs {
  struct lws_tokens eb_in;
  struct lws_tokens eb_out;
};

/* Indexes into islet_lws_pmd_priv.args, and an extension's PAYLOAD_RX results. */
static const int islet_pmd_arg_server_no_context_takeover = 0;
static const int islet_pmd_arg_server_max_window_bits = 2;
static const int islet_pmd_arg_rx_buf_pwr2 = 4;
static const int islet_pmd_arg_compression_level = 6;
static const int islet_pmd_arg_mem_level = 7;
static const int islet_pmdr_did_nothing = 1;
static const int islet_pmdr_has_pending = 2;
static const int islet_pmdr_empty_nonfinal = 3;
static const int islet_pmdr_empty_final = 4;

/* Bytes lws allocates for its inflate buffer beyond LWS_PRE + 2^rx_buf_pwr2. */
static const size_t islet_pmd_rx_buffer_slack = 7 + 5;

/* inflateInit2() and deflateInit2() are macros: raw deflate, 2^window_bits bytes of window. */
static inline int
islet_inflate_init_raw(z_stream *stream, int window_bits) {
  return inflateInit2(stream, -window_bits);
}

static inline int
islet_deflate_init_raw(z_stream *stream, int level, int window_bits, int mem_level) {
  return deflateInit2(stream, level, Z_DEFLATED, -window_bits, mem_level, Z_DEFAULT_STRATEGY);
}

#endif
