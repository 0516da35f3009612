/*
 * libwebsockets 4.1 for IsletTransport. Only IsletTransport imports this module.
 * Macros Swift cannot import are re-exported here as islet_-prefixed constants.
 */
#ifndef ISLET_CLIBWEBSOCKETS_SHIM_H
#define ISLET_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

static const size_t islet_lws_pre = LWS_PRE;

#endif
