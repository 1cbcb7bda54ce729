use crate::cli::exit::Exit;
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use super::Global;
use crate::build::builds;
use crate::build::repo::Repo;
use crate::cache::{self, Cache};
use crate::report::listing::{BuildList, BuildsFormat, OnDisk};

#[derive(Args)]
pub struct CacheCmd {
    #[command(subcommand)]
    action: CacheAction,
}

#[derive(Subcommand)]
enum CacheAction {
    /// List cached builds: commit, recipe, size, age, status
    Ls {
        #[arg(long, value_enum, default_value = "text")]
        format: BuildsFormat,
    },
    /// Remove old builds
    Gc {
        /// Keep the N most recent builds
        #[arg(long, value_name = "N")]
        keep: Option<usize>,
        /// Remove builds older than this (e.g. 12h, 7d, 30m)
        #[arg(long, value_name = "AGE", value_parser = parse_age)]
        older_than: Option<u64>,
    },
    /// Remove the builds of these revisions (any recipe)
    Rm {
        #[arg(required = true, value_name = "REV")]
        revs: Vec<String>,
        /// Repository to resolve the revisions in (shas work without it)
        #[arg(long, default_value = ".", value_name = "DIR")]
        repo: PathBuf,
    },
}

fn parse_age(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not an age such as 7d or 12h"))?;
    let mult = match unit {
        "s" => 1,
        "m" => 60,
        "h" | "" => 3600,
        "d" => 86400,
        "w" => 7 * 86400,
        _ => return Err(format!("'{s}' is not an age such as 7d or 12h")),
    };
    Ok(n * mult)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub fn run(g: &Global, a: CacheCmd) -> Result<Exit> {
    let cache = Cache::open(&g.cache())?;
    match a.action {
        CacheAction::Ls { format } => ls(&cache, format)?,
        CacheAction::Gc { keep, older_than } => gc(&cache, keep, older_than)?,
        CacheAction::Rm { revs, repo } => rm(&cache, &revs, &repo)?,
    }
    Ok(Exit::Done)
}

fn ls(cache: &Cache, format: BuildsFormat) -> Result<()> {
    let list = builds::list(cache)?;
    let on_disk = (list.iter())
        .map(|b| OnDisk {
            bytes: cache::dir_size(&b.dir),
            age_s: now().saturating_sub(b.meta.created),
        })
        .collect();
    let builds = list.into_iter().map(|b| b.meta).collect();
    print!("{}", format.render(&BuildList { builds, on_disk })?);
    Ok(())
}

fn gc(cache: &Cache, keep: Option<usize>, older_than: Option<u64>) -> Result<()> {
    if keep.is_none() && older_than.is_none() {
        bail!("cache gc needs --keep N or --older-than AGE");
    }
    let list = builds::list(cache)?;
    let mut removed = 0;
    for (i, b) in list.iter().enumerate() {
        let too_many = keep.is_some_and(|k| i >= k);
        let too_old = older_than.is_some_and(|o| now().saturating_sub(b.meta.created) > o);
        if too_many || too_old {
            remove(cache, &b.dir)?;
            removed += 1;
        }
    }
    // Staging directories left by a killed process.
    builds::remove_stale_staging(cache, None)?;
    // Half-compiled kernels of a killed process: each compile holds
    // its kernel's lock, so an old one nobody is writing is safe to drop.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for e in std::fs::read_dir(cache.dir("kernels")?)?.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| t < hour_ago);
        if e.file_name().to_string_lossy().starts_with(".tmp-") && old {
            std::fs::remove_dir_all(e.path()).ok();
        }
    }
    println!("removed {removed} build(s), {} kept", list.len() - removed);
    Ok(())
}

/// Removes every build of `revs` (resolved in `repo`, or given as shas).
fn rm(cache: &Cache, revs: &[String], repo: &std::path::Path) -> Result<()> {
    let repo = Repo::open(repo).ok();
    let list = builds::list(cache)?;
    let mut removed = 0;
    for rev in revs {
        let id = match repo.as_ref().map(|r| r.resolve(rev)) {
            Some(Ok(c)) => c.id,
            _ if rev.len() >= 4 && rev.chars().all(|c| c.is_ascii_hexdigit()) => rev.to_lowercase(),
            Some(Err(e)) => return Err(e),
            None => {
                bail!("cannot resolve '{rev}' without a repository (pass --repo, or a sha)")
            }
        };
        let hits: Vec<_> = list
            .iter()
            .filter(|b| b.meta.commit.starts_with(&id))
            .collect();
        if hits.is_empty() {
            eprintln!("perfbisect: no cached build of {rev}");
        }
        for b in hits {
            remove(cache, &b.dir)?;
            removed += 1;
        }
    }
    println!("removed {removed} build(s)");
    Ok(())
}

/// Remove an entry by renaming it out of sight first, so no reader sees it
/// half-deleted.
fn remove(cache: &Cache, dir: &std::path::Path) -> Result<()> {
    let name = dir
        .file_name()
        .context("entry has no name")?
        .to_string_lossy()
        .into_owned();
    let _l = cache.lock(&format!("build-{name}"))?;
    let trash = dir.with_file_name(format!(".tmp-rm-{name}-{}", std::process::id()));
    std::fs::rename(dir, &trash).with_context(|| format!("cannot remove {}", dir.display()))?;
    std::fs::remove_dir_all(&trash)
        .with_context(|| format!("cannot remove {}", trash.display()))?;
    Ok(())
}
