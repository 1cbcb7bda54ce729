//! Building one OpenSSL source tree with a resolved recipe: out-of-tree
//! `config`, `make -jN`, and an install of only what a benchmark needs
//! (libraries, headers, engines and provider modules).
//!
//! The caller owns the directories: it provides an empty build directory and a
//! staging install prefix, and publishes the prefix (atomic rename) when this
//! returns `Ok`. Everything the steps print goes to the log file, and each line
//! is also handed to the caller as a [`BuildEvent::Line`] for progress display.
//!
//! Paths compiled into the libraries: OpenSSL bakes its prefix into every
//! object file (`-DOPENSSLDIR=…`, `-DENGINESDIR=…`, and `MODULESDIR` on 3.x).
//! A per-build prefix would make every compilation differ and defeat ccache,
//! and would point at a staging directory that no longer exists after the
//! rename. So every build is configured with the same, non-existent
//! [`CONFIGURED_PREFIX`] and installed with `make DESTDIR=…` into the staging
//! directory. Consequences for whoever loads these libraries: there is no
//! default config file, engines or modules directory; set `OPENSSL_CONF`,
//! `OPENSSL_MODULES` (`<prefix>/lib/ossl-modules`) and `OPENSSL_ENGINES`
//! (`<prefix>/lib/engines-*`) explicitly, which is what a measurement wants
//! anyway. The installed `.pc` files name the configured prefix.
//!
//! Environment: the steps inherit the caller's environment except variables
//! that would silently change the build: the compiler and flag variables
//! OpenSSL's Configure reads (`CC`, `CFLAGS`, `LDFLAGS`, …, see
//! [`SCRUBBED_ENV`]) and make's (`MAKEFLAGS`, `MFLAGS`, …). The compiler is
//! given explicitly as `CC=<compiler>` on the config command line, where
//! `<compiler>` is [`compiler::command`] (`$CC` or `cc`), the same compiler that
//! [`compiler::id`] fingerprints; with ccache it is
//! `CC=ccache <compiler>`. The recipe's `env` is applied last.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Instant;

use anyhow::{bail, Context, Result};

use crate::build::compiler;
use crate::build::configured;
use crate::build::install::{self, install_from_build_tree, move_installed};
use crate::build::installed;
use crate::build::makefile::Makefile;
use crate::build::recipe::ResolvedRecipe;
use crate::build::restat;

/// Environment variables removed before running config and make: those
/// OpenSSL's Configure/config read (they would override the recipe and the
/// compiler that is fingerprinted), and make's own.
pub const SCRUBBED_ENV: &[&str] = &[
    "CC",
    "CXX",
    "CPP",
    "CFLAGS",
    "CXXFLAGS",
    "CPPFLAGS",
    "LDFLAGS",
    "LDLIBS",
    "AR",
    "ARFLAGS",
    "AS",
    "ASFLAGS",
    "LD",
    "RANLIB",
    "RC",
    "WINDRES",
    "RCFLAGS",
    "NM",
    "OBJCOPY",
    "PERL",
    "HASHBANGPERL",
    "CROSS_COMPILE",
    "CONFIG_OPTIONS",
    "KERNEL_BITS",
    "OPENSSL_LOCAL_CONFIG_DIR",
    "__CNF_CPPDEFINES",
    "__CNF_CPPINCLUDES",
    "__CNF_CPPFLAGS",
    "__CNF_CFLAGS",
    "__CNF_CXXFLAGS",
    "__CNF_LDFLAGS",
    "__CNF_LDLIBS",
    "DESTDIR",
    "MAKEFLAGS",
    "MFLAGS",
    "GNUMAKEFLAGS",
    "MAKELEVEL",
    "MAKEFILES",
    "MAKEOVERRIDES",
    "LD_LIBRARY_PATH",
];

/// The `--prefix` every build is configured with (see the module docs). It
/// must not exist, so nothing from the machine is picked up by default.
pub const CONFIGURED_PREFIX: &str = "/nonexistent/perfbisect-openssl";

/// `SOURCE_DATE_EPOCH` of every build. OpenSSL's util/mkbuildinf.pl embeds
/// the build time in libcrypto (`OpenSSL_version(OPENSSL_BUILT_ON)`) unless
/// this is set, so no two builds would be byte-identical. One constant for
/// every commit rather than each commit's own date: a commit that changes no
/// library source (only apps/, docs, tests) must give its parent's bytes, so
/// that identical binaries can be recognised by their hashes. 2000-01-01
/// 00:00:00 UTC: not 0 (mkbuildinf.pl reads `SOURCE_DATE_EPOCH || time()`),
/// and older than any OpenSSL that builds out of tree, so it never passes for
/// a real build date. Set for every step, overriding the caller's.
pub const SOURCE_DATE_EPOCH: &str = "946684800";

/// Lines of the log shown in an error message.
const TAIL_LINES: usize = 20;

/// The tree failed to build: config, make or install failed, or installed
/// something unusable. Such a failure belongs to the commit and is cached as
/// a failed build. Every other error of [`build`] (the log or the staging
/// directory cannot be written, make cannot be started, a step was killed
/// by a signal or interrupted) is perfbisect's or the machine's problem and
/// must not be cached as the commit's failure.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BuildFailed(pub String);

macro_rules! failed {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new(BuildFailed(format!($($arg)*))))
    };
}

mod configure;
mod make;
mod publish;
mod step;

use configure::*;
pub use make::SHARED_LIBS;
use make::*;
use publish::*;
use step::{append_to_log, run_step, tail};

/// After an interrupt, how long a build step gets to exit on SIGTERM before
/// its process group is killed.
const TERM_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

pub struct BuildRequest<'a> {
    /// The checked-out OpenSSL tree (not modified: the build is out of tree).
    pub src: &'a Path,
    /// An empty (or missing) directory for the build.
    pub build_dir: &'a Path,
    /// Staging install prefix (missing or empty); the caller renames it
    /// atomically afterwards.
    pub install_dir: &'a Path,
    pub recipe: &'a ResolvedRecipe,
    pub jobs: usize,
    /// Output of every step is appended here.
    pub log_path: &'a Path,
    /// Use ccache if it is on PATH.
    pub ccache: bool,
    /// ccache remote storage (CCACHE_REMOTE_STORAGE) for this build's
    /// compiler calls only: perfbisect's own environment is never changed.
    pub ccache_remote: Option<&'a str>,
    pub start: Start,
    /// Where configure's output is kept by its inputs (see configured), for an incremental
    /// build to reuse; `None`: configure always runs.
    pub configure_store: Option<&'a Path>,
}

/// What the build directory holds when a build starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Nothing: configure, then make everything.
    Clean,
    /// An earlier build of the same recipe and fingerprint, whose source
    /// tree was moved to this one's (only differing files rewritten): make
    /// rebuilds what depends on a change. Configure runs again when
    /// `reconfigure` (its inputs changed) or when it would run with other
    /// arguments than that build's.
    Incremental { reconfigure: bool },
}

/// A phase of a build, as its events, log lines and errors name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Configure,
    Make,
    Install,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Configure => "configure",
            Phase::Make => "make",
            Phase::Install => "install",
        }
    }
}

impl std::fmt::Display for Phase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildEvent {
    /// A phase starts.
    Phase(Phase),
    /// The latest line of output.
    Line(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct CcacheStats {
    pub hits: u64,
    pub misses: u64,
    /// Hits served by ccache's remote storage (a team's shared cache).
    pub remote_hits: u64,
    /// hits / (hits + misses), 0 when there was nothing to cache.
    pub hit_rate: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BuildReport {
    pub configure_secs: f64,
    pub make_secs: f64,
    pub install_secs: f64,
    pub total_secs: f64,
    /// The make targets built (the recipe's, plus build_modules/build_engines).
    pub make_targets: Vec<String>,
    /// The install targets used (install_dev, and install_engines /
    /// install_modules where this version's Makefile has them).
    pub install_targets: Vec<String>,
    /// Set when `make install` failed (the reason) and what a kernel loads
    /// was taken from the build tree instead.
    pub install_fallback: Option<String>,
    /// `None` when ccache was not used.
    pub ccache: Option<CcacheStats>,
    /// Whether configure ran (always, for a clean build).
    pub configured: bool,
    /// Objects a configure-again build kept (see restat); `None` when it did not configure
    /// again.
    pub kept: Option<usize>,
}

/// Builds `req.src` into `req.install_dir`. See the module documentation.
pub fn build(req: &BuildRequest, on_event: &mut dyn FnMut(BuildEvent)) -> Result<BuildReport> {
    let started = Instant::now();
    let src = absolute(req.src)?;
    let build_dir = absolute(req.build_dir)?;
    let install_dir = absolute(req.install_dir)?;
    prepare_dirs(req, &src, &build_dir, &install_dir)?;
    let log = open_log(req.log_path)?;
    let jobs = req.jobs.max(1);
    let tools = Toolchain::new(req, &src, &build_dir)?;
    let header = tools.log_header(req, &src);
    let mut steps = Steps {
        build_dir: &build_dir,
        env: tools.env,
        log,
        log_path: req.log_path,
        on_event,
    };
    steps.note(&header);

    let configured = ConfigureCall::new(req, &src, &build_dir, &tools.cc)
        .configure(req, &src, &build_dir, &mut steps)?;
    let (configure, configure_secs) = (configured.ran, configured.secs);

    let make = MakePlan::read(req, &build_dir, &mut steps)?;
    let (make_secs, kept) = make.run(req, configured.snapshot.as_ref(), jobs, &mut steps)?;

    let t = Instant::now();
    let publish = Publish {
        src: &src,
        build_dir: &build_dir,
        install_dir: &install_dir,
        log_path: req.log_path,
        targets: &make.targets,
        clashes: &make.clashes,
    };
    let (install_targets, install_fallback) =
        publish.install(make.from_tree, &make.makefile, &mut steps)?;
    let install_secs = t.elapsed().as_secs_f64();
    check_published(&install_dir, req.log_path)?;

    let ccache = tools
        .ccache_bin
        .as_ref()
        .map(|_| read_stats_log(&tools.stats_log));
    let total_secs = started.elapsed().as_secs_f64();
    steps.note(&format!(
        "### perfbisect: built in {total_secs:.1}s (configure {configure_secs:.1}s, make {make_secs:.1}s, install {install_secs:.1}s){}",
        ccache_summary(&ccache)
    ));
    Ok(BuildReport {
        configure_secs,
        make_secs,
        install_secs,
        total_secs,
        make_targets: make.steps,
        install_targets,
        install_fallback,
        ccache,
        configured: configure,
        kept,
    })
}

/// Refuses a tree that is not OpenSSL's and a build directory that does not hold what
/// `req.start` says; the install directory is made empty.
fn prepare_dirs(
    req: &BuildRequest,
    src: &Path,
    build_dir: &Path,
    install_dir: &Path,
) -> Result<()> {
    if !src.join("config").is_file() {
        failed!(
            "{} does not look like an OpenSSL source tree (no config)",
            src.display()
        );
    }
    match req.start {
        Start::Clean => prepare_empty_dir(build_dir, "build directory")?,
        Start::Incremental { .. } => {
            if !build_dir.join("Makefile").is_file() {
                bail!("{} holds no earlier build to continue", build_dir.display());
            }
        }
    }
    prepare_empty_dir(install_dir, "install directory")
}

fn open_log(log_path: &Path) -> Result<File> {
    if let Some(parent) = log_path.parent() {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path)
        .with_context(|| format!("opening build log {}", log_path.display()))
}

/// The compiler command and the environment every step runs with, ccache's included.
struct Toolchain {
    /// `CC=` of the config command line.
    cc: Vec<String>,
    ccache_bin: Option<PathBuf>,
    /// Where ccache counts this build's hits and misses.
    stats_log: PathBuf,
    env: Vec<(String, OsString)>,
}

impl Toolchain {
    /// The log's first line: what is built, how, and whether ccache is used.
    fn log_header(&self, req: &BuildRequest, src: &Path) -> String {
        format!(
            "### perfbisect build of {} with recipe {} (fingerprint {}), SOURCE_DATE_EPOCH={SOURCE_DATE_EPOCH}, ccache {}",
            src.display(),
            req.recipe.name,
            req.recipe.fingerprint,
            match &self.ccache_bin {
                Some(b) => format!("on ({})", b.display()),
                None if req.ccache => "requested but not found on PATH".into(),
                None => "off".into(),
            }
        )
    }

    fn new(req: &BuildRequest, src: &Path, build_dir: &Path) -> Result<Toolchain> {
        let mut cc = compiler::command();
        let ccache_bin = if req.ccache {
            find_on_path("ccache")
        } else {
            None
        };
        let stats_log = build_dir.join(".perfbisect-ccache-stats.log");
        // An earlier build's counts are not this build's.
        if stats_log.exists() {
            fs::remove_file(&stats_log)
                .with_context(|| format!("removing {}", stats_log.display()))?;
        }
        let mut env: Vec<(String, OsString)> = vec![
            ("LC_ALL".into(), "C".into()),
            ("SOURCE_DATE_EPOCH".into(), SOURCE_DATE_EPOCH.into()),
        ];
        if let Some(bin) = &ccache_bin {
            let already = Path::new(&cc[0]).file_name().is_some_and(|n| n == "ccache");
            if !already {
                cc.insert(0, bin.display().to_string());
            }
            env.push((
                "CCACHE_BASEDIR".into(),
                common_ancestor(src, build_dir).into_os_string(),
            ));
            env.push(("CCACHE_NOHASHDIR".into(), "1".into()));
            env.push(("CCACHE_STATSLOG".into(), stats_log.clone().into_os_string()));
            if let Some(url) = req.ccache_remote {
                env.push(("CCACHE_REMOTE_STORAGE".into(), url.into()));
            }
        }
        for (k, v) in &req.recipe.env {
            env.push((k.clone(), v.into()));
        }
        Ok(Toolchain {
            cc,
            ccache_bin,
            stats_log,
            env,
        })
    }
}

/// The steps of one build: one environment, one log, one listener for the events.
struct Steps<'a> {
    build_dir: &'a Path,
    env: Vec<(String, OsString)>,
    log: File,
    log_path: &'a Path,
    on_event: &'a mut dyn FnMut(BuildEvent),
}

impl Steps<'_> {
    /// Runs one step in the build directory and returns how long it took. `announce`: emit
    /// BuildEvent::Phase (false for a further make of the same phase).
    fn run(
        &mut self,
        phase: Phase,
        announce: bool,
        program: &Path,
        args: &[String],
    ) -> Result<f64> {
        let t = Instant::now();
        let mut cmd = Command::new(program);
        cmd.args(args).current_dir(self.build_dir);
        for k in SCRUBBED_ENV {
            cmd.env_remove(k);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        run_step(
            phase,
            announce,
            &mut cmd,
            &mut self.log,
            self.log_path,
            self.on_event,
        )?;
        let secs = t.elapsed().as_secs_f64();
        // Where a build's time goes, step by step (the summary line adds them per phase).
        self.note(&format!("### perfbisect: {phase} step took {secs:.1}s"));
        Ok(secs)
    }

    /// A line of perfbisect's own in the log. Not checked: a log that cannot be written fails
    /// the next step.
    fn note(&mut self, line: &str) {
        let _ = writeln!(self.log, "{line}");
    }
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p).with_context(|| format!("resolving {}", p.display()))
}

fn prepare_empty_dir(dir: &Path, what: &str) -> Result<()> {
    if dir.exists() {
        let mut entries =
            fs::read_dir(dir).with_context(|| format!("reading {what} {}", dir.display()))?;
        if entries.next().is_some() {
            bail!("{what} {} is not empty", dir.display());
        }
    } else {
        fs::create_dir_all(dir).with_context(|| format!("creating {what} {}", dir.display()))?;
    }
    Ok(())
}

fn find_on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The deepest directory containing both `a` and `b` (both absolute).
fn common_ancestor(a: &Path, b: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for (x, y) in a.components().zip(b.components()) {
        if x != y {
            break;
        }
        out.push(x);
    }
    out
}

fn ccache_summary(ccache: &Option<CcacheStats>) -> String {
    match ccache {
        Some(c) => format!(
            ", ccache {} hits / {} misses ({:.0}%)",
            c.hits,
            c.misses,
            c.hit_rate * 100.0
        ),
        None => String::new(),
    }
}

/// Counts hits and misses in a ccache stats log (`CCACHE_STATSLOG`): one
/// `# file` line per compilation followed by its counter names.
fn read_stats_log(path: &Path) -> CcacheStats {
    let text = fs::read_to_string(path).unwrap_or_default();
    parse_stats_log(&text)
}

fn parse_stats_log(text: &str) -> CcacheStats {
    let mut hits = 0;
    let mut misses = 0;
    let mut remote_hits = 0;
    for l in text.lines().map(str::trim) {
        match l {
            "direct_cache_hit" | "preprocessed_cache_hit" => hits += 1,
            "cache_miss" => misses += 1,
            "remote_storage_hit" => remote_hits += 1,
            _ => {}
        }
    }
    let total = hits + misses;
    CcacheStats {
        hits,
        misses,
        remote_hits,
        hit_rate: if total == 0 {
            0.0
        } else {
            hits as f64 / total as f64
        },
    }
}

#[cfg(test)]
mod tests;
