// @kernel evp_fetch
// @summary fetch one algorithm implementation (EVP_MD_fetch, EVP_CIPHER_fetch, ...) + free, from the default library context or the kernel's own
// @arg type=MD choices=MD,CIPHER,KDF,MAC,RAND,KEM,SIGNATURE,KEYMGMT,KEYEXCH,ASYM_CIPHER which kind of algorithm to fetch
// @arg alg=default algorithm name; default: SHA2-256, AES-128-CBC, HKDF, HMAC, CTR-DRBG, RSA (KEM, SIGNATURE, KEYMGMT, ASYM_CIPHER), DH (KEYEXCH)
// @arg libctx=default choices=default,own the library context fetched from: the default one (NULL), or one made by OSSL_LIB_CTX_new() in setup (as perftools' evp_fetch; about 100 fewer instructions per fetch)
// @min_version 3.0.0
/*
 * One operation: EVP_<TYPE>_fetch(ctx, alg, NULL) + EVP_<TYPE>_free, no
 * property query. The first fetch (in pb_setup, not timed) loads the default
 * provider and fills the method store; the timed fetches hit its cache.
 * ctx is NULL (libctx=default) or the kernel's own (libctx=own): resolving
 * NULL to the default context costs each fetch about 100 instructions
 * (3.0.22: 2,451 against 2,353; 3.2.1: 1,201 against 1,090), which is the
 * whole gap to perftools, whose evp_fetch uses its own context.
 */
#include "perfbisect.h"

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
#include <openssl/evp.h>
#include <openssl/kdf.h>

enum fetch_type { T_MD, T_CIPHER, T_KDF, T_MAC, T_RAND, T_KEM, T_SIGNATURE, T_KEYMGMT, T_KEYEXCH, T_ASYM_CIPHER };

static const struct {
    const char *name;
    enum fetch_type type;
    const char *dflt;
} types[] = {
    { "MD", T_MD, "SHA2-256" },
    { "CIPHER", T_CIPHER, "AES-128-CBC" },
    { "KDF", T_KDF, "HKDF" },
    { "MAC", T_MAC, "HMAC" },
    { "RAND", T_RAND, "CTR-DRBG" },
    { "KEM", T_KEM, "RSA" },
    { "SIGNATURE", T_SIGNATURE, "RSA" },
    { "KEYMGMT", T_KEYMGMT, "RSA" },
    { "KEYEXCH", T_KEYEXCH, "DH" },
    { "ASYM_CIPHER", T_ASYM_CIPHER, "RSA" },
};

typedef struct {
    enum fetch_type type;
    const char *type_name;
    char alg[128];
    OSSL_LIB_CTX *ctx;
} ef_global;

/* Fetch and free once; returns 1 if the fetch found an implementation. */
static int fetch_once(const ef_global *g)
{
    switch (g->type) {
    case T_MD: {
        EVP_MD *p = EVP_MD_fetch(g->ctx, g->alg, NULL);
        EVP_MD_free(p);
        return p != NULL;
    }
    case T_CIPHER: {
        EVP_CIPHER *p = EVP_CIPHER_fetch(g->ctx, g->alg, NULL);
        EVP_CIPHER_free(p);
        return p != NULL;
    }
    case T_KDF: {
        EVP_KDF *p = EVP_KDF_fetch(g->ctx, g->alg, NULL);
        EVP_KDF_free(p);
        return p != NULL;
    }
    case T_MAC: {
        EVP_MAC *p = EVP_MAC_fetch(g->ctx, g->alg, NULL);
        EVP_MAC_free(p);
        return p != NULL;
    }
    case T_RAND: {
        EVP_RAND *p = EVP_RAND_fetch(g->ctx, g->alg, NULL);
        EVP_RAND_free(p);
        return p != NULL;
    }
    case T_KEM: {
        EVP_KEM *p = EVP_KEM_fetch(g->ctx, g->alg, NULL);
        EVP_KEM_free(p);
        return p != NULL;
    }
    case T_SIGNATURE: {
        EVP_SIGNATURE *p = EVP_SIGNATURE_fetch(g->ctx, g->alg, NULL);
        EVP_SIGNATURE_free(p);
        return p != NULL;
    }
    case T_KEYMGMT: {
        EVP_KEYMGMT *p = EVP_KEYMGMT_fetch(g->ctx, g->alg, NULL);
        EVP_KEYMGMT_free(p);
        return p != NULL;
    }
    case T_KEYEXCH: {
        EVP_KEYEXCH *p = EVP_KEYEXCH_fetch(g->ctx, g->alg, NULL);
        EVP_KEYEXCH_free(p);
        return p != NULL;
    }
    case T_ASYM_CIPHER: {
        EVP_ASYM_CIPHER *p = EVP_ASYM_CIPHER_fetch(g->ctx, g->alg, NULL);
        EVP_ASYM_CIPHER_free(p);
        return p != NULL;
    }
    }
    return 0;
}
#endif

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    const char *type = pb_arg(env, "type");
    const char *alg = pb_arg(env, "alg");
    size_t i;
    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(types[i].name, type) == 0)
            break;
    if (i == sizeof(types) / sizeof(types[0]))
        return pb_fail(err, errlen, "unknown fetch type '%s'", type);
    ef_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->type = types[i].type;
    g->type_name = types[i].name;
    if (*alg == '\0' || strcmp(alg, "default") == 0)
        alg = types[i].dflt;
    snprintf(g->alg, sizeof(g->alg), "%s", alg);
    if (strcmp(pb_arg(env, "libctx"), "own") == 0 && (g->ctx = OSSL_LIB_CTX_new()) == NULL)
        return pb_fail(err, errlen, "OSSL_LIB_CTX_new failed");
    if (!fetch_once(g))
        return pb_fail(err, errlen, "EVP_%s_fetch(%s, \"%s\", NULL) found nothing",
                       g->type_name, g->ctx ? "own libctx" : "NULL", g->alg);
    return PB_OK;
#else
    (void)env; (void)global;
    return pb_not_applicable(err, errlen, "EVP_*_fetch needs OpenSSL 3.0 (no providers before)");
#endif
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)t;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    const ef_global *g = global;
    for (uint64_t i = 0; i < n; i++) {
        if (!fetch_once(g))
            return pb_fail(err, errlen, "EVP_%s_fetch(\"%s\") failed", g->type_name, g->alg);
    }
    return PB_OK;
#else
    (void)global; (void)n;
    return pb_fail(err, errlen, "not applicable before OpenSSL 3.0");
#endif
}

void pb_teardown(void *global)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    ef_global *g = global;
    if (g != NULL)
        OSSL_LIB_CTX_free(g->ctx);
#endif
    free(global);
}
