// @kernel pkeyread
// @summary decode a private key from memory (PEM_read_bio_PrivateKey on a mem BIO, or d2i_PrivateKey) + free
// @arg key=ec choices=dh,dhx,dsa,ec,rsa,x25519 key type (fixtures KEY.pem / KEY.der)
// @arg format=pem choices=pem,der pem: PKCS#8 PEM through a memory BIO; der: d2i_PrivateKey
// @min_version 1.1.1
/*
 * One operation:
 *   pem: BIO_new_mem_buf + PEM_read_bio_PrivateKey + EVP_PKEY_free + BIO_free
 *   der: d2i_PrivateKey(type) + EVP_PKEY_free
 * The fixtures are PKCS#8, PEM and DER, with perftools' key types and sizes
 * (ec P-384, dh ffdhe4096, dsa 2048/224, …); d2i_PrivateKey falls back to
 * PKCS#8 when the type-specific structure does not parse, on 1.1.1 and 3.x.
 * See fixtures/regenerate.sh.
 */
#include "perfbisect.h"

#include <limits.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

typedef struct {
    const char *name;
    int type;
} key_kind;

static const key_kind kinds[] = {
    { "dh", EVP_PKEY_DH },
    { "dhx", EVP_PKEY_DHX },
    { "dsa", EVP_PKEY_DSA },
    { "ec", EVP_PKEY_EC },
    { "rsa", EVP_PKEY_RSA },
    { "x25519", EVP_PKEY_X25519 },
};

typedef struct {
    const key_kind *kind;
    int der;
    unsigned char *data;
    int len;
} pr_global;

/* One decode; returns the key or NULL. */
static EVP_PKEY *decode(const pr_global *g, const char **step)
{
    if (g->der) {
        const unsigned char *p = g->data;
        *step = "d2i_PrivateKey";
        return d2i_PrivateKey(g->kind->type, NULL, &p, g->len);
    }
    *step = "BIO_new_mem_buf";
    BIO *bio = BIO_new_mem_buf(g->data, g->len);
    if (bio == NULL)
        return NULL;
    *step = "PEM_read_bio_PrivateKey";
    EVP_PKEY *pkey = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    BIO_free(bio);
    return pkey;
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    const char *key = pb_arg(env, "key");
    const char *format = pb_arg(env, "format");
    pr_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kinds[i].name, key) == 0)
            g->kind = &kinds[i];
    if (g->kind == NULL)
        return pb_fail(err, errlen, "unknown key type '%s'", key);
    g->der = strcmp(format, "der") == 0;

    char fname[64];
    snprintf(fname, sizeof(fname), "%s.%s", key, format);
    size_t len;
    if (pb_read_fixture(env, fname, &g->data, &len, err, errlen) != PB_OK)
        return PB_ERROR;
    g->len = (int)len;

    /* Decode once: fails early (with the reason) if this OpenSSL cannot read
     * the fixture, and checks that we decode the key type we think we do. */
    ERR_clear_error();
    const char *step = "";
    EVP_PKEY *pkey = decode(g, &step);
    if (pkey == NULL)
        return pb_fail(err, errlen, "%s of fixture %s failed", step, fname);
    int got = EVP_PKEY_base_id(pkey);
    EVP_PKEY_free(pkey);
    if (got != g->kind->type)
        return pb_fail(err, errlen, "fixture %s decoded to key type %d, expected %d",
                       fname, got, g->kind->type);
    ERR_clear_error();
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const pr_global *g = global;
    (void)t;
    for (uint64_t i = 0; i < n; i++) {
        const char *step = "";
        EVP_PKEY *pkey = decode(g, &step);
        if (pkey == NULL)
            return pb_fail(err, errlen, "%s (%s, %s) failed", step,
                           g->kind->name, g->der ? "der" : "pem");
        EVP_PKEY_free(pkey);
    }
    return PB_OK;
}

void pb_teardown(void *global)
{
    pr_global *g = global;
    free(g->data);
    free(g);
}
