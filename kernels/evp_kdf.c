// @kernel evp_kdf
// @summary PBKDF2-HMAC-SHA256 of a 256-byte key (32-byte password and salt, `iter` iterations), in perftools' evp_kdf modes (EVP_KDF or PKCS5_PBKDF2_HMAC; context per operation or per thread)
// @arg mode=evp_shared choices=evp_shared,evp_isolated,deprecated_shared,deprecated_isolated what one operation is (see the comment in kernels/evp_kdf.c)
// @arg iter=2048 int PBKDF2 iterations (perftools: 2048)
// @min_version 3.0.0
/*
 * perftools' evp_kdf -o MODE. The password and salt (32 bytes each) come from
 * RAND_bytes in setup, as in perftools, and are shared by all threads; each
 * operation derives 256 bytes (8 blocks of SHA-256, `iter` HMACs each):
 *   evp_isolated         EVP_KDF_fetch(NULL, "PBKDF2", NULL) +
 *                        EVP_KDF_CTX_new + EVP_KDF_derive(password, salt,
 *                        iter, digest=SHA256 as parameters) + both freed;
 *   evp_shared           on a KDF fetched and a context made once per thread:
 *                        EVP_KDF_derive (the same parameters, every time) +
 *                        EVP_KDF_CTX_reset;
 *   deprecated_isolated  PKCS5_PBKDF2_HMAC(..., EVP_sha256(), ...);
 *   deprecated_shared    the same with the EVP_MD taken once per thread.
 * (The two deprecated modes differ only by the EVP_sha256() call, as in
 * perftools.)
 */
#include "perfbisect.h"

#if OPENSSL_VERSION_NUMBER < 0x30000000L
int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)env; (void)global;
    return pb_not_applicable(err, errlen, "EVP_KDF needs OpenSSL 3.0");
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)global; (void)t; (void)n;
    return pb_fail(err, errlen, "not applicable before OpenSSL 3.0");
}
#else
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#define EK_KEY 256

enum ek_mode { M_EVP_SHARED, M_EVP_ISOLATED, M_DEP_SHARED, M_DEP_ISOLATED };

typedef struct {
    enum ek_mode mode;
    unsigned int iter;
    unsigned char pass[32];
    unsigned char salt[32];
} ek_global;

typedef struct {
    EVP_KDF *kdf;     /* evp_shared */
    EVP_KDF_CTX *ctx; /* evp_shared */
    const EVP_MD *md; /* deprecated_shared */
    OSSL_PARAM params[5];
} ek_local;

static enum ek_mode parse_mode(const char *m)
{
    if (strcmp(m, "evp_isolated") == 0)
        return M_EVP_ISOLATED;
    if (strcmp(m, "deprecated_shared") == 0)
        return M_DEP_SHARED;
    if (strcmp(m, "deprecated_isolated") == 0)
        return M_DEP_ISOLATED;
    return M_EVP_SHARED;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    long iter = pb_arg_int(env, "iter");
    if (iter < 1 || iter > 10000000)
        return pb_fail(err, errlen, "iter must be between 1 and 10000000, got %ld", iter);
    ek_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->mode = parse_mode(pb_arg(env, "mode"));
    g->iter = (unsigned int)iter;
    if (RAND_bytes(g->pass, sizeof(g->pass)) != 1 || RAND_bytes(g->salt, sizeof(g->salt)) != 1)
        return pb_fail(err, errlen, "RAND_bytes failed");
    return PB_OK;
}

/* The parameters of EVP_KDF_derive, in perftools' order. */
static void kdf_params(ek_global *g, OSSL_PARAM *p)
{
    p[0] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_PASSWORD, g->pass, sizeof(g->pass));
    p[1] = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, g->salt, sizeof(g->salt));
    p[2] = OSSL_PARAM_construct_uint(OSSL_KDF_PARAM_ITER, &g->iter);
    p[3] = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
    p[4] = OSSL_PARAM_construct_end();
}

static int evp_isolated(ek_global *g)
{
    unsigned char key[EK_KEY];
    EVP_KDF *kdf = EVP_KDF_fetch(NULL, "PBKDF2", NULL);
    EVP_KDF_CTX *ctx = NULL;
    OSSL_PARAM params[5];
    kdf_params(g, params);
    int ok = kdf != NULL && (ctx = EVP_KDF_CTX_new(kdf)) != NULL
             && EVP_KDF_derive(ctx, key, sizeof(key), params);
    EVP_KDF_CTX_free(ctx);
    EVP_KDF_free(kdf);
    return ok;
}

static int derive_once(ek_global *g, ek_local *l)
{
    unsigned char key[EK_KEY];
    switch (g->mode) {
    case M_EVP_ISOLATED:
        return evp_isolated(g);
    case M_DEP_ISOLATED:
        return PKCS5_PBKDF2_HMAC((const char *)g->pass, sizeof(g->pass), g->salt,
                                 sizeof(g->salt), (int)g->iter, EVP_sha256(), sizeof(key), key);
    case M_DEP_SHARED:
        return PKCS5_PBKDF2_HMAC((const char *)g->pass, sizeof(g->pass), g->salt,
                                 sizeof(g->salt), (int)g->iter, l->md, sizeof(key), key);
    case M_EVP_SHARED:
        break;
    }
    if (!EVP_KDF_derive(l->ctx, key, sizeof(key), l->params))
        return 0;
    EVP_KDF_CTX_reset(l->ctx);
    return 1;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    ek_global *g = global;
    ek_local *l = pb_alloc_local(t, sizeof(*l));
    if (l == NULL)
        return pb_fail(err, errlen, "out of memory");
    kdf_params(g, l->params);
    if (g->mode == M_DEP_SHARED)
        l->md = EVP_sha256();
    if (g->mode == M_EVP_SHARED
        && ((l->kdf = EVP_KDF_fetch(NULL, "PBKDF2", NULL)) == NULL
            || (l->ctx = EVP_KDF_CTX_new(l->kdf)) == NULL))
        return pb_fail(err, errlen, "making the PBKDF2 context failed");
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    for (uint64_t i = 0; i < n; i++)
        if (!derive_once(global, t->local))
            return pb_fail(err, errlen, "PBKDF2 derivation failed");
    return PB_OK;
}

int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    ek_local *l = t->local;
    (void)global; (void)err; (void)errlen;
    if (l != NULL) {
        EVP_KDF_CTX_free(l->ctx);
        EVP_KDF_free(l->kdf);
        free(l);
    }
    return PB_OK;
}
#endif
