// @kernel providerdoall
// @summary OSSL_PROVIDER_do_all(NULL, cb, NULL) with a callback that only counts
// @min_version 3.0.0
#include "perfbisect.h"

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
#include <openssl/provider.h>

static int count_cb(OSSL_PROVIDER *prov, void *arg)
{
    (void)prov;
    ++*(int *)arg;
    return 1;
}
#endif

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)env; (void)global;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    /* The first call activates the fallback (default) provider: not timed. */
    int count = 0;
    if (OSSL_PROVIDER_do_all(NULL, count_cb, &count) != 1)
        return pb_fail(err, errlen, "OSSL_PROVIDER_do_all failed");
    if (count == 0)
        return pb_fail(err, errlen, "OSSL_PROVIDER_do_all found no provider");
    return PB_OK;
#else
    return pb_not_applicable(err, errlen, "OSSL_PROVIDER_do_all needs OpenSSL 3.0 (no providers before)");
#endif
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)global; (void)t;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    for (uint64_t i = 0; i < n; i++) {
        int count = 0;
        if (OSSL_PROVIDER_do_all(NULL, count_cb, &count) != 1)
            return pb_fail(err, errlen, "OSSL_PROVIDER_do_all failed");
    }
    return PB_OK;
#else
    (void)n;
    return pb_fail(err, errlen, "not applicable before OpenSSL 3.0");
#endif
}
