//! Read-only access to the user's OpenSSL repository with git2. Nothing here
//! moves HEAD, writes the index or adds worktree metadata: trees are written
//! into the cache straight from their blobs.

use anyhow::{bail, Result};
use git2::{Oid, Repository};
use serde::Serialize;
use std::path::{Path, PathBuf};

use crate::build::patch::{self, Patch};

mod export;
mod missing;
mod revisions;
mod tree;

pub use export::{Export, UNREAD_BY_BUILDS};
pub use revisions::split_range;

pub struct Repo {
    repo: Repository,
    pub path: PathBuf,
    /// The remote that promises this partial clone's missing objects.
    promisor: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CommitInfo {
    pub id: String,
    pub short: String,
    pub summary: String,
    pub author: String,
    /// The committer date (YYYY-MM-DD, in the committer's time zone): when
    /// the commit entered the history, so dates rise in the order git bisect
    /// walks the range.
    pub date: String,
    /// The author date, only when it is more than a day away from the
    /// committer date (a rebased, cherry-picked or long-reviewed commit):
    /// alone it would make the range look out of order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author_date: Option<String>,
    /// Patch files applied on top of the commit, in order (a subject `REV+FILE…`, see
    /// [`patch`](crate::build::patch)); `short` then ends in `+FILE…` too.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub patches: Vec<Patch>,
    #[serde(skip)]
    pub oid: Oid,
}

impl CommitInfo {
    /// What a build of this subject is: the commit id, and the patches' hash after a `+`.
    pub fn key(&self) -> String {
        match self.patches.is_empty() {
            true => self.id.clone(),
            false => format!("{}+{}", self.id, patch::key(&self.patches)),
        }
    }

    /// The committer date, with the author date when it is more than a day
    /// away: `2023-02-07 (authored 2022-11-30)`.
    pub fn dates(&self) -> String {
        match &self.author_date {
            Some(a) => format!("{} (authored {a})", self.date),
            None => self.date.clone(),
        }
    }
}

/// YYYY-MM-DD of a git time, in its own time zone.
fn day(t: git2::Time) -> String {
    let zone = chrono::FixedOffset::east_opt(t.offset_minutes() * 60)
        .unwrap_or(chrono::FixedOffset::east_opt(0).expect("zero offset"));
    chrono::DateTime::from_timestamp(t.seconds(), 0)
        .map(|d| d.with_timezone(&zone).format("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

/// The commits a bisect runs over: oldest (the good end, or the merge base)
/// first, the bad end last.
pub struct Range {
    pub commits: Vec<CommitInfo>,
    pub good: CommitInfo,
    pub bad: CommitInfo,
    /// Set when GOOD is not an ancestor of BAD (e.g. release tags on release
    /// branches): the list then starts at this merge base.
    pub merge_base: Option<CommitInfo>,
}

impl Repo {
    pub fn open(dir: &Path) -> Result<Repo> {
        if !dir.exists() {
            bail!("repository {} does not exist", dir.display());
        }
        static EXTENSIONS: std::sync::Once = std::sync::Once::new();
        EXTENSIONS.call_once(|| {
            // Partial clones made by older git carry extensions.partialClone,
            // which libgit2 refuses unless told it is understood. It is: a
            // missing promised object is fetched through git (export_tree).
            // SAFETY: libgit2 keeps this list in a static; it is set once,
            // here, before any repository is opened.
            let _ = unsafe { git2::opts::set_extensions(&["partialclone"]) };
        });
        let repo = Repository::open(dir).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a git repository ({})",
                dir.display(),
                e.message()
            )
        })?;
        let promisor = promisor_remote(&repo);
        Ok(Repo {
            repo,
            path: dir.to_path_buf(),
            promisor,
        })
    }
}

/// The promisor remote of a partial clone: `extensions.partialClone`
/// (older git) or the first `remote.<name>.promisor = true`.
fn promisor_remote(repo: &Repository) -> Option<String> {
    let cfg = repo.config().ok()?.snapshot().ok()?;
    if let Ok(name) = cfg.get_string("extensions.partialclone") {
        return Some(name);
    }
    let mut found = None;
    let entries = cfg.entries(Some(r"^remote\..*\.promisor$")).ok()?;
    entries
        .for_each(|e| {
            if found.is_none()
                && e.value()
                    .is_some_and(|v| matches!(v, "true" | "yes" | "on" | "1"))
            {
                found = e
                    .name()
                    .and_then(|n| n.strip_prefix("remote."))
                    .and_then(|n| n.strip_suffix(".promisor"))
                    .map(String::from);
            }
        })
        .ok()?;
    found
}

#[cfg(test)]
mod tests;
