// @kernel newrawkey
// @summary EVP_PKEY_new_raw_public_key(_ex) from 32..57 raw bytes (x25519..ed448) or an 800..1568-byte ML-KEM encapsulation key + EVP_PKEY_free
// @arg alg=x25519 choices=x25519,ed25519,x448,ed448,ml-kem-512,ml-kem-768,ml-kem-1024 key algorithm (ml-kem-*: OpenSSL 3.5 and later)
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
 *
 * alg=ml-kem-512|768|1024 (perftools' newrawkey -a ml-kem-*) exists from 3.5
 * on and is "not applicable" before. Its public key is not a fixture (the
 * fixtures' hash is part of every cached sample's key): any string of
 * 384*k bytes of 12-bit coefficients below q = 3329, followed by a 32-byte
 * seed rho, is a valid encapsulation key (FIPS 203's modulus check), so
 * setup packs one from a fixed xorshift sequence, without OpenSSL's RAND.
 * Importing it decodes the coefficients, hashes the key (SHA3-256) and
 * expands the matrix from rho, whose rejection sampling makes the cost
 * depend a little on the key's bytes.
 */
#include "perfbisect.h"

#include <openssl/evp.h>
#include <openssl/objects.h>

typedef struct {
    const char *arg;
    const char *name; /* 3.x key type name */
    int id;           /* EVP_PKEY_*; 0 for ML-KEM */
    size_t len;       /* raw public key bytes */
    int ml_kem_k;     /* ML-KEM's k (module rank), 0 for the others */
} raw_alg;

static const raw_alg algs[] = {
    { "x25519", "X25519", EVP_PKEY_X25519, 32, 0 },
    { "ed25519", "ED25519", EVP_PKEY_ED25519, 32, 0 },
    { "x448", "X448", EVP_PKEY_X448, 56, 0 },
    { "ed448", "ED448", EVP_PKEY_ED448, 57, 0 },
    { "ml-kem-512", "ML-KEM-512", 0, 800, 2 },
    { "ml-kem-768", "ML-KEM-768", 0, 1184, 3 },
    { "ml-kem-1024", "ML-KEM-1024", 0, 1568, 4 },
};

typedef struct {
    const raw_alg *alg;
    unsigned char pub[1568];
    size_t publen;
} nr_global;

#if OPENSSL_VERSION_NUMBER >= 0x30500000L
static uint32_t xorshift(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* An ML-KEM encapsulation key of rank k: 256*k coefficients below 3329,
 * two per three bytes, then 32 bytes of rho. */
static void ml_kem_key(nr_global *g)
{
    uint32_t s = 0x9e3779b9u + (uint32_t)g->alg->ml_kem_k;
    size_t t = 384 * (size_t)g->alg->ml_kem_k, i;
    for (i = 0; i < t; i += 3) {
        uint32_t c0 = xorshift(&s) % 3329, c1 = xorshift(&s) % 3329;
        g->pub[i] = (unsigned char)c0;
        g->pub[i + 1] = (unsigned char)((c0 >> 8) | ((c1 & 0xf) << 4));
        g->pub[i + 2] = (unsigned char)(c1 >> 4);
    }
    for (; i < g->alg->len; i++)
        g->pub[i] = (unsigned char)xorshift(&s);
    g->publen = g->alg->len;
}
#endif

/* The raw public key from the fixture raw-ALG.pub. */
static int read_raw(const pb_env *env, nr_global *g, char *err, size_t errlen)
{
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
    return PB_OK;
}

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
    if (g->alg->ml_kem_k != 0) {
#if OPENSSL_VERSION_NUMBER >= 0x30500000L
        ml_kem_key(g);
#else
        return pb_not_applicable(err, errlen, "ML-KEM needs OpenSSL 3.5 or later");
#endif
    } else if (read_raw(env, g, err, errlen) != PB_OK) {
        return PB_ERROR;
    }

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
