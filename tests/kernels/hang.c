// @kernel hang
// @summary test kernel: pb_run never returns
#include "perfbisect.h"
#include <unistd.h>

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{ (void)env; (void)global; (void)err; (void)errlen; return PB_OK; }

int pb_run(void *g, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)g; (void)t; (void)n; (void)err; (void)errlen;
    for (;;)
        pause();
}
