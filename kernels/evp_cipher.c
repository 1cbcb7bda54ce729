// @kernel evp_cipher
// @summary encrypt `updates` x `size` bytes: re-initialise a per-thread context with key and IV (mode=reinit), or perftools' evp_cipher modes evp_isolated and evp_shared
// @arg alg=aes-128-cbc choices=aes-128-cbc,aes-256-cbc,aes-128-gcm,aes-256-gcm,aes-128-ctr,chacha20-poly1305 cipher
// @arg size=1024 int plaintext bytes per update (perftools: 16)
// @arg mode=reinit choices=reinit,evp_isolated,evp_shared what one operation is (see the comment in kernels/evp_cipher.c)
// @arg updates=1 int EVP_CipherUpdate calls per operation (perftools -u; reinit takes 1)
// @min_version 1.1.1
// @unit bytes=size*updates
/*
 * mode=reinit (the default, unchanged): each thread owns an EVP_CIPHER_CTX
 * set to the cipher once (pb_thread_init). One operation re-initialises it
 * with a key and IV (so the key schedule is part of the operation), encrypts
 * `size` bytes in one EVP_EncryptUpdate, and finishes (CBC adds PKCS#7
 * padding; GCM and ChaCha20-Poly1305 compute a 16-byte tag, fetched with
 * EVP_CTRL_AEAD_GET_TAG). On 3.x the cipher is fetched once with
 * EVP_CIPHER_fetch (no implicit fetch per operation); on 1.1.1 it comes from
 * EVP_get_cipherbyname.
 *
 * The other modes are perftools' evp_cipher -o MODE -u UPDATES (3.0 and later,
 * as perftools: EVP_CipherInit_ex2). The cipher is the legacy EVP_CIPHER
 * (EVP_aes_128_cbc() etc., taken once in setup and shared by all threads),
 * the key comes from RAND_bytes in setup and the IV is NULL (perftools
 * allocates none: its `if (iv > 0)` tests the still-NULL pointer), the input
 * is one shared buffer filled by RAND_bytes. One operation is:
 *   evp_isolated  EVP_CIPHER_CTX_new + EVP_CipherInit_ex2(ctx, cipher, key,
 *                 NULL, 1, NULL) (an implicit fetch each time) +
 *                 EVP_CipherUpdate x updates + EVP_CipherFinal_ex + free;
 *   evp_shared    on one context per thread, initialised once:
 *                 EVP_CipherUpdate x updates + EVP_CipherFinal_ex (no
 *                 re-initialisation between operations; GCM refuses an
 *                 update after Final, so evp_shared refuses GCM). The AEAD
 *                 ciphers are not perftools' and their tag is not read.
 */
#include "perfbisect.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

enum ec_mode { M_REINIT, M_ISOLATED, M_SHARED };

typedef struct {
    const char *name;
    const EVP_CIPHER *(*legacy)(void);
} ec_alg;

static const ec_alg algs[] = {
    { "aes-128-cbc", EVP_aes_128_cbc },
    { "aes-256-cbc", EVP_aes_256_cbc },
    { "aes-128-gcm", EVP_aes_128_gcm },
    { "aes-256-gcm", EVP_aes_256_gcm },
    { "aes-128-ctr", EVP_aes_128_ctr },
    { "chacha20-poly1305", EVP_chacha20_poly1305 },
};

typedef struct {
    const ec_alg *alg;
    enum ec_mode mode;
    int aead;
    int size;
    long updates;
    EVP_CIPHER *fetched; /* reinit on 3.x */
    const EVP_CIPHER *cipher;
    unsigned char key[32];
    unsigned char iv[16];
    unsigned char *data; /* the shared input of the perftools modes */
} ec_global;

typedef struct {
    EVP_CIPHER_CTX *ctx;
    unsigned char *in;
    unsigned char *out;
} ec_local;

static const char *encrypt_reinit(const ec_global *g, ec_local *l)
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

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
/* `updates` EVP_CipherUpdate calls and EVP_CipherFinal_ex on `ctx`. */
static const char *encrypt_updates(const ec_global *g, EVP_CIPHER_CTX *ctx, unsigned char *out)
{
    int tmp = 0, outl = 0;
    for (long i = 0; i < g->updates; i++) {
        if (EVP_CipherUpdate(ctx, out + outl, &tmp, g->data, g->size) != 1)
            return "EVP_CipherUpdate";
        outl += tmp;
    }
    if (EVP_CipherFinal_ex(ctx, out + outl, &tmp) != 1)
        return "EVP_CipherFinal_ex";
    return NULL;
}

static const char *encrypt_isolated(const ec_global *g, unsigned char *out)
{
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    const char *failed = "EVP_CIPHER_CTX_new";
    if (ctx != NULL) {
        failed = EVP_CipherInit_ex2(ctx, g->cipher, g->key, NULL, 1, NULL) == 1
                     ? encrypt_updates(g, ctx, out)
                     : "EVP_CipherInit_ex2";
    }
    EVP_CIPHER_CTX_free(ctx);
    return failed;
}
#endif

static const char *encrypt_once(const ec_global *g, ec_local *l)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    if (g->mode == M_ISOLATED)
        return encrypt_isolated(g, l->out);
    if (g->mode == M_SHARED)
        return encrypt_updates(g, l->ctx, l->out);
#endif
    return encrypt_reinit(g, l);
}

static enum ec_mode parse_mode(const char *m)
{
    if (strcmp(m, "evp_isolated") == 0)
        return M_ISOLATED;
    if (strcmp(m, "evp_shared") == 0)
        return M_SHARED;
    return M_REINIT;
}

/* The cipher, key, IV and input of `g->mode`. */
static int setup_cipher(ec_global *g, char *err, size_t errlen)
{
    if (g->mode == M_REINIT) {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
        g->fetched = EVP_CIPHER_fetch(NULL, g->alg->name, NULL);
        g->cipher = g->fetched;
#else
        g->cipher = EVP_get_cipherbyname(g->alg->name);
#endif
        for (size_t i = 0; i < sizeof(g->key); i++)
            g->key[i] = (unsigned char)(0x11 * i + 3);
        for (size_t i = 0; i < sizeof(g->iv); i++)
            g->iv[i] = (unsigned char)(0x07 * i + 1);
        return g->cipher != NULL ? PB_OK : pb_fail(err, errlen, "cipher %s not available", g->alg->name);
    }
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    g->cipher = g->alg->legacy();
    if ((g->data = pb_buffer((size_t)g->size, 0)) == NULL)
        return pb_fail(err, errlen, "out of memory");
    if (RAND_bytes(g->data, g->size) != 1 || RAND_bytes(g->key, sizeof(g->key)) != 1)
        return pb_fail(err, errlen, "RAND_bytes failed");
    return PB_OK;
#else
    return pb_not_applicable(err, errlen,
                             "evp_cipher mode=evp_isolated|evp_shared needs OpenSSL 3.0 "
                             "(EVP_CipherInit_ex2, as perftools' evp_cipher)");
#endif
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    const char *alg = pb_arg(env, "alg");
    long size = pb_arg_int(env, "size"), updates = pb_arg_int(env, "updates");
    if (size < 1 || size > (1L << 28))
        return pb_fail(err, errlen, "size must be between 1 and %ld, got %ld", 1L << 28, size);
    ec_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
        if (strcmp(algs[i].name, alg) == 0)
            g->alg = &algs[i];
    if (g->alg == NULL)
        return pb_fail(err, errlen, "unknown alg '%s'", alg);
    g->mode = parse_mode(pb_arg(env, "mode"));
    g->size = (int)size;
    g->updates = updates;
    g->aead = strstr(alg, "gcm") != NULL || strstr(alg, "poly1305") != NULL;
    if (updates < 1 || updates * size > (1L << 28))
        return pb_fail(err, errlen, "updates must be at least 1 and updates x size at most %ld",
                       1L << 28);
    if (g->mode == M_REINIT && updates != 1)
        return pb_fail(err, errlen, "mode=reinit encrypts one buffer: updates must be 1, got %ld",
                       updates);
    if (g->mode == M_SHARED && strstr(alg, "gcm") != NULL)
        return pb_fail(err, errlen, "mode=evp_shared updates again after Final, which %s "
                       "refuses", alg);
    return setup_cipher(g, err, errlen);
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const ec_global *g = global;
    ec_local *l = pb_alloc_local(t, sizeof(*l));
    if (l == NULL)
        return pb_fail(err, errlen, "out of memory");
    size_t outlen = (size_t)g->size * (size_t)g->updates + 64;
    l->in = g->mode == M_REINIT ? pb_buffer((size_t)g->size, 0x5a) : g->data;
    l->out = pb_buffer(outlen, 0);
    l->ctx = EVP_CIPHER_CTX_new();
    if (l->in == NULL || l->out == NULL || l->ctx == NULL)
        return pb_fail(err, errlen, "out of memory");
    int ok;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    if (g->mode == M_SHARED)
        ok = EVP_CipherInit_ex2(l->ctx, g->cipher, g->key, NULL, 1, NULL);
    else
#endif
        ok = EVP_EncryptInit_ex(l->ctx, g->cipher, NULL, NULL, NULL);
    if (ok != 1)
        return pb_fail(err, errlen, "initialising the context (%s) failed", g->alg->name);
    const char *failed = encrypt_once(g, l);
    if (failed != NULL)
        return pb_fail(err, errlen, "%s (%s) failed in thread init", failed, g->alg->name);
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const ec_global *g = global;
    ec_local *l = t->local;
    for (uint64_t i = 0; i < n; i++) {
        const char *failed = encrypt_once(g, l);
        if (failed != NULL)
            return pb_fail(err, errlen, "%s (%s) failed", failed, g->alg->name);
    }
    return PB_OK;
}

int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    const ec_global *g = global;
    ec_local *l = t->local;
    (void)err; (void)errlen;
    if (l != NULL) {
        EVP_CIPHER_CTX_free(l->ctx);
        if (g == NULL || l->in != g->data)
            free(l->in);
        free(l->out);
        free(l);
    }
    return PB_OK;
}

void pb_teardown(void *global)
{
    ec_global *g = global;
    if (g == NULL)
        return;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    EVP_CIPHER_free(g->fetched);
#endif
    free(g->data);
    free(g);
}
