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

/// What [`ConfigureCall::configure`] did.
struct Configured {
    ran: bool,
    secs: f64,
    /// After configuring an earlier build again: what its build directory held before.
    snapshot: Option<restat::Snapshot>,
}

/// How configure runs for this build.
struct ConfigureCall {
    program: PathBuf,
    args: Vec<String>,
    /// What configure ran with, kept in the build directory: an incremental build configures
    /// again when it would run with anything else (a different compiler command, ccache
    /// installed since), since the Makefile and the compiled-in build information depend on
    /// it.
    record: PathBuf,
    with: String,
}

impl ConfigureCall {
    fn new(req: &BuildRequest, src: &Path, build_dir: &Path, cc: &[String]) -> ConfigureCall {
        let mut args = vec![
            format!("--prefix={CONFIGURED_PREFIX}"),
            format!("--openssldir={CONFIGURED_PREFIX}/ssl"),
            "--libdir=lib".to_string(),
        ];
        args.extend(req.recipe.configure_args.iter().cloned());
        args.push(format!("CC={}", cc.join(" ")));
        ConfigureCall {
            program: src.join("config"),
            with: args.join("\n"),
            args,
            record: build_dir.join(".perfbisect-configured"),
        }
    }

    /// Configures the tree where it must be (see [`ConfigureCall::needed`]).
    fn configure(
        &self,
        req: &BuildRequest,
        src: &Path,
        build_dir: &Path,
        steps: &mut Steps,
    ) -> Result<Configured> {
        let ran = self.needed(req.start);
        if !ran {
            steps.note(
                "### perfbisect: incremental build: configure inputs unchanged, not configuring again",
            );
        }
        // A configure-again build keeps what configure did not change (see restat): what the
        // build directory held before, to compare with.
        let snapshot = match req.start {
            Start::Incremental { .. } if ran => restat::Snapshot::take(build_dir)?,
            _ => None,
        };
        let secs = if ran {
            self.run(req, src, build_dir, steps)?
        } else {
            0.0
        };
        Ok(Configured {
            ran,
            secs,
            snapshot,
        })
    }

    fn needed(&self, start: Start) -> bool {
        match start {
            Start::Clean => true,
            Start::Incremental { reconfigure } => {
                reconfigure
                    || fs::read_to_string(&self.record).ok().as_deref() != Some(self.with.as_str())
            }
        }
    }

    /// Configures the build directory, or restores what configure made of the same inputs
    /// before (see configured), and records what it ran with. Returns configure's seconds.
    fn run(
        &self,
        req: &BuildRequest,
        src: &Path,
        build_dir: &Path,
        steps: &mut Steps,
    ) -> Result<f64> {
        fs::remove_file(&self.record).ok();
        let key = match req.configure_store {
            Some(_) => Some(configured::key(
                src,
                build_dir,
                &self.with,
                &req.recipe.fingerprint,
            )?),
            None => None,
        };
        let reused = match (req.start, req.configure_store, &key) {
            (Start::Incremental { .. }, Some(store), Some(key)) => {
                configured::restore(store, key, build_dir)?.map(|files| (store, files))
            }
            _ => None,
        };
        let secs = match reused {
            Some((store, files)) => {
                append_to_log(
                    req.log_path,
                    &format!(
                        "### perfbisect: configure not run: this tree was configured with the same inputs before; its output reused from {}: {}",
                        store.display(),
                        files.join(", ")
                    ),
                )?;
                0.0
            }
            None => {
                let before = configured::before(build_dir)?;
                let secs = steps.run(Phase::Configure, true, &self.program, &self.args)?;
                if let (Some(store), Some(key)) = (req.configure_store, &key) {
                    configured::save(store, key, build_dir, &before)?;
                }
                secs
            }
        };
        fs::write(&self.record, &self.with)
            .with_context(|| format!("writing {}", self.record.display()))?;
        Ok(secs)
    }
}

/// What make builds in a configured tree, read from its Makefile.
struct MakePlan {
    makefile: PathBuf,
    /// The Makefile's targets.
    targets: BTreeSet<String>,
    parsed: Makefile,
    /// The make targets, one make invocation each (see [`MakePlan::run`]).
    steps: Vec<String>,
    /// The recipe builds only the shared libraries: the prefix is taken from the build tree.
    from_tree: bool,
    clashes: Vec<install::Clash>,
}

impl MakePlan {
    fn read(req: &BuildRequest, build_dir: &Path, steps: &mut Steps) -> Result<MakePlan> {
        let makefile = build_dir.join("Makefile");
        let targets = makefile_targets(&makefile).map_err(|e| BuildFailed(format!("{e:#}")))?;
        let make_targets = recipe_make_targets(req, &makefile, &targets, steps)?;
        let parsed = Makefile::parse(&fs::read_to_string(&makefile).unwrap_or_default());
        let (make_targets, from_tree) = expand_shared_libs(make_targets, &targets, &parsed);
        let clashes = install::shared_libraries(&parsed)
            .map(|s| s.clashes)
            .unwrap_or_default();
        for c in &clashes {
            append_to_log(req.log_path, &format!("### perfbisect: {c}"))?;
        }
        Ok(MakePlan {
            makefile,
            targets,
            parsed,
            steps: make_targets,
            from_tree,
            clashes,
        })
    }

    /// Runs make, after keeping what configure did not change when it ran again (`snapshot`).
    /// Returns make's seconds and the objects kept.
    fn run(
        &self,
        req: &BuildRequest,
        snapshot: Option<&restat::Snapshot>,
        jobs: usize,
        steps: &mut Steps,
    ) -> Result<(f64, Option<usize>)> {
        let mut make_secs = 0.0;
        let mut kept = None;
        if let Some(snap) = snapshot {
            let (secs, objects) =
                keep_unchanged_objects(req, snap, &self.parsed, &self.targets, jobs, steps)?;
            make_secs += secs;
            kept = Some(objects);
        }
        // One make invocation per step: OpenSSL's top-level targets
        // (build_libs, build_modules, …) each run `$(MAKE) depend && $(MAKE)
        // _target`, so two of them in one parallel make would compile the same
        // objects at the same time and clobber each other's files. A step that
        // names several files (3.x libraries and modules) names plain targets.
        for (i, t) in self.steps.iter().enumerate() {
            let mut args = vec![format!("-j{jobs}")];
            args.extend(t.split_whitespace().map(String::from));
            let announce = i == 0 && snapshot.is_none();
            make_secs += steps.run(Phase::Make, announce, Path::new("make"), &args)?;
        }
        Ok((make_secs, kept))
    }
}

/// The recipe's make targets and the run-time modules' target: providers (legacy) and engines
/// on 3.x are built by build_modules, engines on 1.1.1 by build_engines. A target the
/// Makefile lacks fails the build.
fn recipe_make_targets(
    req: &BuildRequest,
    makefile: &Path,
    targets: &BTreeSet<String>,
    steps: &mut Steps,
) -> Result<Vec<String>> {
    let mut make_targets = req.recipe.make_targets.clone();
    let extra = if targets.contains("build_modules") {
        Some("build_modules")
    } else if targets.contains("build_engines") {
        Some("build_engines")
    } else {
        None
    };
    if let Some(x) = extra {
        if !make_targets.iter().any(|t| t == x) {
            make_targets.push(x.to_string());
        }
    }
    if let Some(missing) = req
        .recipe
        .make_targets
        .iter()
        .find(|t| *t != SHARED_LIBS && !targets.contains(t.as_str()))
    {
        steps.note(&format!(
            "### perfbisect: make target {missing} does not exist in {}",
            makefile.display()
        ));
        failed!(
            "make failed: the recipe's make target '{missing}' does not exist in this tree's Makefile; log: {}",
            req.log_path.display()
        );
    }
    Ok(make_targets)
}

/// After configuring again (see restat): removes the targets whose rule changed, makes the
/// generated sources, and keeps every other object. Returns make's seconds and the objects
/// kept.
fn keep_unchanged_objects(
    req: &BuildRequest,
    snap: &restat::Snapshot,
    new: &Makefile,
    targets: &BTreeSet<String>,
    jobs: usize,
    steps: &mut Steps,
) -> Result<(f64, usize)> {
    let build_dir = steps.build_dir;
    let removed = restat::remove_changed(build_dir, snap, new)?;
    let mut generate = restat::generated_sources(snap, new);
    if targets.contains("build_generated") {
        generate.insert(0, "build_generated".to_string());
    }
    let mut secs = 0.0;
    if !generate.is_empty() {
        let mut args = vec![format!("-j{jobs}")];
        args.extend(generate);
        secs += steps.run(Phase::Make, true, Path::new("make"), &args)?;
    }
    let k = restat::keep_unchanged(build_dir, snap, new)?;
    append_to_log(
        req.log_path,
        &format!(
            "### perfbisect: kept {} object(s) and {} other target(s) whose rule and inputs configure did not change; {} object(s) to compile; {} target(s) removed because their rule changed",
            k.objects, k.others, k.objects_to_build, removed
        ),
    )?;
    Ok((secs, k.objects))
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

/// Where a build's prefix comes from (see install.rs), for the install phase of [`build`].
struct Publish<'a> {
    src: &'a Path,
    build_dir: &'a Path,
    install_dir: &'a Path,
    log_path: &'a Path,
    /// The Makefile's targets.
    targets: &'a BTreeSet<String>,
    clashes: &'a [install::Clash],
}

impl Publish<'_> {
    /// Publishes the prefix: by make install, or from the build tree when `from_tree` (the
    /// recipe built only the shared libraries). Returns the install targets and, after a
    /// fallback, why make install failed.
    fn install(
        &self,
        from_tree: bool,
        makefile: &Path,
        steps: &mut Steps,
    ) -> Result<(Vec<String>, Option<String>)> {
        if !from_tree {
            return self.make_install(makefile, steps);
        }
        // install_dev would copy the static libraries this build did not make.
        self.take_from_tree(
            "taking the shared libraries, headers, modules and engines from the build tree",
        )
        .map_err(|e| {
            BuildFailed(format!(
                "install failed: the build tree has no usable libraries ({e:#}); log: {}",
                self.log_path.display()
            ))
        })?;
        Ok((Vec::new(), None))
    }

    /// The prefix taken from the build tree, each file logged; `why` opens the log line.
    fn take_from_tree(&self, why: &str) -> Result<()> {
        append_to_log(self.log_path, &format!("### perfbisect: {why}"))?;
        let files = install_from_build_tree(self.src, self.build_dir, self.install_dir)?;
        for f in &files {
            append_to_log(
                self.log_path,
                &format!("### perfbisect: from the build tree: {f}"),
            )?;
        }
        Ok(())
    }

    /// `make install_dev` (with install_engines / install_modules where this version has
    /// them; never install_sw or docs) into a DESTDIR, moved into place, clashing libraries
    /// mended. OpenSSL's install can fail where its build did not (on 2022 master, install_dev
    /// copied a static libssl.a that build_libs never made): what a kernel loads is in the
    /// build tree then, and is published from there. Returns the install targets and, after
    /// such a fallback, why make install failed.
    fn make_install(
        &self,
        makefile: &Path,
        steps: &mut Steps,
    ) -> Result<(Vec<String>, Option<String>)> {
        let install_targets: Vec<String> = ["install_dev", "install_engines", "install_modules"]
            .iter()
            .filter(|t| self.targets.contains(**t))
            .map(|t| t.to_string())
            .collect();
        if !install_targets.iter().any(|t| t == "install_dev") {
            failed!(
                "install failed: {} has no install_dev target; log: {}",
                makefile.display(),
                self.log_path.display()
            );
        }
        // Serial: everything is built already; this only copies files. DESTDIR stages under
        // install_dir (same file system), then moves into place.
        let destdir = self.install_dir.join(".perfbisect-destdir");
        let mut args = vec![format!("DESTDIR={}", destdir.display())];
        args.extend(install_targets.iter().cloned());
        let installed = steps
            .run(Phase::Install, true, Path::new("make"), &args)
            .and_then(|_| move_installed(&destdir, self.install_dir))
            .and_then(|_| install::mend_clashes(self.build_dir, self.install_dir, self.clashes));
        let e = match installed {
            Ok(mended) => {
                for m in mended {
                    append_to_log(
                        self.log_path,
                        &format!("### perfbisect: published {m} over what make install left there"),
                    )?;
                }
                return Ok((install_targets, None));
            }
            Err(e) if e.downcast_ref::<BuildFailed>().is_some() => e,
            Err(e) => return Err(e),
        };
        let why = format!("{e:#}");
        let why = why.lines().next().unwrap_or_default();
        let why = why.split("; log: ").next().unwrap_or(why).to_string();
        let copied = fs::remove_dir_all(self.install_dir)
            .with_context(|| format!("clearing {}", self.install_dir.display()))
            .and_then(|_| {
                self.take_from_tree(&format!(
                    "{why}; taking the shared libraries, headers, modules and engines from the build tree instead"
                ))
            });
        if let Err(ce) = copied {
            append_to_log(self.log_path, &format!("### perfbisect: {ce:#}"))?;
            failed!(
                "{why}, and the build tree has no usable libraries either ({ce:#}); log: {}\n{}",
                self.log_path.display(),
                tail(self.log_path, TAIL_LINES)
            );
        }
        Ok((install_targets, Some(why)))
    }
}

/// The load check (see installed.rs): a prefix that fails it is a failed build.
fn check_published(install_dir: &Path, log_path: &Path) -> Result<()> {
    let problems = installed::check(install_dir)?;
    if problems.is_empty() {
        return Ok(());
    }
    for p in &problems {
        append_to_log(log_path, &format!("### perfbisect: load check: {p}"))?;
    }
    failed!(
        "the published libraries fail the load check: {}; log: {}",
        installed::summary(&problems),
        log_path.display()
    );
}

/// Runs one phase, streaming stdout and stderr to the log and to `on_event`.
/// On failure, the error names the phase, the exit status, the log and its
/// last lines.
///
/// The step runs in a process group of its own, registered with
/// [`interrupt`](crate::interrupt): on Ctrl-C (whether the terminal signalled
/// the whole foreground group or only perfbisect got it) the group gets
/// SIGTERM, then SIGKILL after [`TERM_GRACE`], and this returns
/// [`Interrupted`](crate::interrupt::Interrupted) promptly instead of waiting
/// for make to finish.
fn run_step(
    phase: Phase,
    announce: bool,
    cmd: &mut Command,
    log: &mut File,
    log_path: &Path,
    on_event: &mut dyn FnMut(BuildEvent),
) -> Result<()> {
    if announce {
        on_event(BuildEvent::Phase(phase));
    }
    crate::interrupt::check()?;
    let shown: Vec<String> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut out = StepLog {
        file: log,
        error: None,
    };
    out.write(format!("### perfbisect: {phase}: {}\n", shown.join(" ")).as_bytes());
    let _ = out.file.flush();
    let mut child = spawn_step(phase, cmd, &shown[0], out.file, log_path)?;
    let _group = crate::interrupt::child_group(child.id() as i32);
    let (lines, readers) = read_lines(&mut child);
    let pgid = child.id() as i32;
    stream_output(&lines, &mut out, on_event, pgid);
    let StepLog { file: log, error } = out;
    let status = child
        .wait()
        .with_context(|| format!("waiting for {phase}"))?;
    if crate::interrupt::interrupted() {
        // Whatever is left of the group (a grandchild that ignored SIGTERM).
        // SAFETY: kill has no memory effects.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = writeln!(log, "### perfbisect: {phase} interrupted ({status})");
        return Err(crate::interrupt::Interrupted.into());
    }
    for r in readers {
        let _ = r.join();
    }
    let _ = log.flush();
    if let Some(e) = error {
        bail!("cannot write the build log {}: {e}", log_path.display());
    }
    judge_exit(phase, status, log, log_path)
}

/// The log as a step writes it. A log that cannot be written (disk full, `ulimit -f`) is not
/// the commit's failure: the first error is kept to fail the step with.
struct StepLog<'a> {
    file: &'a mut File,
    error: Option<std::io::Error>,
}

impl StepLog<'_> {
    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = self.file.write_all(bytes) {
                self.error = Some(e);
            }
        }
    }
}

/// Starts a step with its output piped, in a process group of its own (see [`run_step`]).
fn spawn_step(
    phase: Phase,
    cmd: &mut Command,
    program: &str,
    log: &mut File,
    log_path: &Path,
) -> Result<std::process::Child> {
    use std::os::unix::process::CommandExt;
    // If perfbisect itself is killed outright (SIGKILL), the step is killed too rather than
    // left building into the shared work directory.
    // SAFETY: prctl is async-signal-safe and touches no memory of ours.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    match cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
    {
        Ok(c) => Ok(c),
        Err(e) => {
            let _ = writeln!(log, "### perfbisect: {phase}: cannot start {program}: {e}");
            let msg = format!(
                "{phase} failed: cannot start {program}: {e}; log: {}",
                log_path.display()
            );
            // A config script that cannot be executed is the tree's fault;
            // a missing make is the machine's.
            if phase == Phase::Configure {
                return Err(BuildFailed(msg).into());
            }
            bail!(msg);
        }
    }
}

/// The child's stdout and stderr, line by line, read on threads of their own; the channel
/// closes when both pipes have.
fn read_lines(
    child: &mut std::process::Child,
) -> (mpsc::Receiver<Vec<u8>>, Vec<std::thread::JoinHandle<()>>) {
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|stream| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stream);
            loop {
                let mut line = Vec::new();
                match r.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        })
    })
    .collect();
    (rx, readers)
}

/// Every line of the step's output to the log and to `on_event`, until its pipes close. On an
/// interrupt the step's group gets SIGTERM, then SIGKILL after [`TERM_GRACE`]: waiting for
/// the pipes must not wait for make to finish.
fn stream_output(
    lines: &mpsc::Receiver<Vec<u8>>,
    log: &mut StepLog,
    on_event: &mut dyn FnMut(BuildEvent),
    pgid: i32,
) {
    let mut interrupted_at: Option<Instant> = None;
    let mut killed = false;
    loop {
        match lines.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(line) => {
                log.write(&line);
                if !line.ends_with(b"\n") {
                    log.write(b"\n");
                }
                let text = String::from_utf8_lossy(&line).trim_end().to_string();
                if !text.is_empty() {
                    on_event(BuildEvent::Line(text));
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if crate::interrupt::interrupted() {
            let since = *interrupted_at.get_or_insert_with(|| {
                // SAFETY: kill has no memory effects.
                unsafe { libc::kill(-pgid, libc::SIGTERM) };
                Instant::now()
            });
            if !killed && since.elapsed() >= TERM_GRACE {
                // SAFETY: as above.
                unsafe { libc::kill(-pgid, libc::SIGKILL) };
                killed = true;
            }
        }
    }
}

/// How the step ended, as [`build`]'s errors: killed from outside is not the commit's
/// failure; a non-zero exit is.
fn judge_exit(
    phase: Phase,
    status: std::process::ExitStatus,
    log: &mut File,
    log_path: &Path,
) -> Result<()> {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        // Killed from outside (SIGINT to the group, the OOM killer, a
        // shutdown): says nothing about the commit, so not cached.
        if matches!(
            sig,
            libc::SIGINT | libc::SIGTERM | libc::SIGKILL | libc::SIGHUP | libc::SIGQUIT
        ) {
            let _ = writeln!(log, "### perfbisect: {phase} killed ({status})");
            bail!(
                "{phase} was killed by signal {sig}; the build was not completed and is not cached as failed"
            );
        }
    }
    if !status.success() {
        let _ = writeln!(log, "### perfbisect: {phase} failed ({status})");
        let _ = log.flush();
        failed!(
            "{phase} failed ({status}); log: {}\n{}",
            log_path.display(),
            tail(log_path, TAIL_LINES)
        );
    }
    Ok(())
}

/// One line appended to the build log while the steps hold it (`log` is theirs while they run;
/// O_APPEND keeps the order).
fn append_to_log(log_path: &Path, line: &str) -> Result<()> {
    OpenOptions::new()
        .append(true)
        .open(log_path)
        .and_then(|mut f| writeln!(f, "{line}"))
        .with_context(|| format!("writing the build log {}", log_path.display()))
}

/// The last `n` lines of a file, indented, for error messages.
fn tail(path: &Path, n: usize) -> String {
    let text = match fs::read(path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(_) => return String::new(),
    };
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("  | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Names of the explicit targets of a generated Makefile (`name:` at the
/// start of a line, not `name:=`).
/// The recipe's make target that means "only what a kernel loads": the shared libraries (the
/// Makefile's `SHLIBS`) after the generated headers and `depend`, not the static libraries
/// (`build_libs` makes both: twice the compiler runs, half of them ccache hits at best), apps
/// or tests. The modules and engines are added like for any recipe. A tree whose Makefile
/// names no `SHLIBS` gets `build_libs` instead.
pub const SHARED_LIBS: &str = "shared_libs";

/// `targets` with [`SHARED_LIBS`] replaced by what it means in this Makefile, and whether it
/// was used (then the build is published from the build tree, not by `make install_dev`).
fn expand_shared_libs(
    targets: Vec<String>,
    known: &BTreeSet<String>,
    makefile: &Makefile,
) -> (Vec<String>, bool) {
    if !targets.iter().any(|t| t == SHARED_LIBS) {
        return (targets, false);
    }
    let shlibs = install::shared_libraries(makefile).map(|s| s.files);
    // OpenSSL 3's build_modules is `$(MAKE) depend && $(MAKE) _build_modules`: two more reads of
    // a 4 MB Makefile and a merge of every .d file, about a second per build. Its
    // build_modules_nodep names the same modules, and make orders them after libcrypto.so (they
    // link it), so one make builds the libraries and the modules. The next build's own `depend`
    // merges the .d files this build wrote.
    let modules_with_libs = shlibs.is_some() && known.contains("build_modules_nodep");
    let mut out = Vec::new();
    for t in targets {
        if modules_with_libs && t == "build_modules" {
            continue;
        }
        if t != SHARED_LIBS {
            out.push(t);
            continue;
        }
        match &shlibs {
            Some(libs) => {
                for pre in ["build_generated", "depend"] {
                    if known.contains(pre) {
                        out.push(pre.to_string());
                    }
                }
                if modules_with_libs {
                    // 3.x: one single-target rule per library, so one parallel make is safe.
                    let mut step = libs.clone();
                    step.push("build_modules_nodep".to_string());
                    out.push(step.join(" "));
                } else {
                    // One make per library, in the Makefile's order: 1.1.1's rule for a shared
                    // library names two targets (`libcrypto.so libcrypto.so.1.1: …`), so a
                    // parallel make asked for libcrypto.so.1.1 and, through libssl, for
                    // libcrypto.so runs the link twice at once ("ln: failed to create symbolic
                    // link … File exists").
                    out.extend(libs.iter().cloned());
                }
            }
            None => out.push("build_libs".to_string()),
        }
    }
    (out, shlibs.is_some())
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

fn makefile_targets(makefile: &Path) -> Result<BTreeSet<String>> {
    let text = fs::read_to_string(makefile)
        .with_context(|| format!("configure produced no readable {}", makefile.display()))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let ok = !name.is_empty()
                && !rest.starts_with('=')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            ok.then(|| name.to_string())
        })
        .collect())
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
#[path = "builder_tests.rs"]
mod tests;
