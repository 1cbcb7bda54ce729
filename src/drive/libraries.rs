//! Which OpenSSL libraries `run` and `parity` measure: installed prefixes (the system's by
//! default) or cached builds of revisions of one repository, and the session that holds them.

use std::path::PathBuf;

use anyhow::{bail, Result};

use crate::build::prefix::Prefix;
use crate::build::recipe::Recipe;
use crate::build::repo::Repo;
use crate::build::sources::Sources;
use crate::cache::Cache;
use crate::measure::engine::{Library, Reuse, Session, Target, Timing};

/// Installed prefixes or revisions of the sources' repository (never both).
#[derive(Debug, Clone)]
pub struct LibraryPlan {
    /// Revisions built (cached) from `sources`; when empty, `openssl_dirs` are measured.
    pub revs: Vec<String>,
    /// Installed prefixes holding include/ and lib/; `system` is the system's, and so is none.
    pub openssl_dirs: Vec<PathBuf>,
    pub sources: Sources,
}

impl LibraryPlan {
    /// The system's OpenSSL (the command line's default).
    pub fn system() -> LibraryPlan {
        LibraryPlan {
            revs: Vec::new(),
            openssl_dirs: Vec::new(),
            sources: Sources::new("."),
        }
    }

    /// The repository and its recipe, opened when revisions are asked for.
    pub fn open(&self) -> Result<Option<(Repo, Recipe)>> {
        if self.revs.is_empty() {
            Ok(None)
        } else {
            self.sources.open().map(Some)
        }
    }

    /// The libraries in the order given, revisions resolved in `repo` (from [`Self::open`]).
    pub fn libraries(&self, repo: Option<&Repo>) -> Result<Vec<Library>> {
        if let Some(repo) = repo {
            unique("revision", &self.revs)?;
            return (self.revs.iter())
                .map(|rev| {
                    Ok(Library::Revision {
                        label: rev.clone(),
                        commit: repo.resolve_subject(rev)?,
                    })
                })
                .collect();
        }
        if self.openssl_dirs.is_empty() {
            return Ok(vec![Library::Installed(Target::installed(
                Prefix::system()?
            ))]);
        }
        (self.openssl_dirs.iter())
            .map(|d| {
                let label = d.display().to_string();
                let prefix = match label.as_str() {
                    "system" => Prefix::system()?,
                    _ => Prefix::from_dir(d, &label)?,
                };
                Ok(Library::Installed(Target::installed(prefix)))
            })
            .collect()
    }

    /// A session on `cache` that takes every sample fresh and keeps none, building the
    /// revisions of `repo` with the sources' options.
    pub fn session<'a>(
        &self,
        cache: &'a Cache,
        timing: Timing,
        repo: Option<&'a (Repo, Recipe)>,
    ) -> Session<'a> {
        let session = Session::new(cache, timing, Reuse::Nothing);
        match repo {
            Some((repo, recipe)) => session.with_repo(repo, self.sources.options(recipe)),
            None => session,
        }
    }
}

/// Refuses a list that names one item twice.
pub(super) fn unique(what: &str, items: &[String]) -> Result<()> {
    match (items.iter().enumerate()).find(|(i, x)| items[..*i].contains(x)) {
        Some((_, x)) => bail!("{what} {x} is listed twice"),
        None => Ok(()),
    }
}
