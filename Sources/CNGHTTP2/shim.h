/*
 * nghttp2 for IsletTransport's HTTP/2 listener (libwebsockets 4.1.6 drops
 * request headers it does not know in HTTP/2, such as apns-topic, so Islet
 * speaks HTTP/2 itself on its TLS port). No logic lives here.
 */
#ifndef ISLET_CNGHTTP2_SHIM_H
#define ISLET_CNGHTTP2_SHIM_H

#include <nghttp2/nghttp2.h>

#endif
