// @kernel newrawkey
// @summary EVP_PKEY_new_raw_public_key(_ex) from 32..57 raw bytes + EVP_PKEY_free
// @arg alg=x25519 choices=x25519,ed25519,x448,ed448 key algorithm
// @min_version 1.1.1
/*
 * On 3.x one operation is EVP_PKEY_new_raw_public_key_ex(NULL, NAME, NULL,
 * ...), i.e. a provider key made in the default library context; on 1.1.1
 * (no _ex variant) it is EVP_PKEY_new_raw_public_key(NID, NULL, ...). The raw
 * public key is read from the fixture raw-ALG.pub. It is not generated in
 * pb_setup: generating a key uses RAND, which fetches DRBGs and ciphers, and on
 * 3.0 every name the process has fetched lengthens the walk over the whole
 * namemap that each EVP_PKEY_new_raw_public_key_ex makes
 * (EVP_KEYMGMT_names_do_all): a keygen in setup made every operation 13% more
 * instructions (docs/parity.md, "newrawkey").
 */
#include "perfbisect.h"

#include <openssl/evp.h>
#include <openssl/objects.h>

typedef struct {
    const char *arg;
    const char *name; /* 3.x key type name */
    int id;           /* EVP_PKEY_* */
    size_t len;       /* raw public key bytes */
} raw_alg;

static const raw_alg algs[] = {
    { "x25519", "X25519", EVP_PKEY_X25519, 32 },
    { "ed25519", "ED25519", EVP_PKEY_ED25519, 32 },
    { "x448", "X448", EVP_PKEY_X448, 56 },
    { "ed448", "ED448", EVP_PKEY_ED448, 57 },
};

typedef struct {
    const raw_alg *alg;
    unsigned char pub[64];
    size_t publen;
} nr_global;

static EVP_PKEY *new_raw(const nr_global *g)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    return EVP_PKEY_new_raw_public_key_ex(NULL, g->alg->name, NULL, g->pub, g->publen);
#else
    return EVP_PKEY_new_raw_public_key(g->alg->id, NULL, g->pub, g->publen);
#endif
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    const char *arg = pb_arg(env, "alg");
    nr_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
        if (strcmp(algs[i].arg, arg) == 0)
            g->alg = &algs[i];
    if (g->alg == NULL)
        return pb_fail(err, errlen, "unknown alg '%s'", arg);

    char name[32];
    snprintf(name, sizeof(name), "raw-%s.pub", g->alg->arg);
    unsigned char *raw = NULL;
    size_t rawlen = 0;
    if (pb_read_fixture(env, name, &raw, &rawlen, err, errlen) != PB_OK)
        return PB_ERROR;
    if (rawlen != g->alg->len) {
        free(raw);
        return pb_fail(err, errlen, "fixture %s has %zu bytes, not %zu", name, rawlen,
                       g->alg->len);
    }
    memcpy(g->pub, raw, rawlen);
    g->publen = rawlen;
    free(raw);

    EVP_PKEY *pkey = new_raw(g);
    if (pkey == NULL)
        return pb_fail(err, errlen, "EVP_PKEY_new_raw_public_key(%s) failed in setup", arg);
    EVP_PKEY_free(pkey);
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const nr_global *g = global;
    (void)t;
    for (uint64_t i = 0; i < n; i++) {
        EVP_PKEY *pkey = new_raw(g);
        if (pkey == NULL)
            return pb_fail(err, errlen, "EVP_PKEY_new_raw_public_key(%s) failed", g->alg->arg);
        EVP_PKEY_free(pkey);
    }
    return PB_OK;
}
