#ifndef OPENSSL_CRYPTO_H
# define OPENSSL_CRYPTO_H
# include <openssl/opensslv.h>
# define OPENSSL_VERSION 0
const char *OpenSSL_version(int type);
/* The fake's benchmark target (tests/kernels/fakework.c). */
long fake_work(void);
#endif
