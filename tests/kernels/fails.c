// @kernel fails
// @summary test kernel: pb_run reports an error after `after` operations
// @arg after=1000 int operations before the error
// @arg shell=none a value passed through verbatim, echoed in the error
#include "perfbisect.h"

typedef struct { long after; char shell[256]; } g_t;

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)err; (void)errlen;
    static g_t g;
    g.after = pb_arg_long(env, "after", 1000);
    snprintf(g.shell, sizeof(g.shell), "%s", pb_arg(env, "shell") ? pb_arg(env, "shell") : "");
    *global = &g;
    return PB_OK;
}

int pb_thread_init(void *g, pb_thread *t, char *err, size_t errlen)
{ (void)g; (void)err; (void)errlen; t->local = calloc(1, sizeof(long)); return PB_OK; }

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

int pb_thread_done(void *g, pb_thread *t, char *err, size_t errlen)
{ (void)g; (void)err; (void)errlen; free(t->local); return PB_OK; }

void pb_teardown(void *g) { (void)g; }
