// @kernel x509storeissuer
// @summary X509_STORE_CTX_get1_issuer for a certificate whose issuer is in no store (the default lookups, all empty, fail)
// @min_version 1.1.1
/*
 * pb_setup builds one X509_STORE, shared by all threads, with the lookups
 * X509_STORE_set_default_paths() would add — a file lookup (loading
 * nothing), a hash-dir lookup and, on 3.x, an OSSL_STORE lookup — pointed at
 * a fresh empty directory with a short path under /tmp (the length of the
 * path shows in the timing, so it must not depend on where the cache lives).
 * The OSSL_STORE lookup gets the directory as X509_STORE_set_default_paths()
 * gives it: 3.0 to 3.3 use the certificate directory as its default URI,
 * from 3.4 on it has no URI and searches nothing (by_store.c: "NOP if no URI
 * is given").
 * Each thread initialises its own X509_STORE_CTX on that store for
 * fixtures/server.pem. One operation is X509_STORE_CTX_get1_issuer(), which
 * searches every lookup and finds nothing: what perftools' x509storeissuer
 * times with the default paths of an installation without certificates.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, even with -std=c99 */
#include "perfbisect.h"

#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

typedef struct {
    X509_STORE *store;
    X509 *cert;
    char tmpdir[64]; /* non-empty if we created it */
} xi_global;

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    xi_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");

    unsigned char *data;
    size_t len;
    if (pb_read_fixture(env, "server.pem", &data, &len, err, errlen) != PB_OK)
        return PB_ERROR;
    BIO *bio = BIO_new_mem_buf(data, (int)len);
    g->cert = bio != NULL ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    free(data);
    if (g->cert == NULL)
        return pb_fail(err, errlen, "decoding fixture server.pem failed");

    char dir[4096];
    snprintf(g->tmpdir, sizeof(g->tmpdir), "/tmp/pbcerts-XXXXXX");
    if (mkdtemp(g->tmpdir) == NULL) {
        g->tmpdir[0] = '\0';
        return pb_fail(err, errlen, "mkdtemp /tmp/pbcerts-XXXXXX failed");
    }
    snprintf(dir, sizeof(dir), "%s", g->tmpdir);

    g->store = X509_STORE_new();
    if (g->store == NULL)
        return pb_fail(err, errlen, "X509_STORE_new failed");
    /* The order of X509_STORE_set_default_paths: file, hash dir, store. */
    if (X509_STORE_add_lookup(g->store, X509_LOOKUP_file()) == NULL)
        return pb_fail(err, errlen, "X509_STORE_add_lookup(file) failed");
    X509_LOOKUP *lookup = X509_STORE_add_lookup(g->store, X509_LOOKUP_hash_dir());
    if (lookup == NULL)
        return pb_fail(err, errlen, "X509_STORE_add_lookup(hash_dir) failed");
    if (X509_LOOKUP_add_dir(lookup, dir, X509_FILETYPE_PEM) != 1)
        return pb_fail(err, errlen, "X509_LOOKUP_add_dir(%s) failed", dir);
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    X509_LOOKUP *st_lookup = X509_STORE_add_lookup(g->store, X509_LOOKUP_store());
#if OPENSSL_VERSION_NUMBER >= 0x30400000L
    const char *uri = NULL;
#else
    const char *uri = dir;
#endif
    if (st_lookup == NULL || X509_LOOKUP_add_store(st_lookup, uri) != 1)
        return pb_fail(err, errlen, "X509_STORE_add_lookup(store %s) failed", dir);
#endif
    return PB_OK;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    xi_global *g = global;
    X509_STORE_CTX *ctx = t->local = X509_STORE_CTX_new();
    if (ctx == NULL)
        return pb_fail(err, errlen, "X509_STORE_CTX_new failed");
    if (X509_STORE_CTX_init(ctx, g->store, g->cert, NULL) != 1)
        return pb_fail(err, errlen, "X509_STORE_CTX_init failed");
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    xi_global *g = global;
    X509_STORE_CTX *ctx = t->local;
    for (uint64_t i = 0; i < n; i++) {
        X509 *issuer = NULL;
        int r = X509_STORE_CTX_get1_issuer(&issuer, ctx, g->cert);
        if (r != 0) {
            X509_free(issuer);
            return pb_fail(err, errlen, "X509_STORE_CTX_get1_issuer returned %d, expected 0 (not found)", r);
        }
    }
    /* A failed lookup may leave errors on this thread's queue; keep it
     * from filling up across batches (it is a fixed-size ring anyway). */
    ERR_clear_error();
    return PB_OK;
}

PB_THREAD_DONE(X509_STORE_CTX_free)

void pb_teardown(void *global)
{
    xi_global *g = global;
    X509_STORE_free(g->store);
    X509_free(g->cert);
    if (g->tmpdir[0] != '\0')
        rmdir(g->tmpdir);
    free(g);
}
