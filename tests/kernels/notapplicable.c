// @kernel notapplicable
// @summary test kernel: always reports "not applicable" from setup
#include "perfbisect.h"

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{ (void)env; (void)global; return pb_not_applicable(err, errlen, "this kernel never applies"); }

int pb_run(void *g, pb_thread *t, uint64_t n, char *err, size_t errlen)
{ (void)g; (void)t; (void)n; (void)err; (void)errlen; return PB_OK; }
