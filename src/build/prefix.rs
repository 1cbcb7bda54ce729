//! An installed OpenSSL: where its headers and libraries are, and what
//! identifies it (so compiled kernels are cached per library, not per path).

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::version::OpenSslVersion;
use crate::hashing::{self, Hasher};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Prefix {
    /// What the user named (a directory, "system", or a revision).
    pub label: String,
    pub root: PathBuf,
    /// Passed as -I; empty for the system OpenSSL, whose headers the compiler
    /// finds by itself (Debian splits them across multiarch directories).
    pub include_dirs: Vec<PathBuf>,
    pub lib_dir: PathBuf,
    pub libcrypto: PathBuf,
    pub modules_dir: Option<PathBuf>,
    pub engines_dir: Option<PathBuf>,
    /// OPENSSL_VERSION_TEXT from the headers, e.g. "OpenSSL 3.2.1 30 Jan 2024".
    pub header_version: String,
    /// The sha256 each file a kernel loads from it must have, by path under `root`: a cached
    /// build's record (its `binaries`), checked before every sample ([`Prefix::check_binaries`]),
    /// so a job on another node names the libraries it samples by content. Empty for a prefix
    /// perfbisect did not build and for builds made before it recorded them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub binaries: BTreeMap<String, String>,
}

impl Prefix {
    /// PREFIX must hold include/openssl/ and lib/ (or lib64/) with a shared libcrypto.
    pub fn from_dir(dir: &Path, label: &str) -> Result<Prefix> {
        if !dir.is_dir() {
            bail!("OpenSSL prefix {} is not a directory", dir.display());
        }
        let root = dir
            .canonicalize()
            .with_context(|| format!("cannot resolve {}", dir.display()))?;
        let include = root.join("include");
        let opensslv = include.join("openssl/opensslv.h");
        if !opensslv.is_file() {
            bail!(
                "OpenSSL prefix {} has no include/openssl/opensslv.h",
                root.display()
            );
        }
        let lib_dir = ["lib", "lib64"]
            .iter()
            .map(|d| root.join(d))
            .find(|d| find_shared(d, "libcrypto").is_some())
            .with_context(|| {
                format!(
                    "OpenSSL prefix {} has no shared libcrypto in lib/ or lib64/",
                    root.display()
                )
            })?;
        let libcrypto = find_shared(&lib_dir, "libcrypto").expect("checked above");
        Ok(Prefix {
            label: label.to_string(),
            modules_dir: existing(lib_dir.join("ossl-modules")),
            engines_dir: engines_in(&lib_dir),
            header_version: header_version(&opensslv)?,
            binaries: BTreeMap::new(),
            include_dirs: vec![include],
            root,
            lib_dir,
            libcrypto,
        })
    }

    /// The OpenSSL the system's pkg-config knows, else /usr.
    pub fn system() -> Result<Prefix> {
        let pc = |var: &str| -> Option<PathBuf> {
            let out = Command::new("pkg-config")
                .args([&format!("--variable={var}"), "libcrypto"])
                .output()
                .ok()?;
            let s = String::from_utf8(out.stdout).ok()?;
            let s = s.trim();
            (out.status.success() && !s.is_empty()).then(|| PathBuf::from(s))
        };
        let include = pc("includedir").unwrap_or_else(|| PathBuf::from("/usr/include"));
        let lib_dir = pc("libdir")
            .or_else(|| {
                ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"]
                    .iter()
                    .map(PathBuf::from)
                    .find(|d| find_shared(d, "libcrypto").is_some())
            })
            .context("no system OpenSSL found (install libssl-dev, or pass --openssl-dir)")?;
        let libcrypto = find_shared(&lib_dir, "libcrypto").with_context(|| {
            format!(
                "no shared libcrypto in {} (install libssl-dev, or pass --openssl-dir)",
                lib_dir.display()
            )
        })?;
        let opensslv = include.join("openssl/opensslv.h");
        if !opensslv.is_file() {
            bail!(
                "no OpenSSL headers at {} (install libssl-dev, or pass --openssl-dir)",
                opensslv.display()
            );
        }
        let lib_dir = lib_dir.canonicalize().unwrap_or(lib_dir);
        Ok(Prefix {
            label: "system".to_string(),
            root: include.parent().unwrap_or(Path::new("/")).to_path_buf(),
            include_dirs: Vec::new(),
            modules_dir: existing(lib_dir.join("ossl-modules")),
            engines_dir: engines_in(&lib_dir),
            header_version: header_version(&opensslv)?,
            binaries: BTreeMap::new(),
            lib_dir,
            libcrypto,
        })
    }

    /// Identity for caching compiled kernels: which library file, with
    /// which contents, and which headers.
    pub fn identity(&self) -> Result<String> {
        let mut h = Hasher::new();
        h.field(&self.lib_dir.to_string_lossy());
        h.field(&hashing::file_sha256(&self.libcrypto)?);
        h.field(&self.header_version);
        for d in &self.include_dirs {
            h.field(&d.to_string_lossy());
        }
        Ok(h.finish_short())
    }

    /// Every file of [`Prefix::binaries`] still has the sha256 its build recorded (one `stat`
    /// each once hashed in this process, see [`hashing::file_sha256_memo`]): a cache writable
    /// by others, or a build replaced under its key, cannot have a kernel sample another
    /// library than the one named.
    pub fn check_binaries(&self) -> Result<()> {
        for (rel, want) in &self.binaries {
            let path = self.root.join(rel);
            let have = hashing::file_sha256_memo(&path)
                .with_context(|| format!("checking the library {rel} of {}", self.label))?;
            if &have != want {
                bail!(
                    "the library {} of {} is not the file its build recorded (sha256 {} where the build's record says {}); refusing to sample it (perfbisect cache rm {} builds it again)",
                    path.display(),
                    self.label,
                    &have[..12],
                    &want[..want.len().min(12)],
                    self.label
                );
            }
        }
        Ok(())
    }

    /// Whether a library path reported by the loader lies inside this prefix.
    pub fn contains_library(&self, loaded: &Path) -> bool {
        let real = loaded
            .canonicalize()
            .unwrap_or_else(|_| loaded.to_path_buf());
        let lib = self
            .lib_dir
            .canonicalize()
            .unwrap_or_else(|_| self.lib_dir.clone());
        real.starts_with(lib)
    }

    /// The version its headers state; None if they state none perfbisect
    /// can read.
    pub fn version(&self) -> Option<OpenSslVersion> {
        OpenSslVersion::from_version_text(&self.header_version)
    }
}

fn existing(p: PathBuf) -> Option<PathBuf> {
    p.is_dir().then_some(p)
}

fn engines_in(lib: &Path) -> Option<PathBuf> {
    ["engines-3", "engines-1.1"]
        .iter()
        .map(|e| lib.join(e))
        .find(|p| p.is_dir())
}

/// libNAME.so or libNAME.so.VERSION in `dir`.
fn find_shared(dir: &Path, name: &str) -> Option<PathBuf> {
    let plain = dir.join(format!("{name}.so"));
    if plain.exists() {
        return Some(plain);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with(&format!("{name}.so.")))
        })
        .collect();
    found.sort();
    found.pop()
}

fn header_version(opensslv: &Path) -> Result<String> {
    let text = std::fs::read_to_string(opensslv)
        .with_context(|| format!("cannot read {}", opensslv.display()))?;
    for line in text.lines() {
        let l = line.trim_start_matches(['#', ' ']);
        if let Some(rest) = l.strip_prefix("define OPENSSL_VERSION_TEXT") {
            let rest = rest.trim();
            // 1.1.1: "OpenSSL 1.1.1w  11 Sep 2023"; 3.x: a literal as well once installed.
            if let Some(q) = rest.strip_prefix('"') {
                if let Some(end) = q.find('"') {
                    return Ok(q[..end].split_whitespace().collect::<Vec<_>>().join(" "));
                }
            }
        }
    }
    // 3.x source trees (not installed) compose it from parts.
    let field = |name: &str| -> Option<String> {
        text.lines().find_map(|l| {
            let l = l.trim_start_matches(['#', ' ']);
            let rest = l.strip_prefix("define ")?.trim_start();
            let rest = rest.strip_prefix(name)?;
            Some(rest.trim().trim_matches('"').to_string())
        })
    };
    if let (Some(a), Some(b), Some(c)) = (
        field("OPENSSL_VERSION_MAJOR"),
        field("OPENSSL_VERSION_MINOR"),
        field("OPENSSL_VERSION_PATCH"),
    ) {
        return Ok(format!("OpenSSL {a}.{b}.{c}"));
    }
    bail!("cannot find OPENSSL_VERSION_TEXT in {}", opensslv.display())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn prefix_without_headers_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = Prefix::from_dir(d.path(), "x").unwrap_err().to_string();
        assert!(e.contains("no include/openssl/opensslv.h"), "{e}");
    }

    /// A prefix of the shape a build installs, with stand-in files: `from_dir` reads only the
    /// version header and looks for the library's name.
    pub(crate) fn stand_in(dir: &Path) -> Prefix {
        fs::create_dir_all(dir.join("include/openssl")).unwrap();
        fs::create_dir_all(dir.join("lib")).unwrap();
        fs::write(
            dir.join("include/openssl/opensslv.h"),
            "# define OPENSSL_VERSION_TEXT \"OpenSSL 3.2.1 30 Jan 2024\"\n",
        )
        .unwrap();
        fs::write(dir.join("lib/libcrypto.so.3"), b"the library built").unwrap();
        let mut p = Prefix::from_dir(dir, "abc123").unwrap();
        p.binaries = crate::build::installed::hashes(&p.root).unwrap();
        p
    }

    #[test]
    fn a_library_is_checked_against_its_record() {
        let d = tempfile::tempdir().unwrap();
        let p = stand_in(d.path());
        assert_eq!(
            p.binaries.keys().collect::<Vec<_>>(),
            ["lib/libcrypto.so.3"]
        );
        p.check_binaries().unwrap();
        // Another library put in its place, even one of the same length.
        fs::write(d.path().join("lib/libcrypto.so.3"), b"the library swapped").unwrap();
        let e = p.check_binaries().unwrap_err().to_string();
        assert!(
            e.contains("lib/libcrypto.so.3 of abc123 is not the file its build recorded"),
            "{e}"
        );
        assert!(e.contains("refusing to sample it"), "{e}");
        // What a job reads from block.json names it by content too.
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(
            json["binaries"]["lib/libcrypto.so.3"],
            p.binaries["lib/libcrypto.so.3"]
        );
    }
}
