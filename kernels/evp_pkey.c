// @kernel evp_pkey
// @summary EVP_PKEY_keygen_init + EVP_PKEY_keygen of one `alg` key, in perftools' evp_pkey modes (a context per operation, or one per thread that keeps regenerating into one EVP_PKEY)
// @arg alg=ed25519 choices=ed25519,x25519,x448,ed448,rsa key type (perftools -a, upper case)
// @arg mode=evp_shared choices=evp_shared,evp_isolated what one operation is (see the comment in kernels/evp_pkey.c)
// @min_version 3.0.0
/*
 * perftools' evp_pkey -o MODE -a ALG. One operation is:
 *   evp_isolated  EVP_PKEY_CTX_new_from_name(NULL, ALG, NULL) +
 *                 EVP_PKEY_keygen_init + EVP_PKEY_keygen into a new EVP_PKEY
 *                 + both freed;
 *   evp_shared    EVP_PKEY_keygen_init + EVP_PKEY_keygen on a context made
 *                 once per thread, into the thread's one EVP_PKEY: from the
 *                 second operation on, keygen replaces the key inside the
 *                 EVP_PKEY it was given instead of making a new one (as
 *                 perftools, which never frees the key between calls).
 * rsa is RSA-2048 (the default bits); its prime search makes the cost of one
 * operation vary widely from key to key, in time and in instructions.
 */
#include "perfbisect.h"

#if OPENSSL_VERSION_NUMBER < 0x30000000L
int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)env; (void)global;
    return pb_not_applicable(err, errlen, "EVP_PKEY_CTX_new_from_name needs OpenSSL 3.0");
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)global; (void)t; (void)n;
    return pb_fail(err, errlen, "not applicable before OpenSSL 3.0");
}
#else
#include <openssl/evp.h>

typedef struct {
    int isolated;
    char name[16]; /* upper case, as perftools passes it */
} ep_global;

typedef struct {
    EVP_PKEY_CTX *ctx;
    EVP_PKEY *pkey;
} ep_local;

static int keygen_isolated(const ep_global *g)
{
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, g->name, NULL);
    int ok = ctx != NULL && EVP_PKEY_keygen_init(ctx) > 0 && EVP_PKEY_keygen(ctx, &pkey) > 0;
    EVP_PKEY_CTX_free(ctx);
    EVP_PKEY_free(pkey);
    return ok;
}

static int keygen_once(const ep_global *g, ep_local *l)
{
    if (g->isolated)
        return keygen_isolated(g);
    return EVP_PKEY_keygen_init(l->ctx) > 0 && EVP_PKEY_keygen(l->ctx, &l->pkey) > 0;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    const char *alg = pb_arg(env, "alg");
    ep_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    if (strlen(alg) >= sizeof(g->name))
        return pb_fail(err, errlen, "unknown alg '%s'", alg);
    for (size_t i = 0; alg[i] != '\0'; i++)
        g->name[i] = (char)(alg[i] >= 'a' && alg[i] <= 'z' ? alg[i] - 'a' + 'A' : alg[i]);
    g->isolated = strcmp(pb_arg(env, "mode"), "evp_isolated") == 0;
    return PB_OK;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const ep_global *g = global;
    ep_local *l = pb_alloc_local(t, sizeof(*l));
    if (l == NULL)
        return pb_fail(err, errlen, "out of memory");
    if (!g->isolated && (l->ctx = EVP_PKEY_CTX_new_from_name(NULL, g->name, NULL)) == NULL)
        return pb_fail(err, errlen, "EVP_PKEY_CTX_new_from_name(%s) failed", g->name);
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const ep_global *g = global;
    for (uint64_t i = 0; i < n; i++)
        if (!keygen_once(g, t->local))
            return pb_fail(err, errlen, "%s key generation failed", g->name);
    return PB_OK;
}

int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    ep_local *l = t->local;
    (void)global; (void)err; (void)errlen;
    if (l != NULL) {
        EVP_PKEY_CTX_free(l->ctx);
        EVP_PKEY_free(l->pkey);
        free(l);
    }
    return PB_OK;
}
#endif
