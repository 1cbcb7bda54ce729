// @kernel evp_fetch
// @summary fetch one algorithm implementation (EVP_MD_fetch, EVP_CIPHER_fetch, ...) + free, from the default library context or the kernel's own; type=all walks perftools' list
// @arg type=MD choices=MD,CIPHER,KDF,MAC,RAND,KEM,SIGNATURE,KEYMGMT,KEYEXCH,ASYM_CIPHER,all which kind of algorithm to fetch (all: perftools' evp_fetch without -f)
// @arg alg=default algorithm name; default: SHA2-256, AES-128-CBC, HKDF, HMAC, CTR-DRBG, RSA (KEM, SIGNATURE, KEYMGMT, ASYM_CIPHER), DH (KEYEXCH)
// @arg libctx=default choices=default,own the library context fetched from: the default one (NULL), or one made by OSSL_LIB_CTX_new() in setup (as perftools' evp_fetch; about 100 fewer instructions per fetch)
// @arg pq=no choices=no,yes type=all: also the ML-KEM, ML-DSA and SLH-DSA entries (perftools -q; OpenSSL 3.5 and later)
// @min_version 3.0.0
/*
 * One operation: EVP_<TYPE>_fetch(ctx, alg, NULL) + EVP_<TYPE>_free, no
 * property query. The first fetch (in pb_setup, not timed) loads the default
 * provider and fills the method store; the timed fetches hit its cache.
 * ctx is NULL (libctx=default) or the kernel's own (libctx=own): resolving
 * NULL to the default context costs each fetch about 100 instructions
 * (3.0.22: 2,451 against 2,353; 3.2.1: 1,201 against 1,090), which is the
 * whole gap to perftools, whose evp_fetch uses its own context.
 *
 * type=all is perftools' evp_fetch without -f: each thread walks one list of
 * 17 algorithms (four digests, four AES ciphers, four KDFs, five MACs; fewer
 * where the build leaves one out), one fetch + free per operation, in order,
 * starting again at the end; pq=yes (perftools -q) appends ML-KEM-512..1024,
 * ML-DSA-44..87 and six SLH-DSA-SHA2 sets, not applicable before 3.5.
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
    size_t n_all; /* type=all: entries walked, 0 otherwise */
} ef_global;

/* Fetch and free once; returns 1 if the fetch found an implementation. */
static int fetch_one(OSSL_LIB_CTX *ctx, enum fetch_type type, const char *alg)
{
    switch (type) {
    case T_MD: {
        EVP_MD *p = EVP_MD_fetch(ctx, alg, NULL);
        EVP_MD_free(p);
        return p != NULL;
    }
    case T_CIPHER: {
        EVP_CIPHER *p = EVP_CIPHER_fetch(ctx, alg, NULL);
        EVP_CIPHER_free(p);
        return p != NULL;
    }
    case T_KDF: {
        EVP_KDF *p = EVP_KDF_fetch(ctx, alg, NULL);
        EVP_KDF_free(p);
        return p != NULL;
    }
    case T_MAC: {
        EVP_MAC *p = EVP_MAC_fetch(ctx, alg, NULL);
        EVP_MAC_free(p);
        return p != NULL;
    }
    case T_RAND: {
        EVP_RAND *p = EVP_RAND_fetch(ctx, alg, NULL);
        EVP_RAND_free(p);
        return p != NULL;
    }
    case T_KEM: {
        EVP_KEM *p = EVP_KEM_fetch(ctx, alg, NULL);
        EVP_KEM_free(p);
        return p != NULL;
    }
    case T_SIGNATURE: {
        EVP_SIGNATURE *p = EVP_SIGNATURE_fetch(ctx, alg, NULL);
        EVP_SIGNATURE_free(p);
        return p != NULL;
    }
    case T_KEYMGMT: {
        EVP_KEYMGMT *p = EVP_KEYMGMT_fetch(ctx, alg, NULL);
        EVP_KEYMGMT_free(p);
        return p != NULL;
    }
    case T_KEYEXCH: {
        EVP_KEYEXCH *p = EVP_KEYEXCH_fetch(ctx, alg, NULL);
        EVP_KEYEXCH_free(p);
        return p != NULL;
    }
    case T_ASYM_CIPHER: {
        EVP_ASYM_CIPHER *p = EVP_ASYM_CIPHER_fetch(ctx, alg, NULL);
        EVP_ASYM_CIPHER_free(p);
        return p != NULL;
    }
    }
    return 0;
}
#define fetch_once(g) fetch_one((g)->ctx, (g)->type, (g)->alg)

/* type=all: perftools' evp_fetch without -f, every thread walking this list
 * in order, one entry per operation; pq=yes appends the post-quantum entries
 * (perftools -q, 3.5 and later). */
typedef struct {
    enum fetch_type type;
    const char *alg;
} ef_entry;

static const ef_entry rotation[] = {
    { T_MD, "SHA2-224" }, { T_MD, "SHA2-256" }, { T_MD, "SHA3-224" }, { T_MD, "SHA3-256" },
    { T_CIPHER, "AES-128-GCM" }, { T_CIPHER, "AES-128-CBC" },
    { T_CIPHER, "AES-256-GCM" }, { T_CIPHER, "AES-256-CBC" },
    { T_KDF, "HKDF" },
#ifndef OPENSSL_NO_SCRYPT
    { T_KDF, "SCRYPT" },
#endif
    { T_KDF, "KRB5KDF" }, { T_KDF, "KBKDF" },
#ifndef OPENSSL_NO_BLAKE2
    { T_MAC, "BLAKE2BMAC" },
#endif
#ifndef OPENSSL_NO_CMAC
    { T_MAC, "CMAC" },
#endif
    { T_MAC, "GMAC" }, { T_MAC, "HMAC" },
#ifndef OPENSSL_NO_POLY1305
    { T_MAC, "POLY1305" },
#endif
};

static const ef_entry rotation_pq[] = {
#if OPENSSL_VERSION_NUMBER >= 0x30500000L
#ifndef OPENSSL_NO_ML_KEM
    { T_KEM, "ML-KEM-512" }, { T_KEM, "ML-KEM-768" }, { T_KEM, "ML-KEM-1024" },
#endif
#ifndef OPENSSL_NO_ML_DSA
    { T_SIGNATURE, "ML-DSA-44" }, { T_SIGNATURE, "ML-DSA-65" }, { T_SIGNATURE, "ML-DSA-87" },
#endif
#ifndef OPENSSL_NO_SLH_DSA
    { T_SIGNATURE, "SLH-DSA-SHA2-128s" }, { T_SIGNATURE, "SLH-DSA-SHA2-192s" },
    { T_SIGNATURE, "SLH-DSA-SHA2-256s" }, { T_SIGNATURE, "SLH-DSA-SHA2-128f" },
    { T_SIGNATURE, "SLH-DSA-SHA2-192f" }, { T_SIGNATURE, "SLH-DSA-SHA2-256f" },
#endif
#endif
    { T_MD, NULL } /* not an entry: keeps the array non-empty before 3.5 */
};

#define N_ROTATION (sizeof(rotation) / sizeof(rotation[0]))
#define N_ROTATION_PQ (sizeof(rotation_pq) / sizeof(rotation_pq[0]) - 1)

static const ef_entry *rotation_entry(size_t j)
{
    return j < N_ROTATION ? &rotation[j] : &rotation_pq[j - N_ROTATION];
}
#endif

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
/* type=all: the list's length, every entry checked once (not timed). */
static int setup_all(const pb_env *env, ef_global *g, char *err, size_t errlen)
{
    int pq = strcmp(pb_arg(env, "pq"), "yes") == 0;
    const char *alg = pb_arg(env, "alg");
    if (*alg != '\0' && strcmp(alg, "default") != 0)
        return pb_fail(err, errlen, "type=all walks its own list: alg must be default");
    if (pq && N_ROTATION_PQ == 0)
        return pb_not_applicable(err, errlen, "evp_fetch pq=yes needs OpenSSL 3.5 "
                                 "(ML-KEM, ML-DSA, SLH-DSA)");
    g->n_all = N_ROTATION + (pq ? N_ROTATION_PQ : 0);
    for (size_t j = 0; j < g->n_all; j++) {
        const ef_entry *e = rotation_entry(j);
        if (!fetch_one(g->ctx, e->type, e->alg))
            return pb_fail(err, errlen, "fetching %s found nothing", e->alg);
    }
    return PB_OK;
}
#endif

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    const char *type = pb_arg(env, "type");
    const char *alg = pb_arg(env, "alg");
    ef_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    if (strcmp(pb_arg(env, "libctx"), "own") == 0 && (g->ctx = OSSL_LIB_CTX_new()) == NULL)
        return pb_fail(err, errlen, "OSSL_LIB_CTX_new failed");
    if (strcmp(type, "all") == 0)
        return setup_all(env, g, err, errlen);
    if (strcmp(pb_arg(env, "pq"), "yes") == 0)
        return pb_fail(err, errlen, "pq=yes applies to type=all only");
    size_t i;
    for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(types[i].name, type) == 0)
            break;
    if (i == sizeof(types) / sizeof(types[0]))
        return pb_fail(err, errlen, "unknown fetch type '%s'", type);
    g->type = types[i].type;
    g->type_name = types[i].name;
    if (*alg == '\0' || strcmp(alg, "default") == 0)
        alg = types[i].dflt;
    snprintf(g->alg, sizeof(g->alg), "%s", alg);
    if (!fetch_once(g))
        return pb_fail(err, errlen, "EVP_%s_fetch(%s, \"%s\", NULL) found nothing",
                       g->type_name, g->ctx ? "own libctx" : "NULL", g->alg);
    return PB_OK;
#else
    (void)env; (void)global;
    return pb_not_applicable(err, errlen, "EVP_*_fetch needs OpenSSL 3.0 (no providers before)");
#endif
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    (void)global;
    if (pb_alloc_local(t, sizeof(size_t)) == NULL)
        return pb_fail(err, errlen, "out of memory");
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    const ef_global *g = global;
    if (g->n_all > 0) {
        size_t *next = t->local;
        for (uint64_t i = 0; i < n; i++) {
            const ef_entry *e = rotation_entry((*next)++ % g->n_all);
            if (!fetch_one(g->ctx, e->type, e->alg))
                return pb_fail(err, errlen, "fetching %s failed", e->alg);
        }
        return PB_OK;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (!fetch_once(g))
            return pb_fail(err, errlen, "EVP_%s_fetch(\"%s\") failed", g->type_name, g->alg);
    }
    return PB_OK;
#else
    (void)global; (void)t; (void)n;
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
