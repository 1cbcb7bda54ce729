// @kernel evp_setpeer
// @summary EVP_PKEY_derive_set_peer on a per-thread context made and derive-initialised once (as perftools times it)
// @arg key=ec256 choices=dh,ec256,ec521,x25519 dh: ffdhe2048; ec256/ec521: NIST P-256/P-521; x25519
// @min_version 1.1.1
/*
 * Two private keys of the chosen type (ours, then the peer) are read from the
 * fixture setpeer-KEY.pem in pb_setup and shared read-only by all threads. Each
 * thread makes one derivation context on our key and runs EVP_PKEY_derive_init
 * once (untimed); one operation is one EVP_PKEY_derive_set_peer, which on 3.x
 * validates the peer key — what this kernel is about (seed 002), and exactly
 * what perftools' evp_setpeer times.
 *
 * The keys are decoded from PEM, as perftools does, and not generated: a keygen
 * fetches RAND's algorithms, and on 3.x every name a process has fetched makes
 * the namemap walk inside each set_peer longer (x25519 on 3.2.1: 9,096
 * instructions per operation after a keygen, 7,537 after a PEM decode,
 * perftools 7,528; docs/parity.md).
 */
#include "perfbisect.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

typedef struct {
    const char *name;
    EVP_PKEY *ours;
    EVP_PKEY *peer;
} sp_global;

/* Reads both keys of setpeer-KIND.pem into g. */
static int read_keys(const pb_env *env, sp_global *g, char *err, size_t errlen)
{
    char name[64];
    unsigned char *pem = NULL;
    size_t len = 0;

    snprintf(name, sizeof(name), "setpeer-%s.pem", g->name);
    if (pb_read_fixture(env, name, &pem, &len, err, errlen) != PB_OK)
        return PB_ERROR;
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (bio != NULL) {
        g->ours = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
        g->peer = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    }
    BIO_free(bio);
    free(pem);
    if (g->ours == NULL || g->peer == NULL)
        return pb_fail(err, errlen, "reading two %s keys from fixture %s failed", g->name, name);
    return PB_OK;
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
    if (read_keys(env, g, err, errlen) != PB_OK)
        return PB_ERROR;
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
