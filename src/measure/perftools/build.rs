//! Building a perftools checkout against one OpenSSL prefix, in the cache.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::Perftools;
use crate::build::prefix::Prefix;
use crate::cache::Cache;
use crate::hashing::{self, Hasher};

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
