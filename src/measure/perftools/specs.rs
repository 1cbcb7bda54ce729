//! The kernel specs `perfbisect parity` compares by default.

/// The kernel specs `perfbisect parity` compares by default: every kernel with a perftools
/// counterpart, pkeyread and evp_setpeer with each key perftools has.
pub fn default_specs() -> Vec<String> {
    let mut v: Vec<String> = [
        "randbytes",
        "sslnew",
        "rsasign",
        "newrawkey",
        "x509storeissuer",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for key in ["dh", "dhx", "dsa", "ec", "rsa", "x25519"] {
        for format in ["pem", "der"] {
            v.push(format!("pkeyread:key={key},format={format}"));
        }
    }
    for key in ["ec256", "ec521", "dh", "x25519"] {
        v.push(format!("evp_setpeer:key={key}"));
    }
    v.extend(
        [
            "handshake",
            "writeread",
            "providerdoall",
            "evp_fetch:libctx=own",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    v.extend(perftools_mode_specs());
    v
}

/// The specs of perftools' mode options (`-o`, `-u`, `-a`, `-s`, `-p`, `-P`, `-l`, `-S`, `-d`,
/// `-q`) that its own CMake run list exercises: evp_hash, evp_cipher, evp_mac, evp_kdf, evp_rand,
/// evp_pkey (every `-a`), newrawkey -a, evp_fetch, handshake and writeread.
pub fn perftools_mode_specs() -> Vec<String> {
    let mut v = Vec::new();
    for mode in ["deprecated", "evp_isolated", "evp_shared"] {
        v.push(format!("evp_hash:mode={mode},size=1500"));
    }
    v.push("evp_hash:mode=evp_shared,size=1500,updates=5".into());
    for mode in ["evp_isolated", "evp_shared"] {
        v.push(format!("evp_cipher:mode={mode},size=16"));
    }
    for mode in [
        "evp_shared",
        "evp_isolated",
        "deprecated_shared",
        "deprecated_isolated",
    ] {
        v.push(format!("evp_mac:mode={mode}"));
        v.push(format!("evp_kdf:mode={mode}"));
    }
    for mode in ["evp_shared", "evp_isolated"] {
        v.push(format!("evp_rand:mode={mode}"));
        v.push(format!("evp_pkey:mode={mode}"));
        // The rest of perftools' -a list (ED25519 is the default above).
        for alg in ["x25519", "x448", "ed448", "rsa"] {
            v.push(format!("evp_pkey:mode={mode},alg={alg}"));
        }
    }
    for alg in ["ml-kem-512", "ml-kem-768", "ml-kem-1024"] {
        v.push(format!("newrawkey:alg={alg}"));
    }
    v.push("evp_fetch:type=all,libctx=own".into());
    v.push("evp_fetch:type=all,pq=yes,libctx=own".into());
    for libctx in ["per-thread", "pool", "ssl-ctx-pool"] {
        v.push(format!("handshake:libctx={libctx}"));
    }
    // -s alone and with -p or -P: an SSL_CTX pair per handshake (in the thread's or the pool's
    // library context); perftools' -l ignores -s, so that combination has no spec.
    for libctx in ["default", "per-thread", "pool"] {
        v.push(format!("handshake:ctx=per-conn,libctx={libctx}"));
    }
    v.push("handshake:secure_heap=1048576".into());
    v.push("writeread:ctx=per-thread".into());
    v.push("writeread:proto=dtls".into());
    v
}
