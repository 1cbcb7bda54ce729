// @kernel handshake
// @summary a full TLS handshake between an in-memory client and server (BIO pair), default protocol version
// @arg ctx=shared choices=shared,per-conn shared: one server and one client SSL_CTX for all; per-conn: both created (cert and key loaded from file) per handshake
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
 */
#include "perfbisect.h"

#include <openssl/bio.h>
#include <openssl/ssl.h>

typedef struct {
    int per_conn;
    char cert[4096];
    char key[4096];
    SSL_CTX *sctx; /* shared mode only */
    SSL_CTX *cctx;
} hs_global;

/* Creates the two contexts; returns NULL or the name of the failed step.
 * The caller frees both, whatever it returns. */
static const char *make_ctxs(const hs_global *g, SSL_CTX **sctx, SSL_CTX **cctx)
{
    *sctx = SSL_CTX_new(TLS_server_method());
    *cctx = SSL_CTX_new(TLS_client_method());
    if (*sctx == NULL || *cctx == NULL)
        return "SSL_CTX_new";
    if (SSL_CTX_use_certificate_chain_file(*sctx, g->cert) != 1)
        return "SSL_CTX_use_certificate_chain_file(server.pem)";
    if (SSL_CTX_use_PrivateKey_file(*sctx, g->key, SSL_FILETYPE_PEM) != 1)
        return "SSL_CTX_use_PrivateKey_file(server-key.pem)";
    return NULL;
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

static const char *one_op(const hs_global *g)
{
    if (!g->per_conn)
        return handshake_once(g->sctx, g->cctx);
    SSL_CTX *sctx, *cctx;
    const char *failed = make_ctxs(g, &sctx, &cctx);
    if (failed == NULL)
        failed = handshake_once(sctx, cctx);
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    return failed;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    hs_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    g->per_conn = strcmp(pb_arg(env, "ctx"), "per-conn") == 0;
    snprintf(g->cert, sizeof(g->cert), "%s/server.pem", env->fixtures_dir);
    snprintf(g->key, sizeof(g->key), "%s/server-key.pem", env->fixtures_dir);

    const char *failed = NULL;
    if (!g->per_conn)
        failed = make_ctxs(g, &g->sctx, &g->cctx);
    if (failed == NULL)
        failed = one_op(g);
    if (failed != NULL)
        return pb_fail(err, errlen, "%s failed in setup", failed);
    ERR_clear_error();
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const hs_global *g = global;
    (void)t;
    for (uint64_t i = 0; i < n; i++) {
        const char *failed = one_op(g);
        if (failed != NULL)
            return pb_fail(err, errlen, "%s failed", failed);
    }
    return PB_OK;
}

void pb_teardown(void *global)
{
    hs_global *g = global;
    SSL_CTX_free(g->sctx);
    SSL_CTX_free(g->cctx);
    free(g);
}
