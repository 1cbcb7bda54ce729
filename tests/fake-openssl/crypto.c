/* The fake libcrypto (see README.md). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/opensslv.h>
#include <openssl/crypto.h>
#include <openssl/err.h>

#include "fake_cost.h"
#include "buildinf.h"

/* getppid() calls per operation: time in the kernel, almost no user-space instructions (what
 * valgrind counts), so a commit can move time more than its instruction count. */
#ifndef FAKE_SYSCALLS
#define FAKE_SYSCALLS 0
#endif

/* A tail: FAKE_SLOW_PERMILLE of a thousand processes run every operation's loop FAKE_SLOW_PERCENT%
 * of FAKE_COST times, the rest FAKE_COST times. Decided once per process, so it is a process's fate (a slow
 * tenth, as contention or a cold cache makes one), which the trimmed tests take for outliers. */
#ifndef FAKE_SLOW_PERCENT
#define FAKE_SLOW_PERCENT 150
#endif

const char fake_built_on[] = FAKE_BUILT_ON;

const char *OpenSSL_version(int type)
{
    (void)type;
    return OPENSSL_VERSION_TEXT;
}

unsigned long ERR_peek_last_error(void) { return 0; }

void ERR_error_string_n(unsigned long e, char *buf, size_t len)
{
    snprintf(buf, len, "error:%08lX:fake libcrypto", e);
}

void ERR_clear_error(void) {}

static volatile unsigned long fake_sink;

#ifdef FAKE_SLOW_PERMILLE
#include <time.h>
/* This process's extra iterations per operation: drawn once from its pid and the clock
 * (splitmix64). */
static long fake_extra(void)
{
    static long extra = -1;
    if (extra < 0) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        unsigned long long z = (unsigned long long)getpid() * 0x9E3779B97F4A7C15ULL ^ (unsigned long long)t.tv_nsec;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        extra = (long)(z % 1000) < FAKE_SLOW_PERMILLE ? (long)FAKE_COST * (FAKE_SLOW_PERCENT - 100) / 100 : 0;
    }
    return extra;
}

__attribute__((noinline, noipa)) static void fake_spin(long n)
{
    for (long i = 0; i < n; i++)
        fake_sink += (unsigned long)i;
}
#endif

/* One operation: FAKE_COST iterations; -1 crashes, -2 hangs. */
long fake_work(void)
{
#if FAKE_COST == -1
    raise(SIGSEGV);
#elif FAKE_COST == -2
    for (;;)
        pause();
#else
#ifdef FAKE_SLOW_PERMILLE
    /* One loop, called for the cost and a slow process's extra iterations: the same machine code
     * whatever the share (inlined loops of a constant and of a drawn count run 3x apart here). */
    fake_spin(FAKE_COST);
    fake_spin(fake_extra());
#else
    for (long i = 0; i < FAKE_COST; i++)
        fake_sink += (unsigned long)i;
#endif
    for (long i = 0; i < FAKE_SYSCALLS; i++)
        fake_sink += (unsigned long)getppid();
#endif
    return FAKE_COST;
}
