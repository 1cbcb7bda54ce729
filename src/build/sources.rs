//! Where a command's builds come from and how they are made: the repository, the Configure
//! recipe and the build options, as a plan holds them (the command line's `BuildArgs` is one
//! way to fill it in). One place for what they mean: opening them, the options a build takes,
//! and the same options forwarded to a build job on another machine.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::builds::{self, BuildOptions};
use super::recipe::{self, Recipe};
use super::repo::Repo;

#[derive(Debug, Clone, PartialEq)]
pub struct Sources {
    /// The OpenSSL git repository (read only).
    pub repo: PathBuf,
    /// A recipe name from build-recipes/, or a .toml file.
    pub recipe: String,
    /// Build again even when the cache has the build (or its failure).
    pub rebuild: bool,
    /// Never continue the tree of an earlier build.
    pub clean_build: bool,
    /// Parallel make jobs (None: the machine's cores).
    pub jobs: Option<usize>,
    /// Work trees kept for incremental builds.
    pub work_trees: u16,
    /// ccache remote storage shared by a team's runners.
    pub ccache_remote: Option<String>,
}

impl Sources {
    /// `repo` with the command line's defaults: the default recipe, builds taken from the
    /// cache, the machine's cores, the default number of work trees, no remote ccache.
    pub fn new(repo: impl Into<PathBuf>) -> Sources {
        Sources {
            repo: repo.into(),
            recipe: "default".into(),
            rebuild: false,
            clean_build: false,
            jobs: None,
            work_trees: builds::DEFAULT_WORK_TREES,
            ccache_remote: None,
        }
    }

    /// The repository and the recipe, each checked.
    pub fn open(&self) -> Result<(Repo, Recipe)> {
        if let Some(url) = &self.ccache_remote {
            let known = ["redis://", "redis+unix:", "http://", "file:"];
            if !known.iter().any(|k| url.starts_with(k)) {
                bail!(
                    "unsupported ccache remote storage '{url}' (expected redis://, redis+unix:, http:// or file:)"
                );
            }
        }
        let recipe = recipe::load(&self.recipe, None)?;
        let repo = Repo::open(&self.repo)?;
        Ok((repo, recipe))
    }

    /// These options as `perfbisect build` takes them on another machine (a fleet's build job):
    /// paths made absolute, the number of jobs left to that machine unless given.
    pub fn forward(&self) -> Result<Vec<String>> {
        let abs = |p: &Path| -> Result<String> {
            let p = p
                .canonicalize()
                .with_context(|| format!("cannot resolve {}", p.display()))?;
            Ok(p.to_string_lossy().into_owned())
        };
        let recipe = match Path::new(&self.recipe) {
            p if p.is_file() => abs(p)?,
            _ => self.recipe.clone(),
        };
        let mut v = vec!["--repo".into(), abs(&self.repo)?, "--recipe".into(), recipe];
        v.extend(["--work-trees".into(), self.work_trees.to_string()]);
        if self.rebuild {
            v.push("--rebuild".into());
        }
        if self.clean_build {
            v.push("--clean-build".into());
        }
        if let Some(j) = self.jobs {
            v.extend(["--jobs".into(), j.to_string()]);
        }
        if let Some(url) = &self.ccache_remote {
            v.extend(["--ccache-remote".into(), url.clone()]);
        }
        Ok(v)
    }

    /// The options of a build of `recipe` on this machine.
    pub fn options<'a>(&self, recipe: &'a Recipe) -> BuildOptions<'a> {
        BuildOptions {
            recipe,
            tell: None,
            rebuild: self.rebuild,
            clean_build: self.clean_build,
            jobs: self.jobs.unwrap_or_else(builds::default_jobs).max(1),
            ccache_remote: self.ccache_remote.clone(),
            work_trees: self.work_trees as usize,
        }
    }
}
