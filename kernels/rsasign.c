// @kernel rsasign
// @summary EVP_PKEY_sign_init + EVP_PKEY_sign (PKCS#1 v1.5) of 32 bytes with a 512-bit RSA key, on a per-thread context (as perftools)
// @min_version 1.1.1
/*
 * The key (fixtures/rsa512.pem) is decoded once in pb_setup and shared by all
 * threads. No digest is set on the context, so the 32 input bytes are padded
 * with PKCS#1 v1.5 type 1 padding (the default) and signed as they are.
 */
#include "perfbisect.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

static const unsigned char tbs[32] = {
    0x2c, 0x26, 0xb4, 0x6b, 0x68, 0xff, 0xc6, 0x8f, 0xf9, 0x9b, 0x45, 0x3c,
    0x1d, 0x30, 0x41, 0x34, 0x13, 0x42, 0x2d, 0x70, 0x64, 0x83, 0xbf, 0xa0,
    0xf9, 0x8a, 0x5e, 0x88, 0x62, 0x66, 0xe7, 0xae,
};

/* One operation on a context made once per thread; returns NULL on success
 * or the name of the failed step. */
static const char *sign_once(EVP_PKEY_CTX *ctx)
{
    unsigned char sig[512];
    size_t siglen = sizeof(sig);
    if (EVP_PKEY_sign_init(ctx) <= 0)
        return "EVP_PKEY_sign_init";
    if (EVP_PKEY_sign(ctx, sig, &siglen, tbs, sizeof(tbs)) <= 0)
        return "EVP_PKEY_sign";
    return NULL;
}

/* The global state is the key itself. */
int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    unsigned char *data;
    size_t len;
    if (pb_read_fixture(env, "rsa512.pem", &data, &len, err, errlen) != PB_OK)
        return PB_ERROR;
    BIO *bio = BIO_new_mem_buf(data, (int)len);
    EVP_PKEY *pkey = *global = bio != NULL ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    free(data);
    if (pkey == NULL)
        return pb_fail(err, errlen, "decoding fixture rsa512.pem failed");
    if (EVP_PKEY_base_id(pkey) != EVP_PKEY_RSA || EVP_PKEY_bits(pkey) != 512)
        return pb_fail(err, errlen, "fixture rsa512.pem is not a 512-bit RSA key");
    /* One untimed signature, so an unusable key fails here, not mid-run. */
    EVP_PKEY_CTX *probe = EVP_PKEY_CTX_new(pkey, NULL);
    const char *step = probe != NULL ? sign_once(probe) : "EVP_PKEY_CTX_new";
    EVP_PKEY_CTX_free(probe);
    if (step != NULL)
        return pb_fail(err, errlen, "%s failed in setup", step);
    return PB_OK;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    if ((t->local = EVP_PKEY_CTX_new(global, NULL)) == NULL)
        return pb_fail(err, errlen, "EVP_PKEY_CTX_new failed");
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)global;
    for (uint64_t i = 0; i < n; i++) {
        const char *step = sign_once(t->local);
        if (step != NULL)
            return pb_fail(err, errlen, "%s failed", step);
    }
    return PB_OK;
}

PB_THREAD_DONE(EVP_PKEY_CTX_free)

PB_TEARDOWN(EVP_PKEY_free)
