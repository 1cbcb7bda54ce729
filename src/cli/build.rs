use crate::cli::exit::Exit;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

use super::Global;
use crate::build::builds::{self, BuildOptions, Built};
use crate::build::recipe::Recipe;
use crate::build::repo::{CommitInfo, Repo};
use crate::build::sources::Sources;
use crate::cache::Cache;
use crate::progress;

/// Options shared by every command that builds OpenSSL.
#[derive(Args, Clone)]
pub struct BuildArgs {
    /// The OpenSSL git repository (read only)
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub repo: PathBuf,
    /// Configure recipe: a name from build-recipes/ or a .toml file
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub recipe: String,
    /// Build again even when the cache has this build (or its failure)
    #[arg(long)]
    pub rebuild: bool,
    /// Build from a fresh checkout and an empty build directory (no
    /// incremental build)
    #[arg(long)]
    pub clean_build: bool,
    /// Parallel make jobs (default: the number of cores)
    #[arg(long, value_name = "N", value_parser = super::args::parse_count)]
    pub jobs: Option<usize>,
    /// Work trees kept for incremental builds; each build continues the one whose commit is
    /// nearest (a bisect alternates between the ends of its range)
    #[arg(long, value_name = "N", default_value_t = builds::DEFAULT_WORK_TREES,
          value_parser = clap::value_parser!(u16).range(1..=16))]
    pub work_trees: u16,
    /// ccache remote storage shared by a team's runners, e.g.
    /// redis://host:6379 or http://host:8080/ccache (sets CCACHE_REMOTE_STORAGE)
    #[arg(long, value_name = "URL", env = "PERFBISECT_CCACHE_REMOTE")]
    pub ccache_remote: Option<String>,
}

impl BuildArgs {
    /// What these options ask for, as a plan holds it.
    pub fn sources(&self) -> Sources {
        Sources {
            repo: self.repo.clone(),
            recipe: self.recipe.clone(),
            rebuild: self.rebuild,
            clean_build: self.clean_build,
            jobs: self.jobs,
            work_trees: self.work_trees,
            ccache_remote: self.ccache_remote.clone(),
        }
    }

    pub fn open(&self) -> Result<(Repo, Recipe)> {
        self.sources().open()
    }

    pub fn options<'a>(&self, recipe: &'a Recipe) -> BuildOptions<'a> {
        self.sources().options(recipe)
    }
}

#[derive(Args)]
pub struct BuildCmd {
    /// Revisions to build (tags, branches, shas, REV^, REV~N)
    #[arg(required = true, value_name = "REV")]
    revs: Vec<String>,
    #[command(flatten)]
    build: BuildArgs,
}

pub fn run(g: &Global, a: BuildCmd) -> Result<Exit> {
    let (repo, recipe) = a.build.open()?;
    let commits = a
        .revs
        .iter()
        .map(|r| repo.resolve_subject(r))
        .collect::<Result<Vec<_>>>()?;
    let cache = Cache::open(&g.cache())?;
    let opts = a.build.options(&recipe);
    let mut failed = Vec::new();
    let refs: Vec<&CommitInfo> = commits.iter().collect();
    let built = builds::ensure_all(&cache, &repo, &refs, &opts);
    for ((rev, c), b) in a.revs.iter().zip(&commits).zip(built) {
        let b = b?;
        println!("{}", describe(rev, c, &b));
        if !b.meta.ok {
            failed.push(rev.clone());
        }
    }
    if !failed.is_empty() {
        bail!(
            "build failed for {} (cached as failed; --rebuild to try again)",
            failed.join(", ")
        );
    }
    Ok(Exit::Done)
}

/// One line per build (plus the log tail for a failure).
pub fn describe(rev: &str, c: &CommitInfo, b: &Built) -> String {
    let head = format!(
        "{rev} ({}, OpenSSL {}) recipe {}",
        c.short, b.meta.version, b.meta.recipe
    );
    if b.meta.ok {
        let how = if b.fresh {
            let cc = b
                .meta
                .ccache_hit_rate
                .map(|r| format!(", ccache hit rate {:.0}%", r * 100.0))
                .unwrap_or_default();
            let remote = b
                .meta
                .ccache_remote_hits
                .filter(|n| *n > 0)
                .map(|n| format!(", {n} from remote storage"))
                .unwrap_or_default();
            let fallback = b
                .meta
                .install_fallback
                .as_ref()
                .map(|why| format!(" ({why}: published from the build tree)"))
                .unwrap_or_default();
            let how = match &b.meta.incremental {
                Some(i) => format!(
                    ", incrementally from {} ({} file(s) changed{})",
                    &i.from[..10.min(i.from.len())],
                    i.written + i.removed,
                    if i.configured {
                        ", configured again"
                    } else {
                        ""
                    }
                ),
                None => String::new(),
            };
            format!(
                "built in {:.1} s{how}{cc}{remote}{fallback}",
                b.meta.duration_s
            )
        } else {
            "cached".to_string()
        };
        let prefix = b
            .prefix
            .as_ref()
            .map(|p| p.root.display().to_string())
            .unwrap_or_default();
        format!("{head}: {how} -> {prefix}")
    } else {
        let cached = if b.fresh { "" } else { " (cached failure)" };
        let err = b.meta.error.clone().unwrap_or_default();
        let mut s = format!("{head}: FAILED{cached}: {err}");
        if !progress::quiet() {
            s.push_str(&format!("\n  log: {}", b.log_path().display()));
        }
        s
    }
}
