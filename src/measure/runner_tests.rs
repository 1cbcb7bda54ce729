use super::child::undefined_symbol;
use super::*;

#[test]
fn a_missing_symbol_is_named_with_its_library() {
    let e = "/c/kernels/sslnew-1/kernel.so: undefined symbol: TLS_server_method";
    assert_eq!(undefined_symbol(e).as_deref(), Some("TLS_server_method"));
    assert_eq!(undefined_symbol("cannot open shared object file"), None);
    for (s, lib) in [
        ("TLS_server_method", "libssl"),
        ("SSL_CTX_new", "libssl"),
        ("OPENSSL_init_ssl", "libssl"),
        ("PEM_read_bio_SSL_SESSION", "libssl"),
        ("OPENSSL_init_crypto", "libcrypto"),
        ("EVP_PKEY_new", "libcrypto"),
        ("OSSL_PROVIDER_load", "libcrypto"),
    ] {
        assert_eq!(library_of(s), lib, "{s}");
    }
}
