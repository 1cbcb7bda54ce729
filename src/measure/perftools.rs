//! openssl/perftools as a reference: which of its programs times the same operation as one of
//! our kernels, how to build a user's perftools checkout against the OpenSSL under test, and how
//! to run one of its programs and read its number. `perfbisect parity` puts the two side by side
//! (docs/parity.md says what was found with it).
//!
//! perftools is the user's checkout, read only: CMake's configure step writes `config.h` into
//! the source directory, so the sources are copied into the cache and built there, one build per
//! (checkout contents, OpenSSL prefix).

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::prefix::Prefix;
use crate::build::version::OpenSslVersion;
use crate::cache::Cache;
use crate::hashing::{self, Hasher};
use crate::measure::kernel::ToolSpec;
use crate::measure::metric;

/// The perftools program that times the same operation as a kernel spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Counterpart {
    pub program: &'static str,
    /// Options before the positional arguments (`-t`, terse, is added by [`Perftools::run`]).
    pub options: Vec<String>,
    /// Whether the program takes the certificates directory before the thread count.
    pub certs: bool,
    /// perftools' number divided by this is per our operation (rwlocks counts lock and unlock as
    /// two calls; ours is the pair).
    pub calls_per_op: f64,
    /// Which number of the terse output line is ours (rwlocks prints the writers' and then the
    /// readers').
    pub column: usize,
    /// Where the two cannot agree by construction, why (shown next to the row).
    pub differs: Option<&'static str>,
    /// The oldest OpenSSL this program and these options run on, where it is newer than the
    /// program itself (newrawkey -a ml-kem-*: 3.5); older builds make the row not applicable.
    pub since: Option<&'static str>,
}

impl Counterpart {
    /// The OpenSSL this counterpart needs, when `version` is older (the row is then not
    /// applicable).
    pub fn needs_newer_than(&self, version: Option<&OpenSslVersion>) -> Option<OpenSslVersion> {
        let since: OpenSslVersion = self.since?.parse().ok()?;
        (version? < &since).then_some(since)
    }
}

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

/// perftools built against one OpenSSL prefix.
pub struct Perftools {
    pub bin_dir: PathBuf,
    /// servercert.pem and serverkey.pem: our own fixtures, so both programs handshake with the
    /// same certificate.
    certs: PathBuf,
    /// An empty directory for SSL_CERT_DIR (x509storeissuer's README asks for an empty default
    /// certificate directory): `/tmp/pbcerts-XXXXXX`, a path as long as the one our
    /// x509storeissuer kernel searches, since every lookup's cost grows with the path's length
    /// (in the cache, 41 characters longer: 4% more instructions per call on 3.0.8).
    empty_certs: tempfile::TempDir,
}

impl Perftools {
    /// The checkout's sources, or why `checkout` is not one.
    pub fn source_of(checkout: &Path) -> Result<PathBuf> {
        let source = checkout.join("source");
        if !source.join("CMakeLists.txt").is_file() {
            bail!(
                "{} is not a perftools checkout (no source/CMakeLists.txt)",
                checkout.display()
            );
        }
        Ok(source)
    }

    /// Build (or reuse) perftools from `checkout` (a clone of openssl/perftools) against
    /// `prefix`. Needs cmake and a C compiler.
    pub fn build(
        cache: &Cache,
        checkout: &Path,
        prefix: &Prefix,
        jobs: usize,
        say: bool,
    ) -> Result<Self> {
        let source = Self::source_of(checkout)?;
        let mut h = Hasher::new();
        h.field("perftools-build-1").field(&prefix.identity()?);
        hash_tree(&source, &source, &mut h)?;
        let dir = cache.dir("perftools")?.join(h.finish_short());
        let bin_dir = dir.join("build");
        let done = dir.join("done");
        if !done.is_file() {
            let _lock = cache.lock(&format!("perftools-{}", h.finish_short()))?;
            if !done.is_file() {
                if say {
                    eprintln!("building perftools against {}", prefix.label);
                }
                build_into(&source, &dir, prefix, jobs)?;
                std::fs::write(&done, b"")?;
            }
        }
        let fixtures = crate::measure::kernel::fixtures(cache)?;
        let certs = dir.join("certs");
        std::fs::create_dir_all(&certs)?;
        std::fs::copy(fixtures.join("server.pem"), certs.join("servercert.pem"))?;
        std::fs::copy(fixtures.join("server-key.pem"), certs.join("serverkey.pem"))?;
        let empty_certs = tempfile::Builder::new()
            .prefix("pbcerts-")
            .rand_bytes(6)
            .tempdir_in("/tmp")
            .context("cannot create an empty certificate directory in /tmp")?;
        Ok(Perftools {
            bin_dir,
            certs,
            empty_certs,
        })
    }

    /// Whether this build has the program (CMake leaves out the 3.0-only ones on 1.1.1).
    pub fn has(&self, cp: &Counterpart) -> bool {
        self.bin_dir.join(cp.program).is_file()
    }

    /// Run one program once and return µs per our operation. The environment is the sampling
    /// child's: our empty OPENSSL_CONF, the prefix's modules, and its lib directory.
    pub fn run(
        &self,
        cp: &Counterpart,
        threads: usize,
        prefix: &Prefix,
        cache: &Cache,
    ) -> Result<f64> {
        let mut cmd = self.command(None, cp, threads, prefix, cache)?;
        Ok(self.calls(&mut cmd, cp, threads)?.us_per_call / cp.calls_per_op)
    }

    /// Run one program once under callgrind and return the instructions per our operation that
    /// its worker thread executed: perftools' loop with its clock read per call, and the
    /// thread's own setup (perflib's `thread_run` and everything it calls), over the number of
    /// calls its terse figure implies.
    pub fn count(
        &self,
        cp: &Counterpart,
        threads: usize,
        prefix: &Prefix,
        cache: &Cache,
    ) -> Result<f64> {
        let out = tempfile::Builder::new()
            .prefix("perftools-callgrind-")
            .tempfile_in(cache.dir("run")?)?;
        let wrapper = metric::callgrind_args_inside(PERFTOOLS_THREAD_FN, out.path(), false);
        let mut cmd = self.command(Some(wrapper), cp, threads, prefix, cache)?;
        let calls = self.calls(&mut cmd, cp, threads)?;
        let total = metric::callgrind_total(out.path())?;
        Ok(total as f64 / (calls.total as f64 / cp.calls_per_op))
    }

    /// The command of one run: the program, or valgrind with `wrapper`'s arguments before it.
    fn command(
        &self,
        wrapper: Option<Vec<String>>,
        cp: &Counterpart,
        threads: usize,
        prefix: &Prefix,
        cache: &Cache,
    ) -> Result<Command> {
        let program = self.bin_dir.join(cp.program);
        let mut cmd = match wrapper {
            Some(args) => {
                let mut c = Command::new("valgrind");
                c.args(args).arg(&program);
                c
            }
            None => Command::new(&program),
        };
        for (k, _) in std::env::vars_os() {
            if let Some(k) = k.to_str() {
                if k.starts_with("LD_") || k.starts_with("OPENSSL_") || k.starts_with("SSL_CERT") {
                    cmd.env_remove(k);
                }
            }
        }
        cmd.env("OPENSSL_CONF", cache.openssl_conf()?)
            .env("LD_LIBRARY_PATH", &prefix.lib_dir)
            .env("SSL_CERT_DIR", self.empty_certs.path())
            .env("SSL_CERT_FILE", self.empty_certs.path().join("none.pem"));
        if let Some(m) = &prefix.modules_dir {
            cmd.env("OPENSSL_MODULES", m);
        }
        cmd.arg("-t").args(&cp.options);
        if cp.certs {
            cmd.arg(&self.certs);
        }
        cmd.arg(threads.to_string());
        Ok(cmd)
    }

    /// Run `cmd` and read its terse figure.
    fn calls(&self, cmd: &mut Command, cp: &Counterpart, threads: usize) -> Result<Calls> {
        let line = format!("{cmd:?}");
        let out = cmd
            .output()
            .with_context(|| format!("cannot run perftools' {}", cp.program))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let first: Option<f64> = stdout
            .split_whitespace()
            .nth(cp.column)
            .and_then(|w| w.parse().ok());
        match first {
            Some(us) if out.status.success() && us > 0.0 => Ok(Calls::from_figure(us, threads)),
            _ => bail!(
                "perftools' {} gave no number ({}): {} {}\n  command: {line}",
                cp.program,
                out.status,
                stdout.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        }
    }
}

/// perflib's thread entry point: every perftools program runs its operation loop in threads
/// started through it.
const PERFTOOLS_THREAD_FN: &str = "thread_run";

/// The run window of every perftools program we drive: 5 s compiled in (RUN_TIME), and
/// pkeyread's `-T 5`.
const PERFTOOLS_WINDOW_US: f64 = 5e6;

/// What one perftools run reported.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Calls {
    us_per_call: f64,
    /// Calls of all threads: perftools prints window × threads / calls.
    total: u64,
}

impl Calls {
    fn from_figure(us_per_call: f64, threads: usize) -> Self {
        Calls {
            us_per_call,
            total: (PERFTOOLS_WINDOW_US * threads as f64 / us_per_call).round() as u64,
        }
    }
}

fn hash_tree(root: &Path, dir: &Path, h: &mut Hasher) -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .collect::<std::io::Result<_>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        if p.is_dir() {
            hash_tree(root, &p, h)?;
        } else if p.is_file() {
            let rel = p.strip_prefix(root).unwrap_or(&p).display().to_string();
            h.field(&rel).field(&hashing::file_sha256(&p)?);
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst)?;
        } else if src.is_file() {
            std::fs::copy(&src, &dst).with_context(|| format!("cannot copy {}", src.display()))?;
        }
    }
    Ok(())
}

/// Copy, configure and build in a scratch directory, then move it into place, so an interrupted
/// or failed build never leaves a half-built entry.
fn build_into(source: &Path, dir: &Path, prefix: &Prefix, jobs: usize) -> Result<()> {
    let scratch = dir.with_extension("tmp");
    let _ = std::fs::remove_dir_all(&scratch);
    let src = scratch.join("source");
    copy_tree(source, &src)?;
    let build = scratch.join("build");
    let log_path = scratch.join("build.log");
    let mut log = String::new();
    let steps: [Vec<String>; 2] = [
        vec![
            "-S".into(),
            src.display().to_string(),
            "-B".into(),
            build.display().to_string(),
            "-DCMAKE_BUILD_TYPE=Release".into(),
            format!("-DOPENSSL_ROOT_DIR={}", prefix.root.display()),
        ],
        vec![
            "--build".into(),
            build.display().to_string(),
            "-j".into(),
            jobs.to_string(),
        ],
    ];
    for args in steps {
        let out = Command::new("cmake")
            .args(&args)
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .context("cannot run cmake (install it: apt-get install cmake)")?;
        log.push_str(&String::from_utf8_lossy(&out.stdout));
        log.push_str(&String::from_utf8_lossy(&out.stderr));
        std::fs::write(&log_path, &log)?;
        if !out.status.success() {
            bail!(
                "building perftools against {} failed: cmake {} ({}); see {}",
                prefix.label,
                args.join(" "),
                out.status,
                log_path.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::rename(&scratch, dir)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::kernel::Registry;

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
}
