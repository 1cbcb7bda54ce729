// @kernel fails
// @summary test kernel: pb_run reports an error after `after` operations
// @arg after=1000 int operations before the error
// @arg shell=none a value passed through verbatim, echoed in the error
#include "perfbisect.h"

typedef struct { long after; char shell[256]; } g_t;

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    g_t *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->after = pb_arg_int(env, "after");
    snprintf(g->shell, sizeof(g->shell), "%s", pb_arg(env, "shell"));
    return PB_OK;
}

int pb_thread_init(void *g, pb_thread *t, char *err, size_t errlen)
{
    (void)g;
    if (pb_alloc_local(t, sizeof(long)) == NULL)
        return pb_fail(err, errlen, "out of memory");
    return PB_OK;
}

int pb_run(void *gp, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    g_t *g = gp;
    long *done = t->local;
    *done += (long)n;
    if (*done >= g->after) {
        snprintf(err, errlen, "deliberate failure after %ld operations (shell=%s)", *done, g->shell);
        return PB_ERROR;
    }
    return PB_OK;
}
