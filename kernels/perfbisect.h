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
 * A kernel must define pb_setup and pb_run. The other three have defaults
 * (below, weak, so a kernel's own definition wins): pb_thread_init does
 * nothing, pb_thread_done frees t->local and pb_teardown frees the global
 * state, each with free(). A kernel whose state holds anything else
 * (OpenSSL objects, buffers it owns) defines the hook that releases it.
 *
 * Cleanup has one place. *global and t->local start NULL. The runner calls
 * pb_teardown whenever pb_setup succeeded or left *global non-NULL, and
 * pb_thread_done whenever pb_thread_init succeeded or left t->local
 * non-NULL. So a kernel stores its state first (pb_alloc_global,
 * pb_alloc_local), returns pb_fail(...) on a later error without freeing
 * anything, and releases every member, NULL or not, in pb_teardown /
 * pb_thread_done only.
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
 * values already validated against `choices`/`int`: read them with pb_arg
 * and pb_arg_int, which need no default of their own.
 */
#ifndef PERFBISECT_H
#define PERFBISECT_H

#include <errno.h>
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

/* The functions a kernel defines (the last three optional, see above). */
PB_EXPORT int pb_setup(const pb_env *env, void **global, char *err, size_t errlen);
PB_EXPORT int pb_run(void *global, pb_thread *t, uint64_t n, char *err, size_t errlen);
PB_EXPORT int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen);
PB_EXPORT int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen);
PB_EXPORT void pb_teardown(void *global);

/* ---- helpers for kernels ---- */

/* The value of argument `key`: the user's or the declared default, since
 * the runner passes every declared argument. "" for an undeclared key, so
 * a typo fails a strcmp rather than crashing. */
static inline const char *pb_arg(const pb_env *env, const char *key)
{
    for (int i = 0; i < env->args->n; i++)
        if (strcmp(env->args->keys[i], key) == 0)
            return env->args->values[i];
    return "";
}

/* An `int` argument as a number; -1 if it is not a non-negative decimal
 * integer that fits a long. The runner validated it, so -1 means a kernel
 * bug (wrong key) and the kernel's own range check reports it. */
static inline long pb_arg_int(const pb_env *env, const char *key)
{
    const char *v = pb_arg(env, key);
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || errno != 0 || x < 0)
        return -1;
    return x;
}

/* Zeroed global state, stored in *global at once so that pb_teardown
 * releases it whatever pb_setup returns afterwards. NULL if out of memory. */
static inline void *pb_alloc_global(void **global, size_t size)
{
    return *global = calloc(1, size);
}

/* The same for per-thread state in t->local and pb_thread_done. */
static inline void *pb_alloc_local(pb_thread *t, size_t size)
{
    return t->local = calloc(1, size);
}

/* For state that is one object: PB_THREAD_DONE(EVP_PKEY_CTX_free) defines
 * pb_thread_done as that free function applied to t->local, and
 * PB_TEARDOWN(SSL_CTX_free) pb_teardown as one applied to the global. */
#define PB_THREAD_DONE(free_fn)                                               \
    int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen) \
    {                                                                         \
        (void)global; (void)err; (void)errlen;                                \
        free_fn(t->local);                                                    \
        return PB_OK;                                                         \
    }
#define PB_TEARDOWN(free_fn) \
    void pb_teardown(void *global) { free_fn(global); }

/* `size` bytes set to `fill`; NULL if out of memory. */
static inline unsigned char *pb_buffer(size_t size, int fill)
{
    unsigned char *b = malloc(size);
    if (b != NULL)
        memset(b, fill, size);
    return b;
}

/* A thread's own buffer as its whole state (t->local), released by the
 * default pb_thread_done. */
static inline unsigned char *pb_thread_buffer(pb_thread *t, size_t size, int fill)
{
    unsigned char *b = pb_buffer(size, fill);
    t->local = b;
    return b;
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

/* ---- the runtime: compiled once per kernel object, as its own unit ---- */

/* perfbisect compiles this part as a second translation unit beside the
 * kernel (with PB_RUNTIME defined): a weak default in the kernel's own unit
 * would clash with the kernel's definition instead of yielding to it. */
#ifdef PB_RUNTIME

PB_EXPORT int pb_abi_version(void) { return PB_ABI_VERSION; }

/* The version string of the libcrypto this kernel is bound to at run time. */
PB_EXPORT const char *pb_openssl_version(void)
{
#if OPENSSL_VERSION_NUMBER >= 0x10100000L
    return OpenSSL_version(OPENSSL_VERSION);
#else
    return SSLeay_version(SSLEAY_VERSION);
#endif
}

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

__attribute__((weak)) int pb_thread_init(void *global, pb_thread *t, char *err, size_t errlen)
{
    (void)global; (void)t; (void)err; (void)errlen;
    return PB_OK;
}

__attribute__((weak)) int pb_thread_done(void *global, pb_thread *t, char *err, size_t errlen)
{
    (void)global; (void)err; (void)errlen;
    free(t->local);
    return PB_OK;
}

__attribute__((weak)) void pb_teardown(void *global) { free(global); }

#endif /* PB_RUNTIME */

#endif /* PERFBISECT_H */
