// @kernel evp_hash
// @summary EVP_Digest of one buffer of `size` bytes (one-shot: context created, used and freed inside)
// @arg alg=sha256 choices=sha256,sha512,sha1,md5,sha3-256 digest
// @arg size=1024 int bytes hashed per operation
// @min_version 1.1.1
// @unit bytes=size
/*
 * On 3.x the digest is fetched once with EVP_MD_fetch (no implicit fetch per
 * operation); on 1.1.1 it comes from EVP_get_digestbyname.
 */
#include "perfbisect.h"

#include <openssl/evp.h>

typedef struct {
    char name[32];
    size_t size;
    EVP_MD *fetched; /* 3.x */
    const EVP_MD *md;
} eh_global;

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    const char *alg = pb_arg(env, "alg");
    long size = pb_arg_int(env, "size");
    if (size < 1 || size > (1L << 30))
        return pb_fail(err, errlen, "size must be between 1 and %ld, got %ld", 1L << 30, size);
    eh_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    snprintf(g->name, sizeof(g->name), "%s", alg);
    g->size = (size_t)size;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    g->fetched = EVP_MD_fetch(NULL, alg, NULL);
    g->md = g->fetched;
#else
    g->md = EVP_get_digestbyname(alg);
#endif
    if (g->md == NULL)
        return pb_fail(err, errlen, "digest %s not available", alg);
    return PB_OK;
}

int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    const eh_global *g = global;
    if (pb_thread_buffer(t, g->size, 0xa5) == NULL)
        return pb_fail(err, errlen, "out of memory");
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const eh_global *g = global;
    const unsigned char *in = t->local;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen;
    for (uint64_t i = 0; i < n; i++) {
        if (EVP_Digest(in, g->size, md, &mdlen, g->md, NULL) != 1)
            return pb_fail(err, errlen, "EVP_Digest(%s) failed", g->name);
    }
    return PB_OK;
}

void pb_teardown(void *global)
{
    eh_global *g = global;
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
    EVP_MD_free(g->fetched);
#endif
    free(g);
}
