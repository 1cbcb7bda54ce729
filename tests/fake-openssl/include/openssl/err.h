#ifndef OPENSSL_ERR_H
# define OPENSSL_ERR_H
# include <stddef.h>
unsigned long ERR_peek_last_error(void);
void ERR_error_string_n(unsigned long e, char *buf, size_t len);
void ERR_clear_error(void);
#endif
