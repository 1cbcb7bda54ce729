/*
 * perfbisect kernel ABI, version 1.
 *
 * A kernel is one C file compiled into a shared object against one OpenSSL
 * build. The runner (a child process of perfbisect) calls, in this order:
 *
 *   pb_setup        once, before any thread starts (parse arguments, load
 *                   fixtures, create shared objects such as an SSL_CTX)
 *   pb_thread_init  once per thread, on that thread
 *   pb_run          many times per thread: perform exactly `n` operations
 *   pb_thread_done  once per thread, on that thread
 *   pb_teardown     once, after every thread has finished
 *
 * Every call except pb_teardown returns PB_OK, PB_ERROR or (pb_setup only)
 * PB_NOT_APPLICABLE, and may write a NUL-terminated message into `err`
 * (at most `errlen` bytes, PB_ERRLEN in practice).
 *
 * A kernel describes itself in a comment block that perfbisect parses:
 *
 *   // @kernel     NAME
 *   // @summary    one line: what one operation is
 *   // @arg        NAME=DEFAULT [choices=a,b,c] [int] one-line description
 *   // @min_version 3.0.0       oldest OpenSSL the API exists in
 *   // @link       ssl          also link libssl (libcrypto always)
 *   // @unit       bytes=ARG    ops carry ARG bytes: report MB/s too
 *   // @counters   read,write   pb_run's ops split into named counters
 *
 * Arguments reach pb_setup with their defaults already filled in and their
 * values already validated against `choices`/`int`.
 */
#ifndef PERFBISECT_H
#define PERFBISECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>

#include <openssl/opensslv.h>
#include <openssl/crypto.h>
#include <openssl/err.h>

#define PB_ABI_VERSION 1
#define PB_ERRLEN 512

#define PB_OK 0
#define PB_ERROR 1
#define PB_NOT_APPLICABLE 2

#ifndef OPENSSL_VERSION_NUMBER
#error "opensslv.h did not define OPENSSL_VERSION_NUMBER"
#endif

#define PB_EXPORT __attribute__((visibility("default")))

typedef struct pb_args {
    int n;
    const char *const *keys;
    const char *const *values;
} pb_args;

typedef struct pb_env {
    const pb_args *args;
    int threads;              /* number of worker threads */
    const char *fixtures_dir; /* directory of kernels/fixtures, no trailing / */
} pb_env;

/* Optional per-thread counters (see @counters): a kernel may add to
 * counters[i] during pb_run; the runner reports the sums. */
#define PB_MAX_COUNTERS 4

typedef struct pb_thread {
    int index;                          /* 0 .. threads-1 */
    uint64_t counters[PB_MAX_COUNTERS]; /* zeroed by the runner */
    void *local;                        /* the kernel's own per-thread state */
} pb_thread;

/* The functions a kernel defines. */
PB_EXPORT int pb_setup(const pb_env *env, void **global, char *err, size_t errlen);
PB_EXPORT int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen);
PB_EXPORT int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen);
PB_EXPORT int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen);
PB_EXPORT void pb_teardown(void *global);

/* ---- defined here, once per kernel: identity and helpers ---- */

PB_EXPORT int pb_abi_version(void) { return PB_ABI_VERSION; }

/* The version string of the libcrypto this kernel is bound to at run time,
 * and the compile-time version it was built against. */
PB_EXPORT const char *pb_openssl_version(void)
{
#if OPENSSL_VERSION_NUMBER >= 0x10100000L
    return OpenSSL_version(OPENSSL_VERSION);
#else
    return SSLeay_version(SSLEAY_VERSION);
#endif
}

PB_EXPORT const char *pb_openssl_header_version(void) { return OPENSSL_VERSION_TEXT; }

/* Address of a function inside libcrypto, so the runner can ask the dynamic
 * loader which file it came from (dladdr). */
PB_EXPORT const void *pb_libcrypto_symbol(void)
{
#if OPENSSL_VERSION_NUMBER >= 0x10100000L
    return (const void *)&OpenSSL_version;
#else
    return (const void *)&SSLeay_version;
#endif
}

static inline const char *pb_arg(const pb_env *env, const char *key)
{
    for (int i = 0; i < env->args->n; i++)
        if (strcmp(env->args->keys[i], key) == 0)
            return env->args->values[i];
    return NULL;
}

static inline long pb_arg_long(const pb_env *env, const char *key, long dflt)
{
    const char *v = pb_arg(env, key);
    if (v == NULL || *v == '\0')
        return dflt;
    return strtol(v, NULL, 10);
}

__attribute__((format(printf, 3, 4)))
static inline int pb_fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    /* Append OpenSSL's own reason, which is usually the useful part. */
    unsigned long e = ERR_peek_last_error();
    if (e != 0) {
        size_t used = strlen(err);
        if (used + 3 < errlen) {
            err[used++] = ':';
            err[used++] = ' ';
            ERR_error_string_n(e, err + used, errlen - used);
        }
    }
    ERR_clear_error();
    return PB_ERROR;
}

static inline int pb_not_applicable(char *err, size_t errlen, const char *why)
{
    snprintf(err, errlen, "%s", why);
    return PB_NOT_APPLICABLE;
}

/* Read a whole fixture file into memory; the caller frees *out. */
static inline int pb_read_fixture(const pb_env *env, const char *name,
                                  unsigned char **out, size_t *outlen,
                                  char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", env->fixtures_dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "cannot open fixture %s", path);
        return PB_ERROR;
    }
    size_t cap = 4096, len = 0;
    unsigned char *buf = malloc(cap);
    size_t r;
    while (buf != NULL && (r = fread(buf + len, 1, cap - len, f)) > 0) {
        len += r;
        if (len == cap) {
            unsigned char *nb = realloc(buf, cap * 2);
            if (nb == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf == NULL) {
        snprintf(err, errlen, "out of memory reading fixture %s", path);
        return PB_ERROR;
    }
    *out = buf;
    *outlen = len;
    return PB_OK;
}

#endif /* PERFBISECT_H */
