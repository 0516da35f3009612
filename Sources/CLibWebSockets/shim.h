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

#endif
