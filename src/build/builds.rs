//! Builds in the cache: one entry per (commit, recipe fingerprint), built at
//! stable paths (so ccache hits survive from commit to commit), installed
//! into a staging directory and published by one atomic rename. A failed
//! build is cached as failed, with its log.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::build::builder::{self, BuildEvent, BuildRequest};
use crate::build::compiler;
use crate::build::recipe::Recipe;
use crate::build::repo::{CommitInfo, Repo};
use crate::build::version::{detect_version, OpenSslVersion};
use crate::cache::{self, Cache};
use crate::interrupt;
use crate::measure::prefix::Prefix;
use crate::progress;

#[derive(Debug, Clone, Serialize, Deserialize)]
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
    pub rebuild: bool,
    pub jobs: usize,
}

pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
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

/// The cache entry for this commit and recipe: built now if missing (or
/// damaged, or with `rebuild`), else taken from the cache, failures included.
pub fn ensure(cache: &Cache, repo: &Repo, c: &CommitInfo, o: &BuildOptions) -> Result<Built> {
    let version = commit_version(repo, c)?;
    let resolved = o.recipe.resolve(&version, compiler::id());
    let key = format!("{}-{}-{}", &c.id[..12], resolved.name, resolved.fingerprint);
    let builds = cache.dir("builds")?;
    let entry = builds.join(&key);

    if !o.rebuild {
        if let Some(b) = read_entry(&entry)? {
            return Ok(b);
        }
    }
    let sp = progress::spinner(&format!("{} {}", c.short, resolved.name));
    sp.set_message("waiting for the build lock");
    let _lock = cache.lock(&format!("build-{key}"))?;
    // Another process may have finished it while we waited.
    if !o.rebuild {
        if let Some(b) = read_entry(&entry)? {
            sp.finish_and_clear();
            return Ok(b);
        }
    }
    // One build at a time per cache: the stable work paths are shared.
    let _work = cache.lock("workdir")?;
    interrupt::check()?;
    remove_stale_staging(&builds);
    let work = cache.dir("work")?;
    let src = work.join("src");
    let build_dir = work.join("build");
    for d in [&src, &build_dir] {
        if d.exists() {
            fs::remove_dir_all(d).with_context(|| format!("cannot clear {}", d.display()))?;
        }
    }
    sp.set_message("checking out");
    progress::detail(&format!("checking out {} into {}", c.short, src.display()));
    repo.export_tree(c, &src)?;
    fs::create_dir_all(&build_dir)?;

    let staging = tempfile::Builder::new()
        .prefix(&format!(".tmp-{key}-"))
        .tempdir_in(&builds)?;
    let log = staging.path().join("build.log");
    let staged_prefix = staging.path().join("prefix");
    let req = BuildRequest {
        src: &src,
        build_dir: &build_dir,
        install_dir: &staged_prefix,
        recipe: &resolved,
        jobs: o.jobs,
        log_path: &log,
        ccache: true,
    };
    let started = Instant::now();
    let mut phase = "";
    let result = builder::build(&req, &mut |ev| match ev {
        BuildEvent::Phase(p) => {
            phase = p;
            sp.set_message(p.to_string());
            progress::detail(&format!("{}: {p}", c.short));
        }
        BuildEvent::Line(l) => {
            sp.set_message(format!("{phase}: {}", truncate(&l, 100)));
        }
    });
    sp.finish_and_clear();
    if interrupt::interrupted() {
        // The staging directory is removed on drop: nothing is published.
        return Err(interrupt::Interrupted.into());
    }
    // Only a failure of the tree itself (config, make, install) is cached as
    // a failed build. Anything else (the log or staging directory cannot be
    // written, make is missing, a step was killed) is returned as an error
    // and nothing is published, so the next run simply tries again.
    if let Err(e) = &result {
        if e.downcast_ref::<builder::BuildFailed>().is_none() {
            return Err(anyhow::anyhow!(
                "cannot build {} ({e:#}); nothing was cached",
                c.short
            ));
        }
    }
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut meta = BuildMeta {
        commit: c.id.clone(),
        summary: c.summary.clone(),
        recipe: resolved.name.clone(),
        fingerprint: resolved.fingerprint.clone(),
        version: version.clone(),
        ok: false,
        error: None,
        created,
        duration_s: started.elapsed().as_secs_f64(),
        ccache_hit_rate: None,
        ccache_remote_hits: None,
    };
    match &result {
        Ok(report) => {
            meta.ok = true;
            meta.ccache_hit_rate = report.ccache.as_ref().map(|c| c.hit_rate);
            meta.ccache_remote_hits = report.ccache.as_ref().map(|c| c.remote_hits);
        }
        Err(e) => {
            fs::remove_dir_all(&staged_prefix).ok();
            let msg = format!("{e:#}").replace(
                &log.display().to_string(),
                &entry.join("build.log").display().to_string(),
            );
            meta.error = Some(msg);
        }
    }
    cache::write_atomic_at(
        &staging.path().join("meta.json"),
        serde_json::to_string_pretty(&meta)?.as_bytes(),
        Some("publish-build"),
    )
    .with_context(|| format!("cannot publish the build of {}", c.short))?;
    if entry.exists() {
        // A damaged entry, or --rebuild. Readers do not take the build lock,
        // so move it out of sight in one rename before deleting it: they see
        // the old entry or none, never a half-deleted one.
        let trash = builds.join(format!(".tmp-old-{key}-{}", std::process::id()));
        fs::rename(&entry, &trash)
            .with_context(|| format!("cannot replace {}", entry.display()))?;
        fs::remove_dir_all(&trash).with_context(|| format!("cannot remove {}", trash.display()))?;
    }
    let staged = staging.keep();
    if let Err(e) = fs::rename(&staged, &entry) {
        fs::remove_dir_all(&staged).ok();
        return Err(e).with_context(|| format!("cannot publish {}", entry.display()));
    }
    let mut built = read_entry(&entry)?.with_context(|| {
        format!(
            "the build just published at {} does not read back",
            entry.display()
        )
    })?;
    built.fresh = true;
    Ok(built)
}

/// A published entry, checked: meta.json parses and, for a successful build,
/// the libraries are there. A damaged entry is reported and treated as absent.
pub fn read_entry(entry: &Path) -> Result<Option<Built>> {
    let meta_path = entry.join("meta.json");
    if !entry.exists() {
        return Ok(None);
    }
    let meta: BuildMeta = match fs::read_to_string(&meta_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
    {
        Some(m) => m,
        None => {
            eprintln!(
                "perfbisect: warning: damaged build entry {} (missing or unreadable meta.json); rebuilding",
                entry.display()
            );
            return Ok(None);
        }
    };
    // meta.json must describe this entry (`<commit12>-<recipe>-<fingerprint>`):
    // a file copied from another entry is not this build's record.
    let name = entry
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let expected = format!(
        "{}-{}-{}",
        &meta.commit[..12.min(meta.commit.len())],
        meta.recipe,
        meta.fingerprint
    );
    if meta.commit.len() < 12 || name != expected {
        eprintln!(
            "perfbisect: warning: damaged build entry {} (its meta.json describes {expected}); rebuilding",
            entry.display()
        );
        return Ok(None);
    }
    let prefix = if meta.ok {
        match Prefix::from_dir(
            &entry.join("prefix"),
            &meta.commit[..10.min(meta.commit.len())],
        )
        .and_then(|p| {
            // Prefix::from_dir checks libcrypto; a build also installed libssl.
            has_shared(&p.lib_dir, "libssl")?;
            Ok(p)
        }) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!(
                    "perfbisect: warning: damaged build entry {} ({e:#}); rebuilding",
                    entry.display()
                );
                return Ok(None);
            }
        }
    } else {
        None
    };
    Ok(Some(Built {
        dir: entry.to_path_buf(),
        meta,
        prefix,
        fresh: false,
    }))
}

/// Every published build entry, newest first.
pub fn list(cache: &Cache) -> Result<Vec<Built>> {
    let dir = cache.dir("builds")?;
    let mut out = Vec::new();
    for e in fs::read_dir(&dir)?.flatten() {
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        if let Some(b) = read_entry(&e.path())? {
            out.push(b);
        }
    }
    out.sort_by_key(|b| std::cmp::Reverse(b.meta.created));
    Ok(out)
}

/// Staging directories (`.tmp-<key>-…`) and replaced entries (`.tmp-old-…`)
/// left by a process that was killed outright (SIGKILL, a second Ctrl-C):
/// with the workdir lock held no other build is staging, so they are
/// garbage. `cache rm`'s `.tmp-rm-…` are not ours to touch (it does not hold
/// this lock).
fn remove_stale_staging(builds: &Path) {
    let Ok(rd) = fs::read_dir(builds) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(".tmp-") && !name.starts_with(".tmp-rm-") {
            progress::detail(&format!("removing stale staging directory {name}"));
            fs::remove_dir_all(e.path()).ok();
        }
    }
}

/// `lib/<name>.so*` exists.
fn has_shared(lib: &Path, name: &str) -> Result<()> {
    let found = fs::read_dir(lib)
        .with_context(|| format!("cannot read {}", lib.display()))?
        .flatten()
        .any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{name}.so"))
        });
    if !found {
        bail!("no shared {name} in {}", lib.display());
    }
    Ok(())
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n).collect::<String>() + "…"
    }
}
