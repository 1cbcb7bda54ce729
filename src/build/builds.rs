//! Builds in the cache: one entry per (commit, recipe fingerprint), built at
//! stable paths (so ccache hits survive from commit to commit), installed
//! into a staging directory and published by one atomic rename. A failed
//! build is cached as failed, with its log.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::build::builder::{self, BuildEvent, BuildReport, BuildRequest, Start};
use crate::build::compiler;
use crate::build::configured;
use crate::build::depends;
use crate::build::installed;
use crate::build::patch::{self, Patch};
use crate::build::prefix::Prefix;
use crate::build::recipe::{Recipe, ResolvedRecipe};
use crate::build::repo::{self, CommitInfo, Repo};
use crate::build::version::{detect_version, OpenSslVersion};
use crate::cache::{self, Cache};
use crate::hashing::Hasher;
use crate::interrupt;
use crate::progress;
use indicatif::ProgressBar;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BuildMeta {
    pub commit: String,
    pub summary: String,
    pub recipe: String,
    pub fingerprint: String,
    pub version: OpenSslVersion,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub created: u64,
    pub duration_s: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ccache_hit_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ccache_remote_hits: Option<u64>,
    /// Files of the commit left out of the build's source tree because their
    /// blobs are missing from the repository and no build reads them
    /// (see [`repo::UNREAD_BY_BUILDS`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
    /// Set when OpenSSL's `make install` failed (why) and the prefix was
    /// filled from the build tree instead (the build log lists the files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_fallback: Option<String>,
    /// Set when the build continued the tree of an earlier build instead of
    /// starting clean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incremental: Option<Incremental>,
    /// sha256 of each file a kernel loads from this build, by path in the
    /// prefix (`lib/libcrypto.so.3`, `lib/ossl-modules/legacy.so`, …); see
    /// [`installed::hashes`]. Empty for failed builds and for builds made
    /// before perfbisect recorded them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub binaries: BTreeMap<String, String>,
    /// Patch files applied on top of the commit, in order (see [`patch`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<Patch>,
    /// The [`installed::CHECK_VERSION`] of the load check this build passed; 0 (absent) for
    /// failed builds and for builds published before builds were checked, which are checked
    /// when next read (see [`read_entry`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub checked: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How an incremental build started.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Incremental {
    /// The commit whose tree it continued.
    pub from: String,
    /// Source files rewritten and removed to move the tree.
    pub written: usize,
    pub removed: usize,
    /// Whether configure ran again (its inputs changed).
    pub configured: bool,
    /// When it did: the objects whose compile command and inputs it did not change, kept
    /// instead of compiled again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<usize>,
}

impl BuildMeta {
    /// The build as results name it: the short commit, and its patches after a `+`.
    pub fn label(&self) -> String {
        format!(
            "{}{}",
            &self.commit[..10.min(self.commit.len())],
            patch::suffix(&self.patches)
        )
    }

    /// Its cache entry name: `<commit12>[+<patches>]-<recipe>-<fingerprint>`.
    fn entry_name(&self) -> String {
        entry_name(&self.commit, &self.patches, &self.recipe, &self.fingerprint)
    }

    /// One hash of everything a kernel loads: builds with the same id are
    /// byte-identical where it matters to a measurement. `None` when the
    /// hashes were not recorded.
    pub fn binaries_id(&self) -> Option<String> {
        if self.binaries.is_empty() {
            return None;
        }
        let mut h = Hasher::new();
        for (path, sha) in &self.binaries {
            h.field(path).field(sha);
        }
        Some(h.finish())
    }
}

#[derive(Debug, Clone)]
pub struct Built {
    pub dir: PathBuf,
    pub meta: BuildMeta,
    /// Set when the build succeeded.
    pub prefix: Option<Prefix>,
    /// True when this call ran the build (false: taken from the cache).
    pub fresh: bool,
}

impl Built {
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("build.log")
    }
}

pub struct BuildOptions<'a> {
    pub recipe: &'a Recipe,
    /// Where a build's news goes as it happens (None: a line on stderr).
    pub tell: Option<&'a dyn Tell>,
    pub rebuild: bool,
    pub jobs: usize,
    pub ccache_remote: Option<String>,
    /// Never continue the tree of an earlier build.
    pub clean_build: bool,
    /// How many work trees to keep (see [`pick_work_tree`]).
    pub work_trees: usize,
}

/// Two: a bisect alternates between the two ends of a shrinking range, so one tree follows
/// each end and every build after the first few is near a tree (each costs a build tree's disk,
/// a few hundred MB for OpenSSL 3).
pub const DEFAULT_WORK_TREES: u16 = 2;

/// `make -j` when not given: the cores Slurm granted a build job (`SLURM_CPUS_PER_TASK`),
/// else the cores this process may run on.
pub fn default_jobs() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    jobs_of(std::env::var("SLURM_CPUS_PER_TASK").ok().as_deref(), cores)
}

/// What Slurm granted when it says (a node whose cores are not fenced by a cgroup shows every
/// core to the job: `make -j` of them all took the cores of the node's other jobs), else
/// `cores`.
fn jobs_of(slurm_cpus: Option<&str>, cores: usize) -> usize {
    slurm_cpus
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .unwrap_or(cores)
        .max(1)
}

/// The version a commit declares, read from its blobs without a checkout.
pub fn commit_version(repo: &Repo, c: &CommitInfo) -> Result<OpenSslVersion> {
    let tmp = tempfile::tempdir()?;
    let mut any = false;
    for f in ["Configure", "VERSION.dat", "include/openssl/opensslv.h"] {
        if let Some(bytes) = repo.read_file(c, f)? {
            let p = tmp.path().join(f);
            fs::create_dir_all(p.parent().expect("relative path has a parent"))?;
            fs::write(&p, bytes)?;
            any = true;
        }
    }
    if !any {
        bail!("{} does not look like OpenSSL", c.short);
    }
    detect_version(tmp.path()).with_context(|| format!("commit {}", c.short))
}

/// A build's cache entry name: commit (and patches), recipe and fingerprint.
fn entry_key(c: &CommitInfo, resolved: &crate::build::recipe::ResolvedRecipe) -> String {
    entry_name(&c.id, &c.patches, &resolved.name, &resolved.fingerprint)
}

fn entry_name(commit: &str, patches: &[Patch], recipe: &str, fingerprint: &str) -> String {
    let commit = &commit[..12.min(commit.len())];
    match patches.is_empty() {
        true => format!("{commit}-{recipe}-{fingerprint}"),
        false => format!("{commit}+{}-{recipe}-{fingerprint}", patch::key(patches)),
    }
}

/// The published cache entry for this commit and recipe (a failed build included), without
/// building: what `ensure` would take from the cache.
pub fn cached(
    cache: &Cache,
    repo: &Repo,
    c: &CommitInfo,
    o: &BuildOptions,
) -> Result<Option<Built>> {
    if o.rebuild {
        return Ok(None);
    }
    published(cache, repo, c, o)
}

/// The published cache entry for this commit and recipe, even under `--rebuild`: what a build
/// made elsewhere (a fleet's build job) left in the shared cache.
pub fn published(
    cache: &Cache,
    repo: &Repo,
    c: &CommitInfo,
    o: &BuildOptions,
) -> Result<Option<Built>> {
    let version = commit_version(repo, c)?;
    let resolved = o.recipe.resolve(&version, compiler::id());
    read_entry(
        &cache.dir("builds")?.join(entry_key(c, &resolved)),
        Check::Libraries,
    )
}

/// [`ensure`] for several commits at once, for callers that need them all before measuring (a
/// bisect's ends, a matrix's columns): commits not built yet that lie more than [`FAR_COMMITS`]
/// apart (or in unrelated histories) are built concurrently, up to one per work tree. Each
/// build is mostly `make -jN`, but its configure and header generation are single-threaded Perl
/// (about 15 s of an OpenSSL 3 build on 2 cores) that the other build's compiler fills. Commits
/// near each other are built one after the other, as [`ensure`] would: the second continues the
/// first one's tree. Results are in the order of `commits`.
pub fn ensure_all(
    cache: &Cache,
    repo: &Repo,
    commits: &[&CommitInfo],
    o: &BuildOptions,
) -> Vec<Result<Built>> {
    let missing: Vec<usize> = (0..commits.len())
        .filter(|&i| !matches!(cached(cache, repo, commits[i], o), Ok(Some(_))))
        .collect();
    let far_apart = missing.iter().enumerate().all(|(k, &i)| {
        missing[..k].iter().all(|&j| {
            repo.distance(&commits[i].id, &commits[j].id)
                .is_none_or(|d| d > FAR_COMMITS)
        })
    });
    let together = o.work_trees.max(1);
    if missing.len() < 2 || together < 2 || !far_apart || o.clean_build {
        return commits.iter().map(|c| ensure(cache, repo, c, o)).collect();
    }
    let mut out: Vec<Option<Result<Built>>> = (0..commits.len()).map(|_| None).collect();
    let path = repo.path.as_path();
    for group in missing.chunks(together) {
        let results: Vec<(usize, Result<Built>)> = std::thread::scope(|s| {
            let handles: Vec<_> = group
                .iter()
                .map(|&i| {
                    let c = commits[i];
                    // A git2 repository is not shared between threads: each opens its own.
                    (
                        i,
                        s.spawn(move || Repo::open(path).and_then(|r| ensure(cache, &r, c, o))),
                    )
                })
                .collect();
            handles
                .into_iter()
                .map(|(i, h)| {
                    let r = h.join().unwrap_or_else(|_| {
                        Err(anyhow::anyhow!(
                            "the build of {} panicked",
                            commits[i].short
                        ))
                    });
                    (i, r)
                })
                .collect()
        });
        for (i, r) in results {
            out[i] = Some(r);
        }
    }
    out.into_iter()
        .zip(commits)
        .map(|(r, c)| r.unwrap_or_else(|| ensure(cache, repo, c, o)))
        .collect()
}

/// The cache entry for this commit and recipe: built now if missing (or
/// damaged, or with `rebuild`), else taken from the cache, failures included.
pub fn ensure(cache: &Cache, repo: &Repo, c: &CommitInfo, o: &BuildOptions) -> Result<Built> {
    let version = commit_version(repo, c)?;
    let resolved = o.recipe.resolve(&version, compiler::id());
    let key = entry_key(c, &resolved);
    let builds = cache.dir("builds")?;
    let entry = builds.join(&key);

    if let Some(b) = reusable(&entry, o)? {
        return Ok(b);
    }
    let sp = progress::spinner(&format!("{} {}", c.short, resolved.name));
    sp.set_message("waiting for the build lock");
    let _lock = lock_build(cache, c, &key, o)?;
    // Another process may have finished it while we waited.
    if let Some(b) = reusable(&entry, o)? {
        sp.finish_and_clear();
        return Ok(b);
    }
    interrupt::check()?;
    let (work, _work_lock) = pick_work_tree(cache, repo, c, &resolved, o)?;
    remove_stale_staging(cache, Some(&key))?;
    let tree = WorkTree::at(&work);
    let previous = tree.continuable(o, c, &resolved);
    tree.forget()?;
    let job = BuildJob {
        repo,
        c,
        o,
        resolved: &resolved,
        tree: &tree,
        leave_out: leave_out(&resolved),
    };
    let started = Instant::now();
    sp.set_message("checking out");
    let staged = job.stage(previous.as_ref(), &builds, &key, &sp)?;
    sp.finish_and_clear();
    if interrupt::interrupted() {
        // The staging directory is removed on drop: nothing is published.
        return Err(interrupt::Interrupted.into());
    }
    // Only a failure of the tree itself (config, make, install) is cached as
    // a failed build. Anything else (the log or staging directory cannot be
    // written, make is missing, a step was killed) is returned as an error
    // and nothing is published, so the next run simply tries again.
    if let Err(e) = &staged.result {
        if e.downcast_ref::<builder::BuildFailed>().is_none() {
            return Err(anyhow::anyhow!(
                "cannot build {} ({e:#}); nothing was cached",
                c.short
            ));
        }
    }
    let mut meta = attempt_meta(c, &resolved, version, started, &staged.checkout.export);
    if staged.result.is_ok() {
        tree.remember(&resolved, c)?;
    }
    staged.record(&mut meta, &entry, c)?;
    let mut built = publish(staged.dir, &meta, &entry, &key, &c.short)?;
    built.fresh = true;
    // As it finishes, not when its caller looks: builds made side by side (ensure_all) report
    // one by one.
    o.tell(BuildNotice::Built {
        short: &c.short,
        built: &built,
        on: None,
    });
    Ok(built)
}

/// The published entry, unless it is to be built again.
fn reusable(entry: &Path, o: &BuildOptions) -> Result<Option<Built>> {
    if o.rebuild {
        return Ok(None);
    }
    read_entry(entry, Check::Libraries)
}

/// The lock on building the entry `key`, waiting for it if another process holds it.
fn lock_build(cache: &Cache, c: &CommitInfo, key: &str, o: &BuildOptions) -> Result<cache::Lock> {
    let lock_name = format!("build-{key}");
    match cache.try_lock(&lock_name)? {
        Some(l) => Ok(l),
        None => {
            // Told as it happens: off a terminal the spinner is not drawn, and a wait for
            // another process's build can take minutes.
            o.tell(BuildNotice::Waiting {
                short: &c.short,
                into: &cache.dir("builds")?,
            });
            cache.lock(&lock_name)
        }
    }
}

/// What a build of `resolved` leaves out of the source tree when its blobs are missing:
/// test/recipes/ and the like are read by `make test` only.
fn leave_out(resolved: &ResolvedRecipe) -> &'static [&'static str] {
    let runs_tests = resolved
        .make_targets
        .iter()
        .any(|t| matches!(t.as_str(), "test" | "tests" | "run_tests"));
    if runs_tests {
        &[]
    } else {
        repo::UNREAD_BY_BUILDS
    }
}

/// One build of a commit in a work tree.
struct BuildJob<'a> {
    repo: &'a Repo,
    c: &'a CommitInfo,
    o: &'a BuildOptions<'a>,
    resolved: &'a ResolvedRecipe,
    tree: &'a WorkTree,
    leave_out: &'static [&'static str],
}

/// The source tree a build starts from.
struct Checkout {
    export: repo::Export,
    start: Start,
    /// Set when the build continues an earlier build's tree.
    incremental: Option<Incremental>,
}

impl BuildJob<'_> {
    /// The commit's tree: `previous`'s trees moved to it (each decision a line of `notes`),
    /// or written afresh.
    fn checkout(&self, previous: Option<&TreeState>, notes: &mut String) -> Result<Checkout> {
        let Some(prev) = previous else {
            return self.clean_checkout();
        };
        let trees = (self.tree.src.as_path(), self.tree.build_dir.as_path());
        let (export, reconfigure, info) =
            move_tree(self.repo, self.c, prev, trees, self.leave_out, notes)?;
        Ok(Checkout {
            export,
            start: Start::Incremental { reconfigure },
            incremental: Some(info),
        })
    }

    fn clean_checkout(&self) -> Result<Checkout> {
        let (src, build_dir) = (&self.tree.src, &self.tree.build_dir);
        Ok(Checkout {
            export: clean_checkout(self.repo, self.c, src, build_dir, self.leave_out)?,
            start: Start::Clean,
            incremental: None,
        })
    }

    /// Checks the commit out and builds it into a staging directory in `builds`.
    fn stage(
        &self,
        previous: Option<&TreeState>,
        builds: &Path,
        key: &str,
        sp: &ProgressBar,
    ) -> Result<Staged> {
        let mut notes = String::new();
        let checkout = self.checkout(previous, &mut notes)?;
        let dir = tempfile::Builder::new()
            .prefix(&format!(".tmp-{key}-"))
            .tempdir_in(builds)?;
        let log = dir.path().join("build.log");
        write_notes(&log, notes, &checkout.export, self.repo)?;
        let prefix = dir.path().join("prefix");
        let (result, checkout) = self.build(checkout, &log, &prefix, sp)?;
        Ok(Staged {
            dir,
            log,
            prefix,
            result,
            checkout,
        })
    }

    /// Runs the builder on `checkout` into `staged_prefix`, its output in `log` and on `sp`.
    /// Returns the builder's result and the tree it was judged by: an incremental build that
    /// fails may fail for its own reasons (a stale dependency on a removed file), so the
    /// commit is judged by a clean build then.
    fn build(
        &self,
        mut checkout: Checkout,
        log: &Path,
        staged_prefix: &Path,
        sp: &ProgressBar,
    ) -> Result<(Result<BuildReport>, Checkout)> {
        let short = &self.c.short;
        let mut phase = "";
        let mut on_event = |ev: BuildEvent| match ev {
            BuildEvent::Phase(p) => {
                phase = p.as_str();
                sp.set_message(p.to_string());
                progress::detail(&format!("{short}: {p}"));
            }
            BuildEvent::Line(l) => {
                sp.set_message(format!("{phase}: {}", truncate(&l, 100)));
            }
        };
        let request = |start: Start| BuildRequest {
            src: &self.tree.src,
            build_dir: &self.tree.build_dir,
            install_dir: staged_prefix,
            recipe: self.resolved,
            jobs: self.o.jobs,
            log_path: log,
            ccache: true,
            ccache_remote: self.o.ccache_remote.as_deref(),
            start,
            configure_store: Some(&self.tree.configure_store),
        };
        let mut result = builder::build(&request(checkout.start), &mut on_event);
        if checkout.start != Start::Clean
            && !interrupt::interrupted()
            && result
                .as_ref()
                .is_err_and(|e| e.downcast_ref::<builder::BuildFailed>().is_some())
        {
            let note =
                "### perfbisect: the incremental build failed; building again from a clean tree\n";
            fs::OpenOptions::new()
                .append(true)
                .open(log)
                .and_then(|mut f| std::io::Write::write_all(&mut f, note.as_bytes()))
                .with_context(|| format!("cannot write {}", log.display()))?;
            if staged_prefix.exists() {
                fs::remove_dir_all(staged_prefix)
                    .with_context(|| format!("cannot clear {}", staged_prefix.display()))?;
            }
            checkout = self.clean_checkout()?;
            result = builder::build(&request(checkout.start), &mut on_event);
        }
        Ok((result, checkout))
    }
}

/// The build log's first lines: how the tree was moved (`notes`), and what of the commit the
/// repository could not give directly.
fn write_notes(log: &Path, mut notes: String, export: &repo::Export, repo: &Repo) -> Result<()> {
    if export.materialized > 0 {
        notes.push_str(&format!(
            "### perfbisect: {} blob(s) missing from {} were read through git\n",
            export.materialized,
            repo.path.display()
        ));
    }
    for p in &export.left_out {
        notes.push_str(&format!(
            "### perfbisect: left out {p}: its blob is missing from the repository and no build reads it\n"
        ));
    }
    if !notes.is_empty() {
        fs::write(log, &notes).with_context(|| format!("cannot write {}", log.display()))?;
    }
    Ok(())
}

/// The record of a build of `c` that started at `started`, before its outcome is known.
fn attempt_meta(
    c: &CommitInfo,
    resolved: &ResolvedRecipe,
    version: OpenSslVersion,
    started: Instant,
    export: &repo::Export,
) -> BuildMeta {
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    BuildMeta {
        commit: c.id.clone(),
        summary: c.summary.clone(),
        recipe: resolved.name.clone(),
        fingerprint: resolved.fingerprint.clone(),
        version,
        ok: false,
        error: None,
        created,
        duration_s: started.elapsed().as_secs_f64(),
        ccache_hit_rate: None,
        ccache_remote_hits: None,
        left_out: export.left_out.clone(),
        patches: c.patches.clone(),
        binaries: BTreeMap::new(),
        install_fallback: None,
        incremental: None,
        checked: 0,
    }
}

/// A build made in a staging directory, not published yet.
struct Staged {
    dir: tempfile::TempDir,
    log: PathBuf,
    /// The installed prefix (see [`BuildRequest::install_dir`]).
    prefix: PathBuf,
    result: Result<BuildReport>,
    /// The tree the result was judged by.
    checkout: Checkout,
}

impl Staged {
    /// What the builder's `result` adds to the record: a success's libraries and counts, a
    /// failure's message (the staged prefix removed). `entry` is where it is published: an
    /// error names the log there.
    fn record(&self, meta: &mut BuildMeta, entry: &Path, c: &CommitInfo) -> Result<()> {
        match &self.result {
            Ok(report) => {
                meta.ok = true;
                // The builder also configures again when configure's arguments
                // changed (ccache installed since the last build).
                meta.incremental = self.checkout.incremental.clone().map(|i| Incremental {
                    configured: report.configured,
                    kept: report.kept,
                    ..i
                });
                meta.install_fallback = report.install_fallback.clone();
                // builder::build returns Ok only for a prefix that passed the check.
                meta.checked = installed::CHECK_VERSION;
                meta.binaries = installed::hashes(&self.prefix).with_context(|| {
                    format!("cannot hash the libraries of the build of {}", c.short)
                })?;
                meta.ccache_hit_rate = report.ccache.as_ref().map(|c| c.hit_rate);
                meta.ccache_remote_hits = report.ccache.as_ref().map(|c| c.remote_hits);
            }
            Err(e) => {
                fs::remove_dir_all(&self.prefix).ok();
                let msg = format!("{e:#}").replace(
                    &self.log.display().to_string(),
                    &entry.join("build.log").display().to_string(),
                );
                meta.error = Some(msg);
            }
        }
        Ok(())
    }
}

/// Writes the build's record into its staging directory and publishes it as `entry` in one
/// rename (an entry already there — damaged, or `--rebuild` — is moved out of sight first),
/// then reads it back.
fn publish(
    staging: tempfile::TempDir,
    meta: &BuildMeta,
    entry: &Path,
    key: &str,
    short: &str,
) -> Result<Built> {
    let builds = entry.parent().expect("an entry lies in builds/");
    cache::write_atomic_at(
        &staging.path().join("meta.json"),
        serde_json::to_string_pretty(meta)?.as_bytes(),
        Some("publish-build"),
    )
    .with_context(|| format!("cannot publish the build of {short}"))?;
    if entry.exists() {
        // A damaged entry, or --rebuild. Readers do not take the build lock,
        // so move it out of sight in one rename before deleting it: they see
        // the old entry or none, never a half-deleted one.
        let trash = builds.join(format!(".tmp-old-{key}-{}", std::process::id()));
        fs::rename(entry, &trash).with_context(|| format!("cannot replace {}", entry.display()))?;
        fs::remove_dir_all(&trash).with_context(|| format!("cannot remove {}", trash.display()))?;
    }
    let staged = staging.keep();
    if let Err(e) = fs::rename(&staged, entry) {
        fs::remove_dir_all(&staged).ok();
        return Err(e).with_context(|| format!("cannot publish {}", entry.display()));
    }
    let built = read_entry(entry, Check::Record)?.with_context(|| {
        format!(
            "the build just published at {} does not read back",
            entry.display()
        )
    })?;
    Ok(built)
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n).collect::<String>() + "…"
    }
}

mod entry;
mod notice;
mod work_tree;

pub use entry::*;
pub use notice::{built_line, BuildNotice, Tell};
pub use work_tree::WORK_DIR_ENV;
use work_tree::*;

#[cfg(test)]
mod tests;
