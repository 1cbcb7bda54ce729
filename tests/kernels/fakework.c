// @kernel fakework
// @summary test kernel: one call of fake_work() in the fake OpenSSL of tests/fake-openssl
// @arg tag=none free text, unused by the kernel (hostile-argument tests pass it)
#include "perfbisect.h"

/* Weak, so that against a real OpenSSL the kernel still loads and says it
 * does not apply instead of failing to resolve the symbol. */
extern long fake_work(void) __attribute__((weak));

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)env; (void)global;
    if (fake_work == NULL)
        return pb_not_applicable(err, errlen, "fakework needs the fake OpenSSL of tests/fake-openssl");
    return PB_OK;
}

int pb_run(void *g, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)g; (void)t; (void)err; (void)errlen;
    for (uint64_t i = 0; i < n; i++)
        fake_work();
    return PB_OK;
}
