// @kernel cleanup
// @summary test kernel: stores its state, then fails in `stage`; the cleanup hooks create MARKER.teardown and MARKER.thread_done
// @arg stage=setup choices=setup,thread_init where to fail
// @arg marker=none path prefix of the files the cleanup hooks create
#include "perfbisect.h"

static void touch(const char *marker, const char *suffix)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s.%s", marker, suffix);
    FILE *f = fopen(path, "w");
    if (f != NULL)
        fclose(f);
}

typedef struct { char marker[4096]; } g_t;

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    g_t *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    snprintf(g->marker, sizeof(g->marker), "%s", pb_arg(env, "marker"));
    if (strcmp(pb_arg(env, "stage"), "setup") == 0)
        return pb_fail(err, errlen, "deliberate failure in setup");
    return PB_OK;
}

int pb_thread_init(void *g, pb_thread *t, char *err, size_t errlen)
{
    (void)g;
    if (pb_alloc_local(t, 1) == NULL)
        return pb_fail(err, errlen, "out of memory");
    return pb_fail(err, errlen, "deliberate failure in thread init");
}

int pb_run(void *g, pb_thread *t, uint64_t n, char *err, size_t errlen)
{ (void)g; (void)t; (void)n; (void)err; (void)errlen; return PB_OK; }

int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    g_t *g = global;
    (void)err; (void)errlen;
    touch(g->marker, "thread_done");
    free(t->local);
    return PB_OK;
}

void pb_teardown(void *global)
{
    g_t *g = global;
    touch(g->marker, "teardown");
    free(g);
}
