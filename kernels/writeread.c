// @kernel writeread
// @summary SSL_write_ex of `size` bytes on the client + SSL_read_ex of them on the server, connected in-memory pair per thread
// @arg size=1024 int application bytes written and read per operation
// @arg ctx=shared choices=shared,per-thread one server and one client SSL_CTX for all threads, or a pair per thread (perftools writeread -s)
// @arg proto=tls choices=tls,dtls TLS or DTLS (perftools writeread -d) methods, default protocol version
// @min_version 1.1.1
// @link ssl
// @unit bytes=size
/*
 * pb_setup creates one server SSL_CTX (fixtures/server.pem, server-key.pem)
 * and one client SSL_CTX, shared by all threads. pb_thread_init connects a
 * client and a server SSL over a BIO pair large enough to hold one
 * operation's records, completes the handshake (default protocol version)
 * and lets the client consume the server's session tickets. One operation:
 * SSL_write_ex(client, size bytes), then SSL_read_ex(server) until all size
 * bytes have arrived (one call per TLS record, i.e. per 16 KiB).
 *
 * ctx=per-thread (perftools' -s) makes the SSL_CTX pair in pb_thread_init,
 * one per thread, instead of one pair in pb_setup; what is timed is the same
 * write and read, on connections whose contexts no other thread uses.
 * proto=dtls (perftools' -d) makes the contexts with DTLS_server_method and
 * DTLS_client_method; one operation is then one record (size at most 16384).
 */
#include "perfbisect.h"

#include <openssl/bio.h>
#include <openssl/ssl.h>

typedef struct {
    size_t size;
    int per_thread;
    int dtls;
    char cert[4096];
    char key[4096];
    SSL_CTX *sctx; /* ctx=shared */
    SSL_CTX *cctx;
} wr_global;

typedef struct {
    SSL *client;
    SSL *server;
    unsigned char *out;
    unsigned char *in;
    SSL_CTX *sctx; /* ctx=per-thread */
    SSL_CTX *cctx;
} wr_local;

/* A server context with the fixture certificate and a client context, into
 * *sctx and *cctx (freed by the caller whatever this returns). */
static const char *make_ctxs(const wr_global *g, SSL_CTX **sctx, SSL_CTX **cctx)
{
    *sctx = SSL_CTX_new(g->dtls ? DTLS_server_method() : TLS_server_method());
    *cctx = SSL_CTX_new(g->dtls ? DTLS_client_method() : TLS_client_method());
    if (*sctx == NULL || *cctx == NULL)
        return "SSL_CTX_new";
    if (SSL_CTX_use_certificate_chain_file(*sctx, g->cert) != 1)
        return "SSL_CTX_use_certificate_chain_file(server.pem)";
    if (SSL_CTX_use_PrivateKey_file(*sctx, g->key, SSL_FILETYPE_PEM) != 1)
        return "SSL_CTX_use_PrivateKey_file(server-key.pem)";
    return NULL;
}

static const char *drive(SSL *client, SSL *server)
{
    int cdone = 0, sdone = 0;
    for (int round = 0; round < 64 && !(cdone && sdone); round++) {
        if (!cdone) {
            int r = SSL_do_handshake(client);
            if (r == 1)
                cdone = 1;
            else if (SSL_get_error(client, r) != SSL_ERROR_WANT_READ
                     && SSL_get_error(client, r) != SSL_ERROR_WANT_WRITE)
                return "SSL_do_handshake (client)";
        }
        if (!sdone) {
            int r = SSL_do_handshake(server);
            if (r == 1)
                sdone = 1;
            else if (SSL_get_error(server, r) != SSL_ERROR_WANT_READ
                     && SSL_get_error(server, r) != SSL_ERROR_WANT_WRITE)
                return "SSL_do_handshake (server)";
        }
    }
    return cdone && sdone ? NULL : "handshake did not finish in 64 rounds";
}

/* One operation; NULL or the name of the failed step. */
static const char *write_read(const wr_global *g, wr_local *l)
{
    size_t written = 0;
    if (SSL_write_ex(l->client, l->out, g->size, &written) != 1 || written != g->size)
        return "SSL_write_ex (client)";
    size_t got = 0;
    while (got < g->size) {
        size_t r = 0;
        if (SSL_read_ex(l->server, l->in + got, g->size - got, &r) != 1)
            return "SSL_read_ex (server)";
        got += r;
    }
    return NULL;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    long size = pb_arg_int(env, "size");
    if (size < 1 || size > (1L << 26))
        return pb_fail(err, errlen, "size must be between 1 and %ld, got %ld", 1L << 26, size);
    wr_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->size = (size_t)size;
    g->per_thread = strcmp(pb_arg(env, "ctx"), "per-thread") == 0;
    g->dtls = strcmp(pb_arg(env, "proto"), "dtls") == 0;
    if (g->dtls && size > 16384)
        return pb_fail(err, errlen, "proto=dtls writes one record: size must be at most 16384, "
                       "got %ld", size);
    snprintf(g->cert, sizeof(g->cert), "%s/server.pem", env->fixtures_dir);
    snprintf(g->key, sizeof(g->key), "%s/server-key.pem", env->fixtures_dir);
    const char *failed = g->per_thread ? NULL : make_ctxs(g, &g->sctx, &g->cctx);
    if (failed != NULL)
        return pb_fail(err, errlen, "%s failed", failed);
    return PB_OK;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const wr_global *g = global;
    wr_local *l = pb_alloc_local(t, sizeof(*l));
    if (l == NULL)
        return pb_fail(err, errlen, "out of memory");
    l->out = pb_buffer(g->size, 0);
    l->in = pb_buffer(g->size, 0);
    if (l->out == NULL || l->in == NULL)
        return pb_fail(err, errlen, "out of memory");
    for (size_t i = 0; i < g->size; i++)
        l->out[i] = (unsigned char)(i * 31 + 7);
    const char *failed = g->per_thread ? make_ctxs(g, &l->sctx, &l->cctx) : NULL;
    if (failed != NULL)
        return pb_fail(err, errlen, "%s failed in thread init", failed);
    l->server = SSL_new(g->per_thread ? l->sctx : g->sctx);
    l->client = SSL_new(g->per_thread ? l->cctx : g->cctx);
    if (l->server == NULL || l->client == NULL)
        return pb_fail(err, errlen, "SSL_new failed in thread init");
    /* Room for one operation's records (at most 16 KiB of plaintext each,
     * plus header, tag and padding) and then some. */
    size_t bufsize = g->size + (g->size / 16384 + 1) * 512 + 32768;
    BIO *sbio = NULL, *cbio = NULL;
    if (BIO_new_bio_pair(&sbio, bufsize, &cbio, bufsize) != 1)
        return pb_fail(err, errlen, "BIO_new_bio_pair failed in thread init");
    SSL_set_bio(l->server, sbio, sbio);
    SSL_set_bio(l->client, cbio, cbio);
    SSL_set_accept_state(l->server);
    SSL_set_connect_state(l->client);
    failed = drive(l->client, l->server);
    if (failed != NULL)
        return pb_fail(err, errlen, "%s failed in thread init", failed);
    /* Let the client read what the server sent after the handshake (TLS 1.3
     * session tickets), so that the first timed operation is not special. */
    unsigned char b[1];
    size_t r;
    if (SSL_read_ex(l->client, b, sizeof(b), &r) == 1)
        return pb_fail(err, errlen, "unexpected application data on the client in thread init");
    ERR_clear_error();
    /* One untimed operation checks that everything works. */
    if ((failed = write_read(g, l)) != NULL)
        return pb_fail(err, errlen, "%s failed in thread init", failed);
    if (memcmp(l->out, l->in, g->size) != 0)
        return pb_fail(err, errlen, "data read differs from data written in thread init");
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const wr_global *g = global;
    wr_local *l = t->local;
    for (uint64_t i = 0; i < n; i++) {
        const char *failed = write_read(g, l);
        if (failed != NULL)
            return pb_fail(err, errlen, "%s failed", failed);
    }
    return PB_OK;
}

int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    wr_local *l = t->local;
    (void)global; (void)err; (void)errlen;
    SSL_free(l->client);
    SSL_free(l->server);
    SSL_CTX_free(l->sctx);
    SSL_CTX_free(l->cctx);
    free(l->out);
    free(l->in);
    free(l);
    return PB_OK;
}

void pb_teardown(void *global)
{
    wr_global *g = global;
    SSL_CTX_free(g->sctx);
    SSL_CTX_free(g->cctx);
    free(g);
}
