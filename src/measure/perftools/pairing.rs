//! Which perftools program, with which flags, times the same operation as a kernel spec.

use std::collections::BTreeMap;

use super::Counterpart;
use crate::measure::kernel::ToolSpec;

/// The perftools counterpart of `spec`, if it has one with the same operation.
pub fn counterpart(spec: &ToolSpec) -> Option<Counterpart> {
    let row = PAIRINGS.iter().find(|p| p.kernel == spec.kernel.name)?;
    (row.counterpart)(&Args(&spec.args))
}

/// How each kernel's specs map to a perftools program and its flags, as `perfbisect kernels`
/// shows it ("-" where perftools has no counterpart). `{arg}` is the value of a kernel argument.
pub fn pairing(kernel: &str) -> &'static str {
    PAIRINGS
        .iter()
        .find(|p| p.kernel == kernel)
        .map_or("-", |p| p.shown)
}

/// A spec's arguments as the mapping reads them: "" for one the spec does not set.
struct Args<'s>(&'s BTreeMap<String, String>);

impl<'s> Args<'s> {
    fn get(&self, k: &str) -> &'s str {
        self.0.get(k).map(String::as_str).unwrap_or("")
    }
}

/// One kernel's perftools program: the pairing as `perfbisect kernels` shows it, and the
/// counterpart of a spec (None where the spec's arguments time another operation).
struct Pairing {
    kernel: &'static str,
    shown: &'static str,
    counterpart: fn(&Args) -> Option<Counterpart>,
}

/// The kernel → perftools mapping, one row per kernel.
static PAIRINGS: &[Pairing] = &[
    Pairing {
        kernel: "randbytes",
        shown: "randbytes (size=32)",
        counterpart: |a| (a.get("size") == "32").then(|| plain("randbytes")),
    },
    Pairing {
        kernel: "pkeyread",
        shown: "pkeyread -k {key} -f {format}",
        // -T: pkeyread's window; every other program has 5 s compiled in.
        counterpart: |a| {
            Some(with(
                "pkeyread",
                &["-k", a.get("key"), "-f", a.get("format"), "-T", "5"],
            ))
        },
    },
    Pairing {
        kernel: "evp_setpeer",
        shown: "evp_setpeer -k {key}",
        counterpart: |a| Some(with("evp_setpeer", &["-k", a.get("key")])),
    },
    Pairing {
        kernel: "sslnew",
        shown: "sslnew",
        counterpart: |_| Some(plain("sslnew")),
    },
    Pairing {
        kernel: "rsasign",
        shown: "rsasign",
        counterpart: |_| Some(plain("rsasign")),
    },
    Pairing {
        kernel: "newrawkey",
        shown: "newrawkey [-a {alg}] (x25519, ml-kem-*)",
        counterpart: newrawkey,
    },
    Pairing {
        kernel: "x509storeissuer",
        shown: "x509storeissuer CERTDIR",
        counterpart: |_| {
            Some(Counterpart {
                certs: true,
                ..plain("x509storeissuer")
            })
        },
    },
    Pairing {
        kernel: "handshake",
        shown: "handshake [-s] [-p|-P|-l] [-o {pool_size}] [-S {secure_heap}] CERTDIR \
                (ctx=per-conn: -s; libctx=per-thread|pool|ssl-ctx-pool: -p|-P|-l)",
        counterpart: |a| {
            Some(Counterpart {
                options: handshake_options(a),
                certs: true,
                ..plain("handshake")
            })
        },
    },
    Pairing {
        kernel: "writeread",
        shown: "writeread [-s] [-d] -b {size} CERTDIR (ctx=per-thread: -s, proto=dtls: -d)",
        counterpart: writeread,
    },
    Pairing {
        kernel: "providerdoall",
        shown: "providerdoall",
        counterpart: |_| Some(plain("providerdoall")),
    },
    Pairing {
        kernel: "evp_fetch",
        shown: "evp_fetch -f {type}:{alg} (MD..SIGNATURE), or [-q] (type=all, pq=yes); libctx=own \
                as perftools",
        counterpart: evp_fetch,
    },
    Pairing {
        kernel: "rwlocks",
        shown: "rwlocks (writers=0; reads only)",
        // Readers only: perftools' default split at 1 thread (no writer), and the number its
        // readers report.
        counterpart: |a| {
            (a.get("writers") == "0").then(|| Counterpart {
                calls_per_op: 2.0,
                column: 1,
                differs: Some("perftools reads the clock after every lock/unlock pair"),
                ..plain("rwlocks")
            })
        },
    },
    Pairing {
        kernel: "evp_hash",
        shown: "evp_hash -o {mode} -u {updates} -a {ALG} (size=1500, SHA-1/2, not oneshot)",
        counterpart: evp_hash,
    },
    Pairing {
        kernel: "evp_cipher",
        shown: "evp_cipher -o {mode} -u {updates} -a {ALG} (size=16, *-cbc, not reinit)",
        counterpart: evp_cipher,
    },
    Pairing {
        kernel: "evp_mac",
        shown: "evp_mac -o {mode} -u {updates} (size=32)",
        counterpart: |a| {
            (a.get("size") == "32")
                .then(|| with("evp_mac", &["-o", a.get("mode"), "-u", a.get("updates")]))
        },
    },
    Pairing {
        kernel: "evp_kdf",
        shown: "evp_kdf -o {mode} (iter=2048)",
        counterpart: |a| (a.get("iter") == "2048").then(|| with("evp_kdf", &["-o", a.get("mode")])),
    },
    Pairing {
        kernel: "evp_rand",
        shown: "evp_rand -o {mode} (size=64)",
        counterpart: |a| (a.get("size") == "64").then(|| with("evp_rand", &["-o", a.get("mode")])),
    },
    Pairing {
        kernel: "evp_pkey",
        shown: "evp_pkey -o {mode} -a {ALG}",
        counterpart: |a| {
            let alg = a.get("alg").to_uppercase();
            Some(with("evp_pkey", &["-o", a.get("mode"), "-a", &alg]))
        },
    },
];

/// A program run with no options.
fn plain(program: &'static str) -> Counterpart {
    Counterpart {
        program,
        options: Vec::new(),
        certs: false,
        calls_per_op: 1.0,
        column: 0,
        differs: None,
        since: None,
    }
}

/// A program run with `options`.
fn with(program: &'static str, options: &[&str]) -> Counterpart {
    Counterpart {
        options: options.iter().map(|s| s.to_string()).collect(),
        ..plain(program)
    }
}

/// perftools' newrawkey imports x25519 (its default) and, from 3.5, ML-KEM keys.
fn newrawkey(a: &Args) -> Option<Counterpart> {
    match a.get("alg") {
        "x25519" => Some(plain("newrawkey")),
        alg if alg.starts_with("ml-kem-") => Some(Counterpart {
            since: Some("3.5.0"),
            ..with("newrawkey", &["-a", alg])
        }),
        _ => None,
    }
}

/// perftools hashes 1500 bytes per update with SHA-1/2; oneshot is ours alone.
fn evp_hash(a: &Args) -> Option<Counterpart> {
    let sha = ["sha1", "sha224", "sha256", "sha384", "sha512"].contains(&a.get("alg"));
    if a.get("mode") == "oneshot" || a.get("size") != "1500" || !sha {
        return None;
    }
    Some(mode_updates_alg("evp_hash", a))
}

/// 16 bytes per update of AES-CBC; its 256-byte output buffer holds 15 updates.
fn evp_cipher(a: &Args) -> Option<Counterpart> {
    let fits = a.get("updates").parse::<u32>().is_ok_and(|u| u <= 15);
    if a.get("mode") == "reinit"
        || a.get("size") != "16"
        || !a.get("alg").ends_with("-cbc")
        || !fits
    {
        return None;
    }
    Some(mode_updates_alg("evp_cipher", a))
}

/// evp_hash's and evp_cipher's flags: `-o {mode} -u {updates} -a {ALG}`.
fn mode_updates_alg(program: &'static str, a: &Args) -> Counterpart {
    let alg = a.get("alg").to_uppercase();
    with(
        program,
        &["-o", a.get("mode"), "-u", a.get("updates"), "-a", &alg],
    )
}

/// writeread: -s (ctx=per-thread), -d (proto=dtls) and the buffer size.
fn writeread(a: &Args) -> Option<Counterpart> {
    let mut options = Vec::new();
    if a.get("ctx") == "per-thread" {
        options.push("-s".to_string());
    }
    if a.get("proto") == "dtls" {
        options.push("-d".to_string());
    }
    options.extend(["-b".to_string(), a.get("size").to_string()]);
    Some(Counterpart {
        options,
        certs: true,
        ..plain("writeread")
    })
}

/// perftools fetches from its own OSSL_LIB_CTX; from NULL each fetch costs about 100
/// instructions more (docs/parity.md).
/// perftools' -f takes these seven types; without -f it walks its own list (type=all).
fn evp_fetch(a: &Args) -> Option<Counterpart> {
    let dflt = match a.get("type") {
        "MD" => "SHA2-256",
        "CIPHER" => "AES-128-CBC",
        "KDF" => "HKDF",
        "MAC" => "HMAC",
        "RAND" => "CTR-DRBG",
        "KEM" | "SIGNATURE" | "all" => "RSA",
        _ => return None,
    };
    let alg = match a.get("alg") {
        "" | "default" => dflt,
        alg => alg,
    };
    let (options, since) = match (a.get("type"), a.get("pq")) {
        ("all", "yes") => (vec!["-q".to_string()], Some("3.5.0")),
        ("all", _) => (Vec::new(), None),
        (t, _) => (vec!["-f".to_string(), format!("{t}:{alg}")], None),
    };
    Some(Counterpart {
        options,
        since,
        differs: (a.get("libctx") != "own").then_some(
            "perftools fetches from its own library context (libctx=own does too), \
             this spec from the default one",
        ),
        ..plain("evp_fetch")
    })
}

/// perftools' handshake flags for a handshake spec: -s (ctx=per-conn), -p / -P / -l (libctx=),
/// -o (the pool's size) and -S (secure_heap).
fn handshake_options(a: &Args) -> Vec<String> {
    let arg = |k: &str| a.get(k);
    let mut o: Vec<&str> = Vec::new();
    if arg("ctx") == "per-conn" {
        o.push("-s");
    }
    let pool = match arg("libctx") {
        "per-thread" => Some("-p"),
        "pool" => Some("-P"),
        "ssl-ctx-pool" => Some("-l"),
        _ => None,
    };
    if let Some(flag) = pool {
        o.push(flag);
        if flag != "-p" {
            o.extend(["-o", arg("pool_size")]);
        }
    }
    if !matches!(arg("secure_heap"), "" | "0") {
        o.extend(["-S", arg("secure_heap")]);
    }
    o.into_iter().map(String::from).collect()
}
