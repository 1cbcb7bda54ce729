// @kernel evp_hash
// @summary digest `updates` x `size` bytes: one-shot EVP_Digest (mode=oneshot), or perftools' evp_hash modes (deprecated SHA*_Init/Update/Final, evp_isolated, evp_shared)
// @arg alg=sha256 choices=sha256,sha512,sha1,md5,sha3-256,sha224,sha384 digest
// @arg size=1024 int bytes per update (perftools: 1500)
// @arg mode=oneshot choices=oneshot,deprecated,evp_isolated,evp_shared what one operation is (see the comment in kernels/evp_hash.c)
// @arg updates=1 int digest updates per operation (perftools -u; oneshot takes 1)
// @min_version 1.1.1
// @unit bytes=size*updates
/*
 * mode=oneshot (the default, unchanged): EVP_Digest of one buffer of `size`
 * bytes, a context created, used and freed inside; on 3.x the digest is
 * fetched once with EVP_MD_fetch (no implicit fetch per operation), on 1.1.1
 * it comes from EVP_get_digestbyname. Each thread hashes its own buffer.
 *
 * The other modes are perftools' evp_hash -o MODE -u UPDATES (one operation
 * = Init, `updates` Updates of `size` bytes, Final; all threads read one
 * shared buffer, filled with RAND_bytes in setup as perftools does):
 *   deprecated    SHA*_Init / SHA*_Update / SHA*_Final (MD5_* for md5) on a
 *                 context on the stack;
 *   evp_isolated  EVP_MD_CTX_new + EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)
 *                 + EVP_DigestUpdate x updates + EVP_DigestFinal_ex + free:
 *                 nothing reused, and on 3.x the legacy EVP_MD makes every
 *                 Init fetch the implementation (implicit fetch);
 *   evp_shared    one EVP_MD_CTX per thread, initialised once with the
 *                 legacy EVP_MD (EVP_sha256() etc., shared by all threads);
 *                 an operation is EVP_DigestInit_ex(ctx, NULL, NULL) (reuse
 *                 the context's digest) + updates + EVP_DigestFinal_ex.
 * `size` is a byte count per update; MB/s counts size x updates per operation.
 */
#include "perfbisect.h"

#include <openssl/evp.h>
#include <openssl/md5.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

enum eh_mode { M_ONESHOT, M_DEPRECATED, M_ISOLATED, M_SHARED };

/* The deprecated API through one signature: Init, Update and Final of one
 * algorithm on a context big enough for any of them. */
typedef union {
    MD5_CTX md5;
    SHA_CTX sha1;
    SHA256_CTX sha256;
    SHA512_CTX sha512;
} eh_lowctx;

typedef int (*eh_init_fn)(void *);
typedef int (*eh_update_fn)(void *, const void *, size_t);
typedef int (*eh_final_fn)(unsigned char *, void *);

typedef struct {
    const char *name;
    const EVP_MD *(*legacy)(void); /* EVP_sha256 etc. */
    eh_init_fn init;               /* NULL: no deprecated API */
    eh_update_fn update;
    eh_final_fn final;
} eh_alg;

#define LOW(i, u, f) (eh_init_fn)(i), (eh_update_fn)(u), (eh_final_fn)(f)
static const eh_alg algs[] = {
    { "sha256", EVP_sha256, LOW(SHA256_Init, SHA256_Update, SHA256_Final) },
    { "sha512", EVP_sha512, LOW(SHA512_Init, SHA512_Update, SHA512_Final) },
    { "sha1", EVP_sha1, LOW(SHA1_Init, SHA1_Update, SHA1_Final) },
    { "md5", EVP_md5, LOW(MD5_Init, MD5_Update, MD5_Final) },
    { "sha3-256", EVP_sha3_256, NULL, NULL, NULL },
    { "sha224", EVP_sha224, LOW(SHA224_Init, SHA224_Update, SHA224_Final) },
    { "sha384", EVP_sha384, LOW(SHA384_Init, SHA384_Update, SHA384_Final) },
};

typedef struct {
    const eh_alg *alg;
    enum eh_mode mode;
    size_t size;
    long updates;
    EVP_MD *fetched; /* oneshot on 3.x */
    const EVP_MD *md;
    unsigned char *data; /* the shared input of the perftools modes */
} eh_global;

typedef struct {
    unsigned char *in;
    EVP_MD_CTX *ctx; /* evp_shared */
} eh_local;

static enum eh_mode parse_mode(const char *m)
{
    if (strcmp(m, "deprecated") == 0)
        return M_DEPRECATED;
    if (strcmp(m, "evp_isolated") == 0)
        return M_ISOLATED;
    if (strcmp(m, "evp_shared") == 0)
        return M_SHARED;
    return M_ONESHOT;
}

static int setup_md(eh_global *g, char *err, size_t errlen)
{
    if (g->mode != M_ONESHOT) {
        g->md = g->alg->legacy();
    } else {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
        g->fetched = EVP_MD_fetch(NULL, g->alg->name, NULL);
        g->md = g->fetched;
#else
        g->md = EVP_get_digestbyname(g->alg->name);
#endif
    }
    if (g->md == NULL)
        return pb_fail(err, errlen, "digest %s not available", g->alg->name);
    return PB_OK;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    const char *alg = pb_arg(env, "alg");
    long size = pb_arg_int(env, "size"), updates = pb_arg_int(env, "updates");
    if (size < 1 || size > (1L << 30))
        return pb_fail(err, errlen, "size must be between 1 and %ld, got %ld", 1L << 30, size);
    eh_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    for (size_t i = 0; i < sizeof(algs) / sizeof(algs[0]); i++)
        if (strcmp(algs[i].name, alg) == 0)
            g->alg = &algs[i];
    if (g->alg == NULL)
        return pb_fail(err, errlen, "unknown alg '%s'", alg);
    g->mode = parse_mode(pb_arg(env, "mode"));
    g->size = (size_t)size;
    g->updates = updates;
    if (updates < 1 || updates > 1000000)
        return pb_fail(err, errlen, "updates must be between 1 and 1000000, got %ld", updates);
    if (g->mode == M_ONESHOT && updates != 1)
        return pb_fail(err, errlen, "mode=oneshot digests one buffer: updates must be 1, got %ld",
                       updates);
    if (g->mode == M_DEPRECATED && g->alg->init == NULL)
        return pb_fail(err, errlen, "alg=%s has no deprecated API (mode=deprecated)", alg);
    if (g->mode != M_ONESHOT) {
        if ((g->data = pb_buffer(g->size, 0)) == NULL)
            return pb_fail(err, errlen, "out of memory");
        if (RAND_bytes(g->data, (int)g->size) != 1)
            return pb_fail(err, errlen, "RAND_bytes failed");
    }
    return setup_md(g, err, errlen);
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const eh_global *g = global;
    eh_local *l = pb_alloc_local(t, sizeof(*l));
    if (l == NULL)
        return pb_fail(err, errlen, "out of memory");
    if (g->mode != M_ONESHOT) {
        l->in = g->data;
    } else if ((l->in = pb_buffer(g->size, 0xa5)) == NULL) {
        return pb_fail(err, errlen, "out of memory");
    }
    if (g->mode == M_SHARED) {
        l->ctx = EVP_MD_CTX_new();
        if (l->ctx == NULL || EVP_DigestInit_ex(l->ctx, g->md, NULL) != 1)
            return pb_fail(err, errlen, "EVP_DigestInit_ex(%s) failed", g->alg->name);
    }
    return PB_OK;
}

static int hash_deprecated(const eh_global *g, const unsigned char *in)
{
    eh_lowctx c;
    unsigned char md[EVP_MAX_MD_SIZE];
    if (!g->alg->init(&c))
        return 0;
    for (long i = 0; i < g->updates; i++)
        if (!g->alg->update(&c, in, g->size))
            return 0;
    return g->alg->final(md, &c);
}

/* Init (with `md`, or NULL to reuse the context's digest), updates, Final. */
static int hash_evp(const eh_global *g, EVP_MD_CTX *ctx, const EVP_MD *md,
                    const unsigned char *in)
{
    unsigned char out[EVP_MAX_MD_SIZE];
    if (!EVP_DigestInit_ex(ctx, md, NULL))
        return 0;
    for (long i = 0; i < g->updates; i++)
        if (!EVP_DigestUpdate(ctx, in, g->size))
            return 0;
    return EVP_DigestFinal_ex(ctx, out, NULL);
}

static int hash_isolated(const eh_global *g, const unsigned char *in)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    int ok = ctx != NULL && hash_evp(g, ctx, g->alg->legacy(), in);
    EVP_MD_CTX_free(ctx);
    return ok;
}

static int hash_once(const eh_global *g, eh_local *l)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen;
    switch (g->mode) {
    case M_DEPRECATED:
        return hash_deprecated(g, l->in);
    case M_ISOLATED:
        return hash_isolated(g, l->in);
    case M_SHARED:
        return hash_evp(g, l->ctx, NULL, l->in);
    case M_ONESHOT:
        break;
    }
    return EVP_Digest(l->in, g->size, md, &mdlen, g->md, NULL);
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const eh_global *g = global;
    eh_local *l = t->local;
    for (uint64_t i = 0; i < n; i++) {
        if (hash_once(g, l) != 1)
            return pb_fail(err, errlen, "digest (%s) failed", g->alg->name);
    }
    return PB_OK;
}

int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    const eh_global *g = global;
    eh_local *l = t->local;
    (void)err; (void)errlen;
    if (l != NULL) {
        EVP_MD_CTX_free(l->ctx);
        if (g == NULL || l->in != g->data)
            free(l->in);
        free(l);
    }
    return PB_OK;
}

void pb_teardown(void *global)
{
    eh_global *g = global;
    if (g == NULL)
        return;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    EVP_MD_free(g->fetched);
#endif
    free(g->data);
    free(g);
}
