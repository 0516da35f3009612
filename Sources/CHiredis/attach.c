/*
 * hiredis's async context on a libuv loop: the event hooks hiredis calls to watch its socket.
 *
 * Islet's own, not hiredis's adapters/libuv.h: Debian's hiredis 0.14 adapter returns from its poll
 * callback when libuv reports an error, without telling hiredis. A connect that Redis refuses is
 * reported that way, so hiredis never called the connect callback and the connection waited for
 * ever: a node never reconnected after a Redis outage longer than its first retry. Here an error
 * is handed to hiredis, which reads the socket's error and reports it through its callbacks.
 */
#include "islet_hiredis.h"
#include <stdlib.h>
#include <uv.h>

typedef struct {
    redisAsyncContext *context; /* NULL once hiredis has let go (cleanup) */
    uv_poll_t handle;
    int events;
} islet_redis_events;

static void islet_redis_poll(uv_poll_t *handle, int status, int events) {
    islet_redis_events *watch = (islet_redis_events *)handle->data;
    if (watch->context == NULL) return;
    if (status != 0) {
        /* Connecting: the write check reads SO_ERROR and fails the connect. Connected: the read
         * finds the error and disconnects. Either way hiredis calls back and cleans up. */
        if (watch->context->c.flags & REDIS_CONNECTED) {
            redisAsyncHandleRead(watch->context);
        } else {
            redisAsyncHandleWrite(watch->context);
        }
        return;
    }
    if (events & UV_READABLE) redisAsyncHandleRead(watch->context);
    /* The read may have ended the connection (cleanup sets context to NULL). */
    if (watch->context != NULL && (events & UV_WRITABLE)) redisAsyncHandleWrite(watch->context);
}

static void islet_redis_watch(islet_redis_events *watch, int events) {
    watch->events = events;
    if (events) {
        uv_poll_start(&watch->handle, events, islet_redis_poll);
    } else {
        uv_poll_stop(&watch->handle);
    }
}

static void islet_redis_add_read(void *data) {
    islet_redis_events *watch = data;
    islet_redis_watch(watch, watch->events | UV_READABLE);
}

static void islet_redis_del_read(void *data) {
    islet_redis_events *watch = data;
    islet_redis_watch(watch, watch->events & ~UV_READABLE);
}

static void islet_redis_add_write(void *data) {
    islet_redis_events *watch = data;
    islet_redis_watch(watch, watch->events | UV_WRITABLE);
}

static void islet_redis_del_write(void *data) {
    islet_redis_events *watch = data;
    islet_redis_watch(watch, watch->events & ~UV_WRITABLE);
}

static void islet_redis_closed(uv_handle_t *handle) { free(handle->data); }

static void islet_redis_cleanup(void *data) {
    islet_redis_events *watch = data;
    watch->context = NULL;
    uv_close((uv_handle_t *)&watch->handle, islet_redis_closed);
}

int islet_redis_attach_uv(redisAsyncContext *context, void *loop) {
    if (context->ev.data != NULL) return REDIS_ERR;
    islet_redis_events *watch = calloc(1, sizeof(*watch));
    if (watch == NULL) return REDIS_ERR;
    if (uv_poll_init((uv_loop_t *)loop, &watch->handle, context->c.fd) != 0) {
        free(watch);
        return REDIS_ERR;
    }
    watch->handle.data = watch;
    watch->context = context;
    context->ev.addRead = islet_redis_add_read;
    context->ev.delRead = islet_redis_del_read;
    context->ev.addWrite = islet_redis_add_write;
    context->ev.delWrite = islet_redis_del_write;
    context->ev.cleanup = islet_redis_cleanup;
    context->ev.data = watch;
    return REDIS_OK;
}
