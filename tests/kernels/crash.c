// @kernel crash
// @summary test kernel: dereferences NULL in pb_run (when=run) or in setup (when=setup)
// @arg when=run choices=run,setup where to crash
#include "perfbisect.h"
#include <signal.h>

static volatile int *nowhere = NULL;

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)global; (void)err; (void)errlen;
    if (strcmp(pb_arg(env, "when"), "setup") == 0)
        return *nowhere;
    return PB_OK;
}

int pb_run(void *g, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)g; (void)t; (void)n; (void)err; (void)errlen;
    raise(SIGSEGV);
    return *nowhere;
}
