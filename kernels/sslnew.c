// @kernel sslnew
// @summary SSL_new on a shared SSL_CTX + attach two memory BIOs (SSL_set_bio) + SSL_free
// @min_version 1.1.1
// @link ssl
#include "perfbisect.h"

#include <openssl/bio.h>
#include <openssl/ssl.h>

/* The global state is the SSL_CTX itself. */
int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    (void)env;
    if ((*global = SSL_CTX_new(TLS_server_method())) == NULL)
        return pb_fail(err, errlen, "SSL_CTX_new failed");
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    SSL_CTX *ctx = global;
    (void)t;
    for (uint64_t i = 0; i < n; i++) {
        SSL *ssl = SSL_new(ctx);
        if (ssl == NULL)
            return pb_fail(err, errlen, "SSL_new failed");
        BIO *rbio = BIO_new(BIO_s_mem());
        BIO *wbio = BIO_new(BIO_s_mem());
        if (rbio == NULL || wbio == NULL) {
            BIO_free(rbio);
            BIO_free(wbio);
            SSL_free(ssl);
            return pb_fail(err, errlen, "BIO_new(BIO_s_mem()) failed");
        }
        SSL_set_bio(ssl, rbio, wbio); /* ssl takes ownership of both */
        SSL_free(ssl);
    }
    return PB_OK;
}

PB_TEARDOWN(SSL_CTX_free)
