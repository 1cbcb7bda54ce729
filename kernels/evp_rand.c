// @kernel evp_rand
// @summary EVP_RAND_generate of `size` bytes from a HASH-DRBG (SHA-512) with no parent, in perftools' evp_rand modes (a DRBG per operation or per thread)
// @arg mode=evp_shared choices=evp_shared,evp_isolated what one operation is (see the comment in kernels/evp_rand.c)
// @arg size=64 int bytes generated per operation (perftools: 64)
// @min_version 3.0.0
// @unit bytes=size
/*
 * perftools' evp_rand -o MODE. The DRBG is made with EVP_RAND_CTX_new(rand,
 * NULL): no parent, so it seeds itself from the operating system when its
 * first EVP_RAND_generate instantiates it (strength 0, no prediction
 * resistance, no additional input). One operation is:
 *   evp_isolated  EVP_RAND_fetch(NULL, "HASH-DRBG", NULL) + EVP_RAND_CTX_new
 *                 + EVP_RAND_CTX_set_params(digest=SHA512) +
 *                 EVP_RAND_generate (which instantiates: an OS entropy read)
 *                 + both freed;
 *   evp_shared    EVP_RAND_generate on a DRBG made once per thread (its own,
 *                 not shared with other threads; instantiated by the first
 *                 generate, in pb_thread_init, not timed).
 */
#include "perfbisect.h"

#if OPENSSL_VERSION_NUMBER < 0x30000000L
int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)env; (void)global;
    return pb_not_applicable(err, errlen, "EVP_RAND needs OpenSSL 3.0");
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)global; (void)t; (void)n;
    return pb_fail(err, errlen, "not applicable before OpenSSL 3.0");
}
#else
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/rand.h>

typedef struct {
    int isolated;
    size_t size;
} er_global;

typedef struct {
    EVP_RAND *rand;
    EVP_RAND_CTX *ctx;
    unsigned char *out;
} er_local;

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    long size = pb_arg_int(env, "size");
    if (size < 1 || size > 65536)
        return pb_fail(err, errlen, "size must be between 1 and 65536, got %ld", size);
    er_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->isolated = strcmp(pb_arg(env, "mode"), "evp_isolated") == 0;
    g->size = (size_t)size;
    return PB_OK;
}

/* A HASH-DRBG with SHA-512 and no parent, into *rand and *ctx. */
static int new_drbg(EVP_RAND **rand, EVP_RAND_CTX **ctx)
{
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_DRBG_PARAM_DIGEST, (char *)SN_sha512, 0),
        OSSL_PARAM_construct_end(),
    };
    return (*rand = EVP_RAND_fetch(NULL, "HASH-DRBG", NULL)) != NULL
           && (*ctx = EVP_RAND_CTX_new(*rand, NULL)) != NULL
           && EVP_RAND_CTX_set_params(*ctx, params);
}

static int generate_isolated(const er_global *g, unsigned char *out)
{
    EVP_RAND *rand = NULL;
    EVP_RAND_CTX *ctx = NULL;
    int ok = new_drbg(&rand, &ctx) && EVP_RAND_generate(ctx, out, g->size, 0, 0, NULL, 0);
    EVP_RAND_free(rand);
    EVP_RAND_CTX_free(ctx);
    return ok;
}

static int generate_once(const er_global *g, er_local *l)
{
    if (g->isolated)
        return generate_isolated(g, l->out);
    return EVP_RAND_generate(l->ctx, l->out, g->size, 0, 0, NULL, 0);
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const er_global *g = global;
    er_local *l = pb_alloc_local(t, sizeof(*l));
    if (l == NULL || (l->out = pb_buffer(g->size, 0)) == NULL)
        return pb_fail(err, errlen, "out of memory");
    if (!g->isolated && !new_drbg(&l->rand, &l->ctx))
        return pb_fail(err, errlen, "making the HASH-DRBG failed");
    if (!generate_once(g, l))
        return pb_fail(err, errlen, "EVP_RAND_generate failed in thread init");
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    for (uint64_t i = 0; i < n; i++)
        if (!generate_once(global, t->local))
            return pb_fail(err, errlen, "EVP_RAND_generate failed");
    return PB_OK;
}

int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    er_local *l = t->local;
    (void)global; (void)err; (void)errlen;
    if (l != NULL) {
        EVP_RAND_CTX_free(l->ctx);
        EVP_RAND_free(l->rand);
        free(l->out);
        free(l);
    }
    return PB_OK;
}
#endif
