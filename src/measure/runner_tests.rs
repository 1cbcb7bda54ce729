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

/// The check runs before a child is started: a sample of a library other than the one its
/// build recorded is never taken (a job on another node reads both digests from block.json).
#[test]
fn a_library_changed_since_its_build_is_not_sampled() {
    use crate::measure::kernel::Registry;
    let d = tempfile::tempdir().unwrap();
    let prefix = crate::build::prefix::tests::stand_in(&d.path().join("prefix"));
    let so = d.path().join("kernel.so");
    std::fs::write(&so, b"a kernel object").unwrap();
    let kernel = CompiledKernel {
        sha256: hashing::file_sha256(&so).unwrap(),
        so,
    };
    let spec = Registry::load(None)
        .unwrap()
        .parse_specs(&["noop".to_string()])
        .unwrap()[0]
        .clone();
    let cache = Cache::open(&crate::cache::Location::at(&d.path().join("cache"))).unwrap();
    std::fs::write(prefix.root.join("lib/libcrypto.so.3"), b"another library").unwrap();
    let req = SampleRequest {
        cache: &cache,
        kernel: &kernel,
        spec: &spec,
        prefix: &prefix,
        threads: 1,
        duration: 0.01,
        timeout: None,
        metric: Metric::Time,
        profile: None,
    };
    let e = format!("{:#}", take_sample(&req).unwrap_err());
    assert!(e.contains("is not the file its build recorded"), "{e}");
}
