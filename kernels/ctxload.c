// @kernel ctxload
// @summary SSL_CTX_new(TLS_client_method()) + SSL_CTX_load_verify_locations(CA bundle file) + SSL_CTX_free
// @arg bundle=cabundle.pem PEM CA bundle: a file in the fixtures directory, or an absolute path
// @min_version 1.1.1
// @link ssl
/*
 * What Python's ssl.create_default_context() costs per call: a new client
 * context that parses a whole CA bundle. The default fixture holds 100
 * self-signed CA certificates (70 RSA-2048, 30 P-256).
 */
#include "perfbisect.h"

#include <openssl/ssl.h>

typedef struct {
    char path[4096];
} cl_global;

static const char *load_once(const cl_global *g)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL)
        return "SSL_CTX_new";
    int ok = SSL_CTX_load_verify_locations(ctx, g->path, NULL);
    SSL_CTX_free(ctx);
    return ok == 1 ? NULL : "SSL_CTX_load_verify_locations";
}

int pb_setup(const pb_env *env, void **global, char *err, size_t errlen)
{
    const char *bundle = pb_arg(env, "bundle");
    cl_global *g = pb_alloc_global(global, sizeof(*g));
    if (g == NULL)
        return pb_fail(err, errlen, "out of memory");
    if (bundle[0] == '/')
        snprintf(g->path, sizeof(g->path), "%s", bundle);
    else
        snprintf(g->path, sizeof(g->path), "%s/%s", env->fixtures_dir, bundle);
    FILE *f = fopen(g->path, "rb");
    if (f == NULL)
        return pb_fail(err, errlen, "cannot open CA bundle %s", g->path);
    fclose(f);
    const char *failed = load_once(g);
    if (failed != NULL)
        return pb_fail(err, errlen, "%s(%s) failed in setup", failed, g->path);
    return PB_OK;
}

int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen)
{
    const cl_global *g = global;
    (void)t;
    for (uint64_t i = 0; i < n; i++) {
        const char *failed = load_once(g);
        if (failed != NULL)
            return pb_fail(err, errlen, "%s(%s) failed", failed, g->path);
    }
    return PB_OK;
}
