// @kernel evp_setpeer
// @summary EVP_PKEY_derive_set_peer on a per-thread context made and derive-initialised once (as perftools times it)
// @arg key=ec256 choices=dh,ec256,ec521,x25519 dh: ffdhe2048; ec256/ec521: NIST P-256/P-521; x25519
// @min_version 1.1.1
/*
 * Two key pairs of the chosen type are generated in pb_setup and shared
 * read-only by all threads. Each thread makes one derivation context on our
 * key and runs EVP_PKEY_derive_init once (untimed); one operation is one
 * EVP_PKEY_derive_set_peer, which on 3.x validates the peer key — what this
 * kernel is about (seed 002), and exactly what perftools' evp_setpeer times.
 */
#include "perfbisect.h"

#include <openssl/evp.h>
#include <openssl/dh.h>
#include <openssl/ec.h>
#include <openssl/objects.h>

typedef struct {
    const char *name;
    EVP_PKEY *ours;
    EVP_PKEY *peer;
} sp_global;

static EVP_PKEY *genkey(const char *kind)
{
    EVP_PKEY_CTX *ctx = NULL;
    EVP_PKEY *pkey = NULL;

    if (strcmp(kind, "dh") == 0) {
        ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_DH, NULL);
        if (ctx == NULL || EVP_PKEY_keygen_init(ctx) <= 0
            || EVP_PKEY_CTX_set_dh_nid(ctx, NID_ffdhe2048) <= 0)
            goto end;
    } else if (strcmp(kind, "ec256") == 0 || strcmp(kind, "ec521") == 0) {
        int nid = kind[2] == '2' ? NID_X9_62_prime256v1 : NID_secp521r1;
        ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_EC, NULL);
        if (ctx == NULL || EVP_PKEY_keygen_init(ctx) <= 0
            || EVP_PKEY_CTX_set_ec_paramgen_curve_nid(ctx, nid) <= 0)
            goto end;
    } else if (strcmp(kind, "x25519") == 0) {
        ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_X25519, NULL);
        if (ctx == NULL || EVP_PKEY_keygen_init(ctx) <= 0)
            goto end;
    } else {
        goto end;
    }
    if (EVP_PKEY_keygen(ctx, &pkey) <= 0)
        pkey = NULL;
end:
    EVP_PKEY_CTX_free(ctx);
    return pkey;
}

/* One operation; returns NULL on success or the name of the failed step. */
static const char *set_peer_once(const sp_global *g)
{
    const char *failed = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(g->ours, NULL);
    if (ctx == NULL)
        return "EVP_PKEY_CTX_new";
    if (EVP_PKEY_derive_init(ctx) <= 0)
        failed = "EVP_PKEY_derive_init";
    else if (EVP_PKEY_derive_set_peer(ctx, g->peer) <= 0)
        failed = "EVP_PKEY_derive_set_peer";
    EVP_PKEY_CTX_free(ctx);
    return failed;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    const char *key = pb_arg(env, "key");
    sp_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->name = key;
    g->ours = genkey(key);
    g->peer = g->ours != NULL ? genkey(key) : NULL;
    if (g->peer == NULL)
        return pb_fail(err, errlen, "generating %s keys failed (unknown key type?)", key);
    const char *step = set_peer_once(g);
    if (step != NULL)
        return pb_fail(err, errlen, "%s (%s) failed in setup", step, key);
    ERR_clear_error();
    return PB_OK;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const sp_global *g = global;
    EVP_PKEY_CTX *ctx = t->local = EVP_PKEY_CTX_new(g->ours, NULL);
    if (ctx == NULL)
        return pb_fail(err, errlen, "EVP_PKEY_CTX_new (%s) failed", g->name);
    if (EVP_PKEY_derive_init(ctx) <= 0)
        return pb_fail(err, errlen, "EVP_PKEY_derive_init (%s) failed", g->name);
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const sp_global *g = global;
    EVP_PKEY_CTX *ctx = t->local;
    for (uint64_t i = 0; i < n; i++) {
        if (EVP_PKEY_derive_set_peer(ctx, g->peer) <= 0)
            return pb_fail(err, errlen, "EVP_PKEY_derive_set_peer (%s) failed", g->name);
    }
    return PB_OK;
}

PB_THREAD_DONE(EVP_PKEY_CTX_free)

void pb_teardown(void *global)
{
    sp_global *g = global;
    EVP_PKEY_free(g->ours);
    EVP_PKEY_free(g->peer);
    free(g);
}
