#include "islet_hiredis.h"
#include <hiredis/adapters/libuv.h>

int islet_redis_attach_uv(redisAsyncContext *context, void *loop) {
    return redisLibuvAttach(context, (uv_loop_t *)loop);
}
