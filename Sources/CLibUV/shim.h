/*
 * libuv for IsletTransport. Only IsletTransport imports this module.
 * No logic lives here.
 */
#ifndef ISLET_CLIBUV_SHIM_H
#define ISLET_CLIBUV_SHIM_H

#include <uv.h>

#endif
