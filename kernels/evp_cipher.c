// @kernel evp_cipher
// @summary encrypt one buffer: EVP_EncryptInit_ex (new key and IV) + EVP_EncryptUpdate + EVP_EncryptFinal_ex (+ get the tag for AEAD)
// @arg alg=aes-128-cbc choices=aes-128-cbc,aes-256-cbc,aes-128-gcm,aes-256-gcm,aes-128-ctr,chacha20-poly1305 cipher
// @arg size=1024 int plaintext bytes per operation
// @min_version 1.1.1
// @unit bytes=size
/*
 * Each thread owns an EVP_CIPHER_CTX set to the cipher once (pb_thread_init).
 * One operation re-initialises it with a key and IV (so the key schedule is
 * part of the operation), encrypts `size` bytes in one EVP_EncryptUpdate, and
 * finishes (CBC adds PKCS#7 padding; GCM and ChaCha20-Poly1305 compute a
 * 16-byte tag, fetched with EVP_CTRL_AEAD_GET_TAG). On 3.x the cipher is
 * fetched once with EVP_CIPHER_fetch (no implicit fetch per operation); on
 * 1.1.1 it comes from EVP_get_cipherbyname.
 */
#include "perfbisect.h"

#include <openssl/evp.h>

typedef struct {
    char name[32];
    int aead;
    int size;
    EVP_CIPHER *fetched; /* 3.x */
    const EVP_CIPHER *cipher;
    unsigned char key[32];
    unsigned char iv[16];
} ec_global;

typedef struct {
    EVP_CIPHER_CTX *ctx;
    unsigned char *in;
    unsigned char *out;
} ec_local;

static const char *encrypt_once(const ec_global *g, ec_local *l)
{
    int outl = 0, fin = 0;
    if (EVP_EncryptInit_ex(l->ctx, NULL, NULL, g->key, g->iv) != 1)
        return "EVP_EncryptInit_ex";
    if (EVP_EncryptUpdate(l->ctx, l->out, &outl, l->in, g->size) != 1)
        return "EVP_EncryptUpdate";
    if (EVP_EncryptFinal_ex(l->ctx, l->out + outl, &fin) != 1)
        return "EVP_EncryptFinal_ex";
    if (g->aead) {
        unsigned char tag[16];
        if (EVP_CIPHER_CTX_ctrl(l->ctx, EVP_CTRL_AEAD_GET_TAG, sizeof(tag), tag) != 1)
            return "EVP_CTRL_AEAD_GET_TAG";
    }
    return NULL;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    const char *alg = pb_arg(env, "alg");
    long size = pb_arg_int(env, "size");
    if (size < 1 || size > (1L << 28))
        return pb_fail(err, errlen, "size must be between 1 and %ld, got %ld", 1L << 28, size);
    ec_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    snprintf(g->name, sizeof(g->name), "%s", alg);
    g->size = (int)size;
    g->aead = strstr(alg, "gcm") != NULL || strstr(alg, "poly1305") != NULL;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    g->fetched = EVP_CIPHER_fetch(NULL, alg, NULL);
    g->cipher = g->fetched;
#else
    g->cipher = EVP_get_cipherbyname(alg);
#endif
    if (g->cipher == NULL)
        return pb_fail(err, errlen, "cipher %s not available", alg);
    for (size_t i = 0; i < sizeof(g->key); i++)
        g->key[i] = (unsigned char)(0x11 * i + 3);
    for (size_t i = 0; i < sizeof(g->iv); i++)
        g->iv[i] = (unsigned char)(0x07 * i + 1);
    return PB_OK;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const ec_global *g = global;
    ec_local *l = pb_alloc_local(t, sizeof(*l));
    if (l == NULL)
        return pb_fail(err, errlen, "out of memory");
    l->in = pb_buffer((size_t)g->size, 0x5a);
    l->out = pb_buffer((size_t)g->size + 64, 0);
    l->ctx = EVP_CIPHER_CTX_new();
    if (l->in == NULL || l->out == NULL || l->ctx == NULL)
        return pb_fail(err, errlen, "out of memory");
    if (EVP_EncryptInit_ex(l->ctx, g->cipher, NULL, NULL, NULL) != 1)
        return pb_fail(err, errlen, "EVP_EncryptInit_ex(%s) failed", g->name);
    const char *failed = encrypt_once(g, l);
    if (failed != NULL)
        return pb_fail(err, errlen, "%s (%s) failed in thread init", failed, g->name);
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const ec_global *g = global;
    ec_local *l = t->local;
    for (uint64_t i = 0; i < n; i++) {
        const char *failed = encrypt_once(g, l);
        if (failed != NULL)
            return pb_fail(err, errlen, "%s (%s) failed", failed, g->name);
    }
    return PB_OK;
}

int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    ec_local *l = t->local;
    (void)global; (void)err; (void)errlen;
    EVP_CIPHER_CTX_free(l->ctx);
    free(l->in);
    free(l->out);
    free(l);
    return PB_OK;
}

void pb_teardown(void *global)
{
    ec_global *g = global;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    EVP_CIPHER_free(g->fetched);
#endif
    free(g);
}
