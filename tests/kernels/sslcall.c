// @kernel sslcall
// @summary test kernel: fakework's operation, in a kernel that also calls SSL_fake_call of the fake libssl (commits whose libssl lacks it cannot load it)
// @link ssl
#include "perfbisect.h"

extern long fake_work(void);
extern int SSL_fake_call(void);

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)env; (void)global; (void)err; (void)errlen;
    (void)SSL_fake_call();
    return PB_OK;
}

int pb_run(void *g, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)g; (void)t; (void)err; (void)errlen;
    for (uint64_t i = 0; i < n; i++)
        fake_work();
    return PB_OK;
}
