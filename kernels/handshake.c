// @kernel handshake
// @summary a full TLS handshake between an in-memory client and server (BIO pair), default protocol version
// @arg ctx=shared choices=shared,per-conn shared: one server and one client SSL_CTX for all; per-conn: both created (cert and key loaded from file) per handshake
// @arg libctx=default choices=default,per-thread,pool,ssl-ctx-pool library context of the SSL_CTXs (3.0+): the default one; one per thread (perftools -p); a pool of pool_size, thread i using entry i mod pool_size (-P); a pool of ready SSL_CTX pairs, each in its own library context (-l)
// @arg pool_size=16 int entries of libctx=pool|ssl-ctx-pool (perftools -o)
// @arg secure_heap=0 int CRYPTO_secure_malloc_init of this many bytes in setup, 0: none (perftools -S)
// @min_version 1.1.1
// @link ssl
/*
 * The server uses fixtures/server.pem (RSA-2048, issued by rootca.pem) and
 * server-key.pem. The client does not verify the certificate. Both contexts
 * keep OpenSSL's defaults (highest common version, TLS 1.3 on 1.1.1 and
 * later; server session cache and tickets as configured by default).
 * One operation: [per-conn: SSL_CTX_new x2 + load certificate chain and key
 * from file] + SSL_new x2 + BIO_new_bio_pair + handshake until both sides are
 * done + SSL_free x2 [+ SSL_CTX_free x2].
 *
 * libctx= follows perftools' handshake -p, -P and -l (OpenSSL 3.0 and later;
 * not applicable before). per-thread: each thread makes an OSSL_LIB_CTX in
 * pb_thread_init and its SSL_CTX pair in it (SSL_CTX_new_ex), once
 * (ctx=shared) or per handshake (ctx=per-conn). pool: pb_setup makes
 * pool_size library contexts; thread i makes its pair in entry i mod
 * pool_size, once or per handshake. ssl-ctx-pool: pb_setup makes pool_size
 * library contexts with a ready SSL_CTX pair each; thread i handshakes with
 * pair i mod pool_size (ctx=per-conn does not apply: perftools -l ignores -s).
 */
#include "perfbisect.h"

#include <openssl/bio.h>
#include <openssl/ssl.h>

#if OPENSSL_VERSION_NUMBER < 0x30000000L
typedef struct pb_no_libctx OSSL_LIB_CTX;
#define OSSL_LIB_CTX_free(c) ((void)(c))
#endif

enum hs_libctx { L_DEFAULT, L_PER_THREAD, L_POOL, L_SSL_CTX_POOL };

typedef struct {
    OSSL_LIB_CTX *libctx;
    SSL_CTX *sctx;
    SSL_CTX *cctx;
} hs_ctxs;

typedef struct {
    int per_conn;
    enum hs_libctx libctx;
    long pool_size;
    char cert[4096];
    char key[4096];
    hs_ctxs shared; /* ctx=shared with the default library context */
    hs_ctxs *pool;  /* libctx=pool|ssl-ctx-pool */
} hs_global;

/* Per thread: the library context and the pair it handshakes with. */
typedef struct {
    hs_ctxs own;     /* what this thread made (freed by it) */
    hs_ctxs use;     /* what it uses */
} hs_local;

/* Creates the two contexts in `libctx` (NULL: the default one); returns NULL
 * or the name of the failed step. The caller frees both, whatever it returns. */
static const char *make_ctxs(const hs_global *g, OSSL_LIB_CTX *libctx, SSL_CTX **sctx,
                             SSL_CTX **cctx)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    if (libctx != NULL) {
        *sctx = SSL_CTX_new_ex(libctx, NULL, TLS_server_method());
        *cctx = SSL_CTX_new_ex(libctx, NULL, TLS_client_method());
    } else
#endif
    {
        (void)libctx;
        *sctx = SSL_CTX_new(TLS_server_method());
        *cctx = SSL_CTX_new(TLS_client_method());
    }
    if (*sctx == NULL || *cctx == NULL)
        return "SSL_CTX_new";
    if (SSL_CTX_use_certificate_chain_file(*sctx, g->cert) != 1)
        return "SSL_CTX_use_certificate_chain_file(server.pem)";
    if (SSL_CTX_use_PrivateKey_file(*sctx, g->key, SSL_FILETYPE_PEM) != 1)
        return "SSL_CTX_use_PrivateKey_file(server-key.pem)";
    return NULL;
}

static void free_ctxs(hs_ctxs *c)
{
    SSL_CTX_free(c->sctx);
    SSL_CTX_free(c->cctx);
    OSSL_LIB_CTX_free(c->libctx);
}

/* Drives both ends until the handshake completes. NULL or the failed step. */
static const char *drive(SSL *client, SSL *server)
{
    int cdone = 0, sdone = 0;
    for (int round = 0; round < 64 && !(cdone && sdone); round++) {
        if (!cdone) {
            int r = SSL_do_handshake(client);
            if (r == 1) {
                cdone = 1;
            } else {
                int e = SSL_get_error(client, r);
                if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                    return "SSL_do_handshake (client)";
            }
        }
        if (!sdone) {
            int r = SSL_do_handshake(server);
            if (r == 1) {
                sdone = 1;
            } else {
                int e = SSL_get_error(server, r);
                if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
                    return "SSL_do_handshake (server)";
            }
        }
    }
    return cdone && sdone ? NULL : "handshake did not finish in 64 rounds";
}

static const char *handshake_once(SSL_CTX *sctx, SSL_CTX *cctx)
{
    const char *failed = NULL;
    SSL *server = SSL_new(sctx);
    SSL *client = SSL_new(cctx);
    BIO *sbio = NULL, *cbio = NULL;
    if (server == NULL || client == NULL) {
        failed = "SSL_new";
        goto end;
    }
    if (BIO_new_bio_pair(&sbio, 0, &cbio, 0) != 1) {
        failed = "BIO_new_bio_pair";
        goto end;
    }
    SSL_set_bio(server, sbio, sbio);
    SSL_set_bio(client, cbio, cbio);
    SSL_set_accept_state(server);
    SSL_set_connect_state(client);
    failed = drive(client, server);
end:
    SSL_free(client);
    SSL_free(server);
    return failed;
}

/* One handshake with the thread's contexts, or (ctx=per-conn) with a pair
 * made for it in the thread's library context. */
static const char *one_op(const hs_global *g, const hs_ctxs *use)
{
    if (!g->per_conn)
        return handshake_once(use->sctx, use->cctx);
    SSL_CTX *sctx, *cctx;
    const char *failed = make_ctxs(g, use->libctx, &sctx, &cctx);
    if (failed == NULL)
        failed = handshake_once(sctx, cctx);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    return failed;
}

static enum hs_libctx parse_libctx(const char *v)
{
    if (strcmp(v, "per-thread") == 0)
        return L_PER_THREAD;
    if (strcmp(v, "pool") == 0)
        return L_POOL;
    if (strcmp(v, "ssl-ctx-pool") == 0)
        return L_SSL_CTX_POOL;
    return L_DEFAULT;
}

/* The pools of libctx=pool (library contexts) and ssl-ctx-pool (each with
 * its SSL_CTX pair). */
static const char *make_pool(hs_global *g)
{
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    if ((g->pool = calloc((size_t)g->pool_size, sizeof(*g->pool))) == NULL)
        return "calloc";
    for (long i = 0; i < g->pool_size; i++) {
        hs_ctxs *c = &g->pool[i];
        if ((c->libctx = OSSL_LIB_CTX_new()) == NULL)
            return "OSSL_LIB_CTX_new";
        const char *failed = g->libctx == L_SSL_CTX_POOL
                                 ? make_ctxs(g, c->libctx, &c->sctx, &c->cctx)
                                 : NULL;
        if (failed != NULL)
            return failed;
    }
    return NULL;
#else
    (void)g;
    return "OSSL_LIB_CTX_new";
#endif
}

static int check_args(const pb_env *env, hs_global *g, char *err, size_t errlen)
{
    long secure = pb_arg_int(env, "secure_heap");
    if (g->pool_size < 1 || g->pool_size > 4096)
        return pb_fail(err, errlen, "pool_size must be between 1 and 4096, got %ld",
                       g->pool_size);
    if (secure < 0 || secure > (1L << 30))
        return pb_fail(err, errlen, "secure_heap must be between 0 and %ld, got %ld",
                       1L << 30, secure);
    if (g->libctx == L_SSL_CTX_POOL && g->per_conn)
        return pb_fail(err, errlen, "libctx=ssl-ctx-pool handshakes with the pool's SSL_CTXs: "
                       "ctx=per-conn does not apply");
#if OPENSSL_VERSION_NUMBER < 0x30000000L
    if (g->libctx != L_DEFAULT)
        return pb_not_applicable(err, errlen, "handshake libctx=per-thread|pool|ssl-ctx-pool "
                                 "needs OpenSSL 3.0 (OSSL_LIB_CTX)");
#endif
    if (secure > 0 && CRYPTO_secure_malloc_init((size_t)secure, 16) == 0)
        return pb_fail(err, errlen, "secure heap of %ld bytes not available", secure);
    return PB_OK;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    hs_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->per_conn = strcmp(pb_arg(env, "ctx"), "per-conn") == 0;
    g->libctx = parse_libctx(pb_arg(env, "libctx"));
    g->pool_size = pb_arg_int(env, "pool_size");
    snprintf(g->cert, sizeof(g->cert), "%s/server.pem", env->fixtures_dir);
    snprintf(g->key, sizeof(g->key), "%s/server-key.pem", env->fixtures_dir);
    int rc = check_args(env, g, err, errlen);
    if (rc != PB_OK)
        return rc;
    const char *failed = NULL;
    if (g->libctx == L_POOL || g->libctx == L_SSL_CTX_POOL)
        failed = make_pool(g);
    else if (g->libctx == L_DEFAULT && !g->per_conn)
        failed = make_ctxs(g, NULL, &g->shared.sctx, &g->shared.cctx);
    if (failed == NULL && g->libctx == L_DEFAULT)
        failed = one_op(g, &g->shared);
    if (failed != NULL)
        return pb_fail(err, errlen, "%s failed in setup", failed);
    ERR_clear_error();
    return PB_OK;
}

/* The contexts thread `t` uses, made here where they are the thread's own. */
static const char *thread_ctxs(const hs_global *g, pb_thread *t, hs_local *l)
{
    if (g->libctx == L_DEFAULT) {
        l->use = g->shared;
        return NULL;
    }
    if (g->libctx == L_SSL_CTX_POOL) {
        l->use = g->pool[t->index % g->pool_size];
        return NULL;
    }
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    if (g->libctx == L_PER_THREAD && (l->own.libctx = OSSL_LIB_CTX_new()) == NULL)
        return "OSSL_LIB_CTX_new";
#endif
    l->use.libctx = g->libctx == L_POOL ? g->pool[t->index % g->pool_size].libctx
                                        : l->own.libctx;
    if (!g->per_conn) {
        const char *failed = make_ctxs(g, l->use.libctx, &l->own.sctx, &l->own.cctx);
        if (failed != NULL)
            return failed;
        l->use.sctx = l->own.sctx;
        l->use.cctx = l->own.cctx;
    }
    return NULL;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const hs_global *g = global;
    hs_local *l = pb_alloc_local(t, sizeof(*l));
    if (l == NULL)
        return pb_fail(err, errlen, "out of memory");
    const char *failed = thread_ctxs(g, t, l);
    if (failed == NULL && g->libctx != L_DEFAULT)
        failed = one_op(g, &l->use);
    if (failed != NULL)
        return pb_fail(err, errlen, "%s failed in thread init", failed);
    ERR_clear_error();
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const hs_global *g = global;
    const hs_local *l = t->local;
    for (uint64_t i = 0; i < n; i++) {
        const char *failed = one_op(g, &l->use);
        if (failed != NULL)
            return pb_fail(err, errlen, "%s failed", failed);
    }
    return PB_OK;
}

int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    hs_local *l = t->local;
    (void)global; (void)err; (void)errlen;
    if (l != NULL)
        free_ctxs(&l->own);
    free(l);
    return PB_OK;
}

void pb_teardown(void *global)
{
    hs_global *g = global;
    if (g == NULL)
        return;
    free_ctxs(&g->shared);
    for (long i = 0; g->pool != NULL && i < g->pool_size; i++)
        free_ctxs(&g->pool[i]);
    free(g->pool);
    free(g);
}
