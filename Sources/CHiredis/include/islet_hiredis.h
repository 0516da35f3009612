/*
 * hiredis's async API for IsletTransport's Redis connection. Only IsletTransport imports this
 * module. The libuv adapter is compiled in attach.c, so libuv's types stay CLibUV's.
 */
#ifndef ISLET_HIREDIS_H
#define ISLET_HIREDIS_H

#include <hiredis/hiredis.h>
#include <hiredis/async.h>

/* Attaches `context` to the libuv loop `loop` (a uv_loop_t *): REDIS_OK or REDIS_ERR. */
int islet_redis_attach_uv(redisAsyncContext *context, void *loop);

#endif
