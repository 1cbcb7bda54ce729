// @kernel randbytes
// @summary RAND_bytes of `size` bytes from the default (public) DRBG
// @arg size=32 int bytes requested per call
// @min_version 1.1.1
#include "perfbisect.h"

#include <limits.h>
#include <openssl/rand.h>

typedef struct {
    int size;
} rb_global;

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    long size = pb_arg_int(env, "size");
    if (size < 1 || size > (1L << 24))
        return pb_fail(err, errlen, "size must be between 1 and %ld, got %ld",
                       1L << 24, size);
    rb_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->size = (int)size;
    /* Seed the DRBG here so that its instantiation is not timed. */
    unsigned char b[16];
    if (RAND_bytes(b, sizeof(b)) != 1)
        return pb_fail(err, errlen, "RAND_bytes in setup failed");
    return PB_OK;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    rb_global *g = global;
    unsigned char *buf = pb_thread_buffer(t, (size_t)g->size, 0);
    if (buf == NULL)
        return pb_fail(err, errlen, "out of memory");
    /* The per-thread DRBGs of 3.x are created on first use: not timed. */
    if (RAND_bytes(buf, g->size) != 1)
        return pb_fail(err, errlen, "RAND_bytes in thread init failed");
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    rb_global *g = global;
    unsigned char *buf = t->local;
    for (uint64_t i = 0; i < n; i++) {
        if (RAND_bytes(buf, g->size) != 1)
            return pb_fail(err, errlen, "RAND_bytes(%d) failed", g->size);
    }
    return PB_OK;
}
