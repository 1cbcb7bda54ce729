// @kernel evp_mac
// @summary HMAC-SHA256 of `updates` x `size` bytes with a 64-byte key, in perftools' evp_mac modes (EVP_MAC or the deprecated HMAC_*; context per operation or reused per thread)
// @arg mode=evp_shared choices=evp_shared,evp_isolated,deprecated_shared,deprecated_isolated what one operation is (see the comment in kernels/evp_mac.c)
// @arg updates=1 int update calls per operation (perftools -u)
// @arg size=32 int bytes per update (perftools: 32)
// @min_version 3.0.0
// @unit bytes=size*updates
/*
 * perftools' evp_mac -o MODE -u UPDATES. The key (64 bytes) and the input
 * (one buffer all threads read) come from RAND_bytes in setup, as in
 * perftools. One operation is:
 *   evp_isolated         EVP_MAC_fetch(NULL, "HMAC", NULL) + EVP_MAC_CTX_new
 *                        + EVP_MAC_init(key, {digest=SHA256}) + EVP_MAC_update
 *                        x updates + EVP_MAC_final + both freed: nothing
 *                        reused, a fetch per operation;
 *   evp_shared           on a context fetched, made and initialised once per
 *                        thread: EVP_MAC_update x updates + EVP_MAC_final +
 *                        EVP_MAC_init(ctx, NULL, 0, NULL) (restart, same key);
 *   deprecated_isolated  HMAC_CTX_new + HMAC_Init_ex(key, EVP_sha256()) +
 *                        HMAC_Update x updates + HMAC_Final + HMAC_CTX_free;
 *   deprecated_shared    on one HMAC_CTX per thread, initialised once:
 *                        HMAC_Update x updates + HMAC_Final +
 *                        HMAC_Init_ex(ctx, NULL, 0, NULL, NULL).
 * Nothing is shared between threads but the key, the input and (deprecated)
 * the legacy EVP_MD.
 */
#include "perfbisect.h"

#if OPENSSL_VERSION_NUMBER < 0x30000000L
int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)env; (void)global;
    return pb_not_applicable(err, errlen, "EVP_MAC needs OpenSSL 3.0");
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    (void)global; (void)t; (void)n;
    return pb_fail(err, errlen, "not applicable before OpenSSL 3.0");
}
#else
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#define EM_KEY 64

enum em_mode { M_EVP_SHARED, M_EVP_ISOLATED, M_DEP_SHARED, M_DEP_ISOLATED };

typedef struct {
    enum em_mode mode;
    long updates;
    size_t size;
    unsigned char key[EM_KEY];
    unsigned char *data;
} em_global;

typedef struct {
    EVP_MAC *mac;     /* evp_shared */
    EVP_MAC_CTX *ctx; /* evp_shared */
    HMAC_CTX *hctx;   /* deprecated_shared */
} em_local;

static enum em_mode parse_mode(const char *m)
{
    if (strcmp(m, "evp_isolated") == 0)
        return M_EVP_ISOLATED;
    if (strcmp(m, "deprecated_shared") == 0)
        return M_DEP_SHARED;
    if (strcmp(m, "deprecated_isolated") == 0)
        return M_DEP_ISOLATED;
    return M_EVP_SHARED;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    long updates = pb_arg_int(env, "updates"), size = pb_arg_int(env, "size");
    if (updates < 1 || updates > 1000000)
        return pb_fail(err, errlen, "updates must be between 1 and 1000000, got %ld", updates);
    if (size < 1 || size > (1L << 28))
        return pb_fail(err, errlen, "size must be between 1 and %ld, got %ld", 1L << 28, size);
    em_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL || (g->data = pb_buffer((size_t)size, 0)) == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->mode = parse_mode(pb_arg(env, "mode"));
    g->updates = updates;
    g->size = (size_t)size;
    if (RAND_bytes(g->data, (int)size) != 1 || RAND_bytes(g->key, EM_KEY) != 1)
        return pb_fail(err, errlen, "RAND_bytes failed");
    return PB_OK;
}

/* The parameters of EVP_MAC_init, built where perftools builds them. */
#define EM_PARAMS(name)                                                  \
    OSSL_PARAM name[] = {                                                \
        OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0), \
        OSSL_PARAM_construct_end()                                       \
    }

static int evp_compute(const em_global *g, EVP_MAC_CTX *ctx)
{
    unsigned char out[EVP_MAX_MD_SIZE];
    size_t outl;
    for (long i = 0; i < g->updates; i++)
        if (!EVP_MAC_update(ctx, g->data, g->size))
            return 0;
    return EVP_MAC_final(ctx, out, &outl, sizeof(out));
}

static int evp_isolated(const em_global *g)
{
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = NULL;
    EM_PARAMS(params);
    int ok = mac != NULL && (ctx = EVP_MAC_CTX_new(mac)) != NULL
             && EVP_MAC_init(ctx, g->key, EM_KEY, params) && evp_compute(g, ctx);
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
    return ok;
}

static int hmac_compute(const em_global *g, HMAC_CTX *ctx)
{
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int outl;
    for (long i = 0; i < g->updates; i++)
        if (!HMAC_Update(ctx, g->data, g->size))
            return 0;
    return HMAC_Final(ctx, out, &outl);
}

static int hmac_isolated(const em_global *g)
{
    HMAC_CTX *ctx = HMAC_CTX_new();
    int ok = ctx != NULL && HMAC_Init_ex(ctx, g->key, EM_KEY, EVP_sha256(), NULL)
             && hmac_compute(g, ctx);
    HMAC_CTX_free(ctx);
    return ok;
}

static int mac_once(const em_global *g, em_local *l)
{
    switch (g->mode) {
    case M_EVP_ISOLATED:
        return evp_isolated(g);
    case M_DEP_ISOLATED:
        return hmac_isolated(g);
    case M_DEP_SHARED:
        return hmac_compute(g, l->hctx) && HMAC_Init_ex(l->hctx, NULL, 0, NULL, NULL);
    case M_EVP_SHARED:
        break;
    }
    return evp_compute(g, l->ctx) && EVP_MAC_init(l->ctx, NULL, 0, NULL);
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const em_global *g = global;
    em_local *l = pb_alloc_local(t, sizeof(*l));
    if (l == NULL)
        return pb_fail(err, errlen, "out of memory");
    if (g->mode == M_EVP_SHARED) {
        EM_PARAMS(params);
        if ((l->mac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL
            || (l->ctx = EVP_MAC_CTX_new(l->mac)) == NULL
            || !EVP_MAC_init(l->ctx, g->key, EM_KEY, params))
            return pb_fail(err, errlen, "making the HMAC context failed");
    } else if (g->mode == M_DEP_SHARED) {
        if ((l->hctx = HMAC_CTX_new()) == NULL
            || !HMAC_Init_ex(l->hctx, g->key, EM_KEY, EVP_sha256(), NULL))
            return pb_fail(err, errlen, "making the HMAC_CTX failed");
    }
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const em_global *g = global;
    em_local *l = t->local;
    for (uint64_t i = 0; i < n; i++)
        if (!mac_once(g, l))
            return pb_fail(err, errlen, "HMAC operation failed");
    return PB_OK;
}

int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    em_local *l = t->local;
    (void)global; (void)err; (void)errlen;
    if (l != NULL) {
        EVP_MAC_CTX_free(l->ctx);
        EVP_MAC_free(l->mac);
        HMAC_CTX_free(l->hctx);
        free(l);
    }
    return PB_OK;
}

void pb_teardown(void *global)
{
    em_global *g = global;
    if (g != NULL)
        free(g->data);
    free(g);
}
#endif
