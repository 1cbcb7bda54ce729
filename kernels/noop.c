// @kernel noop
// @summary nothing: calibrates the harness's own cost per operation
// @min_version 1.1.1
#include "perfbisect.h"

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)env; (void)global; (void)err; (void)errlen;
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)global; (void)t; (void)err; (void)errlen;
    /* The empty asm keeps the compiler from deleting the loop: one
     * "operation" is one iteration, which is what the harness adds. */
    for (uint64_t i = 0; i < n; i++)
        __asm__ __volatile__("" ::: "memory");
    return PB_OK;
}
