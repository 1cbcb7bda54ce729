// @kernel rwlocks
// @summary CRYPTO_THREAD_read_lock or CRYPTO_THREAD_write_lock + CRYPTO_THREAD_unlock on one shared lock
// @arg writers=1 int number of threads (those with index < writers) that take the write lock; the others read-lock; 0 = all readers
// @min_version 1.1.1
// @counters read,write
#include "perfbisect.h"

#include <openssl/crypto.h>

typedef struct {
    CRYPTO_RWLOCK *lock;
    long writers;
} rw_global;

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    long writers = pb_arg_int(env, "writers");
    if (writers < 0)
        return pb_fail(err, errlen, "writers must be a non-negative integer, got '%s'",
                       pb_arg(env, "writers"));
    rw_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->writers = writers;
    if ((g->lock = CRYPTO_THREAD_lock_new()) == NULL)
        return pb_fail(err, errlen, "CRYPTO_THREAD_lock_new failed");
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    rw_global *g = global;
    if (t->index < g->writers) {
        for (uint64_t i = 0; i < n; i++) {
            if (CRYPTO_THREAD_write_lock(g->lock) != 1)
                return pb_fail(err, errlen, "CRYPTO_THREAD_write_lock failed");
            if (CRYPTO_THREAD_unlock(g->lock) != 1)
                return pb_fail(err, errlen, "CRYPTO_THREAD_unlock (write) failed");
        }
        t->counters[1] += n;
    } else {
        for (uint64_t i = 0; i < n; i++) {
            if (CRYPTO_THREAD_read_lock(g->lock) != 1)
                return pb_fail(err, errlen, "CRYPTO_THREAD_read_lock failed");
            if (CRYPTO_THREAD_unlock(g->lock) != 1)
                return pb_fail(err, errlen, "CRYPTO_THREAD_unlock (read) failed");
        }
        t->counters[0] += n;
    }
    return PB_OK;
}

void pb_teardown(void *global)
{
    rw_global *g = global;
    CRYPTO_THREAD_lock_free(g->lock);
    free(g);
}
