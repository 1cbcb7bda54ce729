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

/* One operation: FAKE_COST iterations; -1 crashes, -2 hangs. */
long fake_work(void)
{
#if FAKE_COST == -1
    raise(SIGSEGV);
#elif FAKE_COST == -2
    for (;;)
        pause();
#else
    for (long i = 0; i < FAKE_COST; i++)
        fake_sink += (unsigned long)i;
    for (long i = 0; i < FAKE_SYSCALLS; i++)
        fake_sink += (unsigned long)getppid();
#endif
    return FAKE_COST;
}
