use super::run::Calls;
use super::*;
use crate::measure::kernel::{Registry, ToolSpec};

fn spec(s: &str) -> ToolSpec {
    Registry::load(None)
        .unwrap()
        .parse_specs(&[s.to_string()])
        .unwrap()[0]
        .clone()
}

#[test]
fn calls_come_back_from_the_terse_figure() {
    // evp_setpeer dh under callgrind on 3.2.1: 37 calls in 5 s, printed with 6 decimals.
    assert_eq!(Calls::from_figure(135135.135135, 1).total, 37);
    assert_eq!(Calls::from_figure(0.5, 2).total, 20_000_000);
}

#[test]
fn the_default_specs_cover_perftools_run_lists() {
    // perftools' CMakeLists.txt runs evp_pkey with each of these -a and handshake with -s
    // combined with -p and -P.
    let specs = default_specs();
    for alg in ["ed25519", "x25519", "x448", "ed448", "rsa"] {
        for mode in ["evp_shared", "evp_isolated"] {
            let want = ["-o", mode, "-a", &alg.to_uppercase()].map(String::from);
            assert!(
                specs.iter().any(|s| {
                    counterpart(&spec(s))
                        .is_some_and(|c| c.program == "evp_pkey" && c.options == want)
                }),
                "no default spec runs evp_pkey -o {mode} -a {alg}"
            );
        }
    }
    for flag in ["-s", "-p", "-P"] {
        assert!(
            specs.iter().any(|s| {
                counterpart(&spec(s)).is_some_and(|c| {
                    c.program == "handshake"
                        && c.options.iter().any(|o| o == "-s")
                        && c.options.iter().any(|o| o == flag)
                })
            }),
            "no default spec runs handshake -s {flag}"
        );
    }
}

#[test]
fn every_default_spec_has_a_counterpart() {
    for s in default_specs() {
        assert!(counterpart(&spec(&s)).is_some(), "{s}");
    }
}

#[test]
fn counterparts_follow_the_kernel_arguments() {
    let c = counterpart(&spec("pkeyread:key=rsa,format=der")).unwrap();
    assert_eq!(c.options, ["-k", "rsa", "-f", "der", "-T", "5"]);
    let c = counterpart(&spec("evp_fetch:type=CIPHER")).unwrap();
    assert_eq!(c.options, ["-f", "CIPHER:AES-128-CBC"]);
    assert!(
        c.differs.is_some(),
        "the default library context is not perftools'"
    );
    let c = counterpart(&spec("evp_fetch:type=CIPHER,libctx=own")).unwrap();
    assert_eq!((c.options.len(), c.differs), (2, None));
    assert!(counterpart(&spec("handshake")).unwrap().certs);
    assert_eq!(
        counterpart(&spec("rwlocks:writers=0"))
            .unwrap()
            .calls_per_op,
        2.0
    );
    assert!(counterpart(&spec("rwlocks")).is_none());
    // Operations perftools does not time the same way have no counterpart.
    assert!(counterpart(&spec("newrawkey:alg=ed448")).is_none());
    assert!(counterpart(&spec("randbytes:size=64")).is_none());
    assert!(counterpart(&spec("evp_hash")).is_none());
}

#[test]
fn perftools_modes_pair_with_their_flags() {
    let opts = |s: &str| counterpart(&spec(s)).map(|c| (c.program, c.options));
    assert_eq!(
        opts("evp_hash:mode=evp_isolated,size=1500,updates=5,alg=sha384"),
        Some((
            "evp_hash",
            ["-o", "evp_isolated", "-u", "5", "-a", "SHA384"]
                .map(String::from)
                .to_vec()
        ))
    );
    // Our one-shot digest, another size or a digest perftools lacks: no counterpart.
    assert_eq!(opts("evp_hash:size=1500"), None);
    assert_eq!(opts("evp_hash:mode=evp_shared"), None);
    assert_eq!(opts("evp_hash:mode=evp_shared,size=1500,alg=md5"), None);
    assert_eq!(
        opts("evp_cipher:mode=evp_shared,size=16,alg=aes-256-cbc")
            .unwrap()
            .1,
        ["-o", "evp_shared", "-u", "1", "-a", "AES-256-CBC"]
    );
    assert_eq!(opts("evp_cipher:mode=evp_shared,size=16,updates=16"), None);
    assert_eq!(
        opts("evp_cipher:mode=evp_isolated,size=16,alg=aes-128-gcm"),
        None
    );
    assert_eq!(
        opts("evp_mac:mode=deprecated_isolated,updates=3")
            .unwrap()
            .1,
        ["-o", "deprecated_isolated", "-u", "3"]
    );
    assert_eq!(opts("evp_mac:size=64"), None);
    assert_eq!(opts("evp_kdf").unwrap().1, ["-o", "evp_shared"]);
    assert_eq!(opts("evp_kdf:iter=1000"), None);
    assert_eq!(
        opts("evp_rand:mode=evp_isolated").unwrap().1,
        ["-o", "evp_isolated"]
    );
    assert_eq!(
        opts("evp_pkey:alg=x448").unwrap().1,
        ["-o", "evp_shared", "-a", "X448"]
    );
    assert_eq!(
        opts("evp_pkey:mode=evp_isolated,alg=rsa").unwrap().1,
        ["-o", "evp_isolated", "-a", "RSA"]
    );
    assert_eq!(
        opts("newrawkey:alg=ml-kem-768").unwrap().1,
        ["-a", "ml-kem-768"]
    );
    assert_eq!(
        opts("writeread:ctx=per-thread,proto=dtls,size=256")
            .unwrap()
            .1,
        ["-s", "-d", "-b", "256"]
    );
    assert_eq!(opts("writeread").unwrap().1, ["-b", "1024"]);
    assert_eq!(opts("handshake").unwrap().1, Vec::<String>::new());
    assert_eq!(
        opts("evp_fetch:type=CIPHER,alg=AES-256-GCM").unwrap().1,
        ["-f", "CIPHER:AES-256-GCM"]
    );
    assert_eq!(opts("evp_fetch:type=all").unwrap().1, Vec::<String>::new());
    assert_eq!(opts("evp_fetch:type=all,pq=yes").unwrap().1, ["-q"]);
    // perftools' -f knows no KEYMGMT, KEYEXCH or ASYM_CIPHER.
    assert_eq!(opts("evp_fetch:type=KEYMGMT"), None);
    assert_eq!(
        opts("handshake:ctx=per-conn,libctx=pool,pool_size=4")
            .unwrap()
            .1,
        ["-s", "-P", "-o", "4"]
    );
    assert_eq!(opts("handshake:libctx=per-thread").unwrap().1, ["-p"]);
    assert_eq!(
        opts("handshake:ctx=per-conn,libctx=per-thread").unwrap().1,
        ["-s", "-p"]
    );
    assert_eq!(
        opts("handshake:libctx=ssl-ctx-pool,secure_heap=1048576")
            .unwrap()
            .1,
        ["-l", "-o", "16", "-S", "1048576"]
    );
    // perftools' newrawkey refuses -a ml-kem-* before 3.5: the row is not applicable there.
    let ml_kem = counterpart(&spec("newrawkey:alg=ml-kem-512")).unwrap();
    let v = |s: &str| s.parse::<OpenSslVersion>().unwrap();
    assert_eq!(ml_kem.needs_newer_than(Some(&v("3.0.8"))), Some(v("3.5.0")));
    assert_eq!(ml_kem.options, ["-a", "ml-kem-512"]);
    assert_eq!(ml_kem.needs_newer_than(Some(&v("4.0.3"))), None);
    assert_eq!(ml_kem.needs_newer_than(None), None);
    assert_eq!(
        counterpart(&spec("newrawkey"))
            .unwrap()
            .needs_newer_than(Some(&v("3.0.8"))),
        None
    );
}

#[test]
fn every_kernel_with_a_counterpart_names_it_in_the_pairing_table() {
    let reg = Registry::load(None).unwrap();
    for s in default_specs() {
        let k = spec(&s).kernel.name;
        let p = pairing(&k);
        assert!(
            p.starts_with(counterpart(&spec(&s)).unwrap().program),
            "{s}: {p}"
        );
    }
    for k in reg.all() {
        if counterpart(&spec(&k.name)).is_none() && pairing(&k.name) == "-" {
            assert!(
                ["noop", "ecdsa", "ctxload"].contains(&k.name.as_str()),
                "{} has neither a counterpart nor a pairing note",
                k.name
            );
        }
    }
}
