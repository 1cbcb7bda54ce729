// @kernel ecdsa
// @summary ECDSA sign or verify of a 32-byte digest with EVP_PKEY_sign / EVP_PKEY_verify on a per-thread context
// @arg op=sign choices=sign,verify operation
// @arg curve=P-256 choices=P-256,P-384,P-521 NIST curve
// @min_version 1.1.1
/*
 * pb_setup generates one key on the curve (shared read-only by all threads)
 * and, for verify, one signature of the digest. Each thread creates an
 * EVP_PKEY_CTX on the key and initialises it for signing or verifying once,
 * as `openssl speed ecdsa` does; one operation is one EVP_PKEY_sign
 * (DER-encoded signature) or one EVP_PKEY_verify of a 32-byte "digest" (no
 * digest algorithm is set on the context).
 */
#include "perfbisect.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/objects.h>

typedef struct {
    int verify;
    const char *curve;
    EVP_PKEY *pkey;
    unsigned char sig[256];
    size_t siglen;
} es_global;

static const unsigned char dgst[32] = {
    0x9f, 0x86, 0xd0, 0x81, 0x88, 0x4c, 0x7d, 0x65, 0x9a, 0x2f, 0xea, 0xa0,
    0xc5, 0x5a, 0xd0, 0x15, 0xa3, 0xbf, 0x4f, 0x1b, 0x2b, 0x0b, 0x82, 0x2c,
    0xd1, 0x5d, 0x6c, 0x15, 0xb0, 0xf0, 0x0a, 0x08,
};

static const char *op_once(const es_global *g, EVP_PKEY_CTX *ctx)
{
    if (g->verify) {
        if (EVP_PKEY_verify(ctx, g->sig, g->siglen, dgst, sizeof(dgst)) != 1)
            return "EVP_PKEY_verify";
    } else {
        unsigned char sig[256];
        size_t siglen = sizeof(sig);
        if (EVP_PKEY_sign(ctx, sig, &siglen, dgst, sizeof(dgst)) != 1)
            return "EVP_PKEY_sign";
    }
    return NULL;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    const char *op = pb_arg(env, "op");
    const char *curve = pb_arg(env, "curve");
    int nid;
    if (strcmp(curve, "P-256") == 0)
        nid = NID_X9_62_prime256v1;
    else if (strcmp(curve, "P-384") == 0)
        nid = NID_secp384r1;
    else if (strcmp(curve, "P-521") == 0)
        nid = NID_secp521r1;
    else
        return pb_fail(err, errlen, "unknown curve '%s'", curve);

    es_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->verify = strcmp(op, "verify") == 0;
    g->curve = curve;

    EVP_PKEY_CTX *kctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
    int ok = kctx != NULL && EVP_PKEY_keygen_init(kctx) > 0
             && EVP_PKEY_CTX_set_ec_paramgen_curve_nid(kctx, nid) > 0
             && EVP_PKEY_keygen(kctx, &g->pkey) > 0;
    EVP_PKEY_CTX_free(kctx);
    if (!ok)
        return pb_fail(err, errlen, "generating a %s key failed", curve);

    /* A signature to verify (and a check that signing works). */
    EVP_PKEY_CTX *sctx = EVP_PKEY_CTX_new(g->pkey, NULL);
    g->siglen = sizeof(g->sig);
    ok = sctx != NULL && EVP_PKEY_sign_init(sctx) > 0
         && EVP_PKEY_sign(sctx, g->sig, &g->siglen, dgst, sizeof(dgst)) == 1;
    EVP_PKEY_CTX_free(sctx);
    if (!ok)
        return pb_fail(err, errlen, "EVP_PKEY_sign (%s) failed in setup", curve);
    return PB_OK;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const es_global *g = global;
    EVP_PKEY_CTX *ctx = t->local = EVP_PKEY_CTX_new(g->pkey, NULL);
    if (ctx == NULL)
        return pb_fail(err, errlen, "EVP_PKEY_CTX_new failed");
    if ((g->verify ? EVP_PKEY_verify_init(ctx) : EVP_PKEY_sign_init(ctx)) <= 0)
        return pb_fail(err, errlen, "EVP_PKEY_%s_init failed", g->verify ? "verify" : "sign");
    const char *failed = op_once(g, ctx);
    if (failed != NULL)
        return pb_fail(err, errlen, "%s (%s) failed in thread init", failed, g->curve);
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const es_global *g = global;
    EVP_PKEY_CTX *ctx = t->local;
    for (uint64_t i = 0; i < n; i++) {
        const char *failed = op_once(g, ctx);
        if (failed != NULL)
            return pb_fail(err, errlen, "%s (%s) failed", failed, g->curve);
    }
    return PB_OK;
}

PB_THREAD_DONE(EVP_PKEY_CTX_free)

void pb_teardown(void *global)
{
    es_global *g = global;
    EVP_PKEY_free(g->pkey);
    free(g);
}
