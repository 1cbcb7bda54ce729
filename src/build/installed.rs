//! What a published prefix holds for a kernel to load — libcrypto, libssl, provider modules
//! and engines — their hashes, and the check a build must pass before it is called good:
//! every one of them loads with `RTLD_NOW`, and libcrypto and libssl export what the kernels
//! call. A build that publishes a stub under a real library's name (issue 29: on the TLS
//! record-layer series of 2022 master a 14,832-byte `ssl/record/libssl.so.3` with no symbols
//! was copied over the real `libssl.so.3`) fails here, as a failed build of its commit, instead
//! of in every kernel that runs on it.
//!
//! The check runs in a child process compiled from `loadcheck.c`, which links only libc: the
//! process that loads kernels must never have an OpenSSL mapped (it would bind every later
//! kernel to it), and a library's constructors run when it loads.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use wait_timeout::ChildExt;

use crate::build::compiler;
use crate::hashing;

/// Bumped whenever what a build must pass changes: entries checked by an older rule are
/// checked again when they are next used (see builds::read_entry).
pub const CHECK_VERSION: u32 = 1;

/// What every kernel needs of each library, on every version perfbisect builds (1.1.0 on):
/// `kernels/perfbisect.h`'s version and error calls, and the SSL object and methods of
/// the TLS kernels. A kernel that needs more finds out when it is compiled against the build
/// (measure::compile), and reports the missing symbol as this build's problem.
const REQUIRED: &[(&str, &[&str])] = &[
    (
        "libcrypto",
        &[
            "OpenSSL_version",
            "ERR_peek_last_error",
            "ERR_error_string_n",
            "ERR_clear_error",
        ],
    ),
    (
        "libssl",
        &[
            "SSL_CTX_new",
            "SSL_new",
            "SSL_free",
            "TLS_server_method",
            "TLS_client_method",
        ],
    ),
];

/// Killed after this long: loading a few libraries takes milliseconds.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Why a published prefix is not a usable OpenSSL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// `dlopen(RTLD_NOW)` failed: an undefined symbol, a missing dependency.
    DoesNotLoad { file: String, error: String },
    /// The library loads but does not define the symbol.
    Missing { file: String, symbol: String },
    /// The prefix holds no such library at all.
    NoLibrary { library: String },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::DoesNotLoad { file, error } => write!(f, "{file} does not load ({error})"),
            Problem::Missing { file, symbol } => write!(f, "{file} exports no {symbol}"),
            Problem::NoLibrary { library } => write!(f, "lib/ holds no {library}.so*"),
        }
    }
}

/// The files of `prefix` a kernel loads, relative to it, in load order: libcrypto, libssl,
/// then provider modules (`lib/ossl-modules/*.so`) and engines (`lib/engines-*/*.so`), which
/// link libcrypto. Symbolic links are left out: they name files that are listed already.
pub fn binaries(prefix: &Path) -> Result<Vec<String>> {
    let lib = prefix.join("lib");
    let mut out = Vec::new();
    for name in ["libcrypto.so", "libssl.so"] {
        out.extend(files_in(prefix, &lib, &|n| n.starts_with(name))?);
    }
    let mut subdirs: Vec<PathBuf> = fs::read_dir(&lib)
        .with_context(|| format!("cannot read {}", lib.display()))?
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            (n == "ossl-modules" || n.starts_with("engines-")) && e.path().is_dir()
        })
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for d in subdirs {
        out.extend(files_in(prefix, &d, &|n| n.ends_with(".so"))?);
    }
    Ok(out)
}

/// Regular files of `dir` whose name `keep`s, relative to `prefix`, sorted.
fn files_in(prefix: &Path, dir: &Path, keep: &dyn Fn(&str) -> bool) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let e = e.with_context(|| format!("cannot read {}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if keep(&name) && e.file_type()?.is_file() {
            let rel = e
                .path()
                .strip_prefix(prefix)
                .expect("under the prefix")
                .to_owned();
            out.push(rel.to_string_lossy().into_owned());
        }
    }
    out.sort();
    Ok(out)
}

/// sha256 of each of [`binaries`], by path relative to the prefix
/// (`lib/libcrypto.so.3`, `lib/ossl-modules/legacy.so`, …).
pub fn hashes(prefix: &Path) -> Result<BTreeMap<String, String>> {
    binaries(prefix)?
        .into_iter()
        .map(|rel| Ok((rel.clone(), hashing::file_sha256(&prefix.join(&rel))?)))
        .collect()
}

/// Loads every one of `prefix`'s [`binaries`] in a child and looks up the [`REQUIRED`]
/// symbols. `Ok(problems)`: empty when the prefix is usable. `Err`: the check itself could
/// not run (no compiler, a killed child), which says nothing about the build.
pub fn check(prefix: &Path) -> Result<Vec<Problem>> {
    let prefix = prefix
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", prefix.display()))?;
    let files = binaries(&prefix)?;
    let mut args: Vec<String> = Vec::new();
    for rel in &files {
        args.extend(["L".to_string(), prefix.join(rel).display().to_string()]);
    }
    let mut problems = Vec::new();
    for (library, symbols) in REQUIRED {
        let Some(rel) = files.iter().find(|f| is_library(f, library)) else {
            problems.push(Problem::NoLibrary {
                library: library.to_string(),
            });
            continue;
        };
        for s in *symbols {
            let path = prefix.join(rel).display().to_string();
            args.extend(["S".to_string(), path, s.to_string()]);
        }
    }
    let tmp = tempfile::tempdir().context("creating a directory for the load check")?;
    let exe = compile_helper(tmp.path())?;
    let out = run_helper(&exe, &args, &prefix, tmp.path())?;
    problems.extend(parse_report(&out, &prefix));
    Ok(problems)
}

/// `lib/libssl.so.3` is libssl; `lib/libssl.so` would be too, but links are not listed.
fn is_library(rel: &str, library: &str) -> bool {
    rel.strip_prefix("lib/")
        .and_then(|n| n.strip_prefix(library))
        .is_some_and(|rest| rest.starts_with(".so"))
}

fn compile_helper(dir: &Path) -> Result<PathBuf> {
    let src = dir.join("loadcheck.c");
    fs::write(&src, include_str!("loadcheck.c"))
        .with_context(|| format!("writing {}", src.display()))?;
    let exe = dir.join("loadcheck");
    let cc = compiler::program();
    let out = Command::new(&cc[0])
        .args(&cc[1..])
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-ldl")
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .with_context(|| format!("cannot run the compiler {}", cc.join(" ")))?;
    if !out.status.success() {
        bail!(
            "cannot compile the load check with {}: {}",
            cc.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(exe)
}

/// Runs the helper in an environment where nothing but `prefix` can be loaded: no library
/// path, no preloads, an empty configuration file, the modules of the prefix.
fn run_helper(exe: &Path, args: &[String], prefix: &Path, tmp: &Path) -> Result<String> {
    let conf = tmp.join("openssl.cnf");
    fs::write(&conf, "").with_context(|| format!("writing {}", conf.display()))?;
    // Both to files: a library's constructor that prints much cannot fill a pipe nobody
    // reads until the child exits.
    let out_path = tmp.join("report");
    let out_file = fs::File::create(&out_path)?;
    let err_path = tmp.join("stderr");
    let err_file = fs::File::create(&err_path)?;
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("OPENSSL_CONF", &conf)
        .env("OPENSSL_MODULES", prefix.join("lib/ossl-modules"))
        .stdin(Stdio::null())
        .stdout(out_file)
        .stderr(err_file);
    let mut child = cmd.spawn().context("cannot start the load check")?;
    let status = match child.wait_timeout(TIMEOUT)? {
        Some(s) => s,
        None => {
            child.kill().ok();
            child.wait().ok();
            bail!("the load check of {} hung; killed", prefix.display());
        }
    };
    let report = fs::read_to_string(&out_path).unwrap_or_default();
    match status.code() {
        Some(0) | Some(1) => Ok(report),
        _ => {
            let err = fs::read_to_string(&err_path).unwrap_or_default();
            // A library whose constructor crashes is the build's problem, like one that does
            // not load; anything else is the check's.
            let dying = report
                .lines()
                .filter_map(|l| l.strip_prefix("loading "))
                .next_back();
            match (status.code(), dying) {
                (None, Some(file)) => Ok(format!(
                    "{report}load {file}: {file}: the process died loading it ({status})\n"
                )),
                _ => bail!("the load check failed ({status}): {}", err.trim()),
            }
        }
    }
}

fn parse_report(text: &str, prefix: &Path) -> Vec<Problem> {
    let rel = |p: &str| {
        Path::new(p)
            .strip_prefix(prefix)
            .map(|r| r.display().to_string())
            .unwrap_or_else(|_| p.to_string())
    };
    text.lines()
        .filter_map(|l| {
            if let Some(rest) = l.strip_prefix("load ") {
                let (file, error) = rest.split_once(": ").unwrap_or((rest, ""));
                let error = error.strip_prefix(&format!("{file}: ")).unwrap_or(error);
                Some(Problem::DoesNotLoad {
                    file: rel(file),
                    error: error.to_string(),
                })
            } else {
                let rest = l.strip_prefix("symbol ")?;
                let (file, symbol) = rest.rsplit_once(' ')?;
                Some(Problem::Missing {
                    file: rel(file),
                    symbol: symbol.to_string(),
                })
            }
        })
        .collect()
}

/// The problems as one line, for a build's error and log; the symbols one file lacks are
/// listed together (`lib/libssl.so.3 exports no SSL_CTX_new, SSL_new`).
pub fn summary(problems: &[Problem]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut last_missing: Option<&str> = None;
    for p in problems {
        match p {
            Problem::Missing { file, symbol } if last_missing == Some(file.as_str()) => {
                let last = parts.last_mut().expect("a part for this file");
                last.push_str(&format!(", {symbol}"));
            }
            Problem::Missing { file, .. } => {
                parts.push(p.to_string());
                last_missing = Some(file);
            }
            Problem::DoesNotLoad { .. } | Problem::NoLibrary { .. } => {
                parts.push(p.to_string());
                last_missing = None;
            }
        }
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_helpers_report_reads_back_as_problems() {
        let prefix = Path::new("/c/builds/x/prefix");
        let report = "loading /c/builds/x/prefix/lib/libcrypto.so.3\n\
                      symbol /c/builds/x/prefix/lib/libcrypto.so.3 ERR_clear_error\n\
                      symbol /c/builds/x/prefix/lib/libcrypto.so.3 OpenSSL_version\n\
                      loading /c/builds/x/prefix/lib/ossl-modules/legacy.so\n\
                      load /c/builds/x/prefix/lib/ossl-modules/legacy.so: /c/builds/x/prefix/lib/ossl-modules/legacy.so: undefined symbol: ossl_foo\n\
                      symbol /c/builds/x/prefix/lib/libssl.so.3 TLS_server_method\n";
        let p = parse_report(report, prefix);
        assert_eq!(
            summary(&p),
            "lib/libcrypto.so.3 exports no ERR_clear_error, OpenSSL_version; \
             lib/ossl-modules/legacy.so does not load (undefined symbol: ossl_foo); \
             lib/libssl.so.3 exports no TLS_server_method"
        );
    }

    #[test]
    fn libraries_are_loaded_before_what_links_them() {
        let d = tempfile::tempdir().unwrap();
        let lib = d.path().join("lib");
        for f in [
            "libssl.so.3",
            "libcrypto.so.3",
            "ossl-modules/legacy.so",
            "engines-3/afalg.so",
            "libcrypto.a",
        ] {
            let p = lib.join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, f).unwrap();
        }
        std::os::unix::fs::symlink("libssl.so.3", lib.join("libssl.so")).unwrap();
        assert_eq!(
            binaries(d.path()).unwrap(),
            [
                "lib/libcrypto.so.3",
                "lib/libssl.so.3",
                "lib/engines-3/afalg.so",
                "lib/ossl-modules/legacy.so"
            ]
        );
        assert!(is_library("lib/libssl.so.3", "libssl"));
        assert!(!is_library("lib/libssl3.so", "libssl"));
    }

    /// The system's OpenSSL passes; a file that is not a library, or one without the calls,
    /// does not.
    #[test]
    fn check_of_real_libraries() {
        // Debian 12's libssl3, which scripts/setup's libssl-dev depends on.
        let sys = Path::new("/usr/lib/x86_64-linux-gnu");
        let d = tempfile::tempdir().unwrap();
        let lib = d.path().join("lib");
        fs::create_dir_all(&lib).unwrap();
        for f in ["libcrypto.so.3", "libssl.so.3"] {
            fs::copy(sys.join(f), lib.join(f)).unwrap();
        }
        assert_eq!(check(d.path()).unwrap(), []);
        fs::copy(sys.join("libcrypto.so.3"), lib.join("libssl.so.3")).unwrap();
        let p = check(d.path()).unwrap();
        assert!(
            summary(&p).starts_with("lib/libssl.so.3 exports no SSL_CTX_new"),
            "{p:?}"
        );
        fs::remove_file(lib.join("libssl.so.3")).unwrap();
        assert_eq!(
            summary(&check(d.path()).unwrap()),
            "lib/ holds no libssl.so*"
        );
        fs::write(lib.join("libssl.so.3"), "not a library").unwrap();
        let p = check(d.path()).unwrap();
        assert!(
            matches!(&p[0], Problem::DoesNotLoad { file, .. } if file == "lib/libssl.so.3"),
            "{p:?}"
        );
    }
}
