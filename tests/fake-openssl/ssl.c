/* The fake libssl: the calls perfbisect's load check looks for (none of them
 * works); a stub with no symbols at all when FAKE_SSL_STUB is defined. */
#ifndef FAKE_SSL_STUB
void *TLS_server_method(void) { return 0; }
void *TLS_client_method(void) { return 0; }
void *SSL_CTX_new(const void *method) { (void)method; return 0; }
void *SSL_new(void *ctx) { (void)ctx; return 0; }
void SSL_free(void *ssl) { (void)ssl; }
/* Only tests/kernels/sslcall.c calls it; a commit whose ssl.c lacks it cannot load that kernel. */
int SSL_fake_call(void) { return 0; }
#endif
int fake_libssl_present = 1;
