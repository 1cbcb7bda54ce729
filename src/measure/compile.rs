//! Compile a kernel into a shared object bound (by rpath) to one OpenSSL.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};

use crate::build::compiler;
use crate::build::prefix::Prefix;
use crate::cache::{self, Cache};
use crate::hashing::{self, Hasher};
use crate::measure::kernel::{self, Kernel};

/// Bumped whenever the flags below change, so old objects are not reused.
const COMPILE_SCHEME: &str = "2";

/// The second translation unit of every kernel object: the header's runtime
/// part (identity functions, weak default hooks). In the kernel's own unit a
/// weak default would clash with the kernel's definition instead of
/// yielding to it at link time.
const RUNTIME_NAME: &str = "perfbisect-runtime.c";
const RUNTIME_SOURCE: &str = "#define PB_RUNTIME\n#include \"perfbisect.h\"\n";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompiledKernel {
    pub so: PathBuf,
    pub sha256: String,
}

#[derive(Serialize, Deserialize)]
struct Meta {
    kernel: String,
    prefix: String,
    lib_dir: PathBuf,
    compiler: String,
    sha256: String,
}

fn build_tool() -> cc::Build {
    let target = env!("PERFBISECT_TARGET");
    let mut b = cc::Build::new();
    // The compiler that builds OpenSSL, so that one identity (compiler::id)
    // describes every object perfbisect makes.
    let program = compiler::program();
    b.compiler(&program[0]);
    for flag in &program[1..] {
        b.flag(flag);
    }
    // cc is made for build scripts: without these it reads Cargo's variables
    // and prints cargo: lines on stdout.
    b.target(target)
        .host(target)
        .opt_level(2)
        .debug(false)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .cargo_debug(false)
        .pic(true)
        .warnings(false);
    b
}

/// The shared object for `kernel` against `prefix`, compiled once per
/// (kernel source, header, OpenSSL identity, compiler).
pub fn compile(cache: &Cache, kernel: &Kernel, prefix: &Prefix) -> Result<CompiledKernel> {
    let key = {
        let mut h = Hasher::new();
        h.field(COMPILE_SCHEME)
            .field(&kernel.source)
            .field(kernel::header_source())
            .field(RUNTIME_SOURCE)
            .field(&prefix.identity()?)
            .field(compiler::id());
        h.finish_short()
    };
    let kdir = cache.dir("kernels")?;
    let entry = kdir.join(format!("{}-{key}", kernel.name));
    if let Some(k) = read_entry(&entry)? {
        return Ok(k);
    }
    let _lock = cache.lock(&format!("kernel-{}-{key}", kernel.name))?;
    if let Some(k) = read_entry(&entry)? {
        return Ok(k);
    }
    if entry.exists() {
        // Damaged (missing object or wrong hash): rebuild rather than trust it.
        fs::remove_dir_all(&entry)
            .with_context(|| format!("cannot remove damaged {}", entry.display()))?;
    }
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".tmp-{}-", kernel.name))
        .tempdir_in(&kdir)?;
    let src = tmp.path().join(format!("{}.c", kernel.name));
    fs::write(&src, &kernel.source)?;
    fs::write(
        tmp.path().join(kernel::HEADER_NAME),
        kernel::header_source(),
    )?;
    fs::write(tmp.path().join(RUNTIME_NAME), RUNTIME_SOURCE)?;
    let so = tmp.path().join("kernel.so");
    let log = tmp.path().join("compile.log");
    run_compiler(kernel, prefix, tmp.path(), &src, &so, &log).with_context(|| {
        format!(
            "compiling kernel {} ({}) against {} ({}) failed",
            kernel.name,
            kernel.origin.display(),
            prefix.label,
            prefix.root.display()
        )
    })?;
    let sha256 = hashing::file_sha256(&so)?;
    let meta = Meta {
        kernel: kernel.name.clone(),
        prefix: prefix.label.clone(),
        lib_dir: prefix.lib_dir.clone(),
        compiler: compiler::id().to_string(),
        sha256: sha256.clone(),
    };
    cache::write_atomic(
        &tmp.path().join("meta.json"),
        serde_json::to_string_pretty(&meta)?.as_bytes(),
    )?;
    let tmp = tmp.keep();
    fs::rename(&tmp, &entry).with_context(|| format!("cannot publish {}", entry.display()))?;
    Ok(CompiledKernel {
        so: entry.join("kernel.so"),
        sha256,
    })
}

/// A published entry whose object still has the hash recorded at build time.
fn read_entry(entry: &Path) -> Result<Option<CompiledKernel>> {
    let meta_path = entry.join("meta.json");
    let so = entry.join("kernel.so");
    let Ok(text) = fs::read_to_string(&meta_path) else {
        return Ok(None);
    };
    let Ok(meta) = serde_json::from_str::<Meta>(&text) else {
        eprintln!(
            "perfbisect: warning: damaged kernel cache entry {} (bad meta.json), recompiling",
            entry.display()
        );
        return Ok(None);
    };
    match hashing::file_sha256(&so) {
        Ok(h) if h == meta.sha256 => Ok(Some(CompiledKernel {
            so,
            sha256: meta.sha256,
        })),
        _ => {
            eprintln!(
                "perfbisect: warning: kernel object {} is missing or altered, recompiling",
                so.display()
            );
            Ok(None)
        }
    }
}

fn run_compiler(
    kernel: &Kernel,
    prefix: &Prefix,
    workdir: &Path,
    src: &Path,
    so: &Path,
    log: &Path,
) -> Result<()> {
    let tool = build_tool()
        .try_get_compiler()
        .context("no C compiler found (install gcc, or set CC)")?;
    let mut cmd = tool.to_command();
    cmd.arg("-shared")
        .arg("-fvisibility=hidden")
        .arg("-Wall")
        .arg("-Wno-deprecated-declarations")
        .arg("-pthread")
        .arg(format!("-I{}", workdir.display()));
    for inc in &prefix.include_dirs {
        cmd.arg(format!("-I{}", inc.display()));
    }
    cmd.arg(src)
        .arg(workdir.join(RUNTIME_NAME))
        .arg("-o")
        .arg(so);
    cmd.arg(format!("-L{}", prefix.lib_dir.display()));
    // DT_RPATH rather than DT_RUNPATH: it also applies to libssl's own lookup
    // of libcrypto, so both come from the build under test.
    cmd.arg(format!("-Wl,-rpath,{}", prefix.lib_dir.display()))
        .arg("-Wl,--disable-new-dtags");
    if kernel.link_ssl {
        cmd.arg("-lssl");
    }
    cmd.arg("-lcrypto");
    let out = cmd
        .output()
        .with_context(|| format!("cannot run {}", tool.path().display()))?;
    let mut text = format!("{cmd:?}\n").into_bytes();
    text.extend_from_slice(&out.stdout);
    text.extend_from_slice(&out.stderr);
    fs::write(log, &text)?;
    if !out.status.success() {
        // Ctrl-C reaches the compiler too (same process group): that is an
        // interruption, not a kernel that does not compile.
        use std::os::unix::process::ExitStatusExt;
        if crate::interrupt::interrupted() || out.status.signal() == Some(libc::SIGINT) {
            return Err(crate::interrupt::Interrupted.into());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let first = stderr
            .lines()
            .find(|l| l.contains("error"))
            .or_else(|| stderr.lines().next())
            .unwrap_or("(no output)");
        bail!("{} (full log: {})", first.trim(), log.display());
    }
    Ok(())
}
