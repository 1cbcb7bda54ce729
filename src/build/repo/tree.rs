//! A commit's trees and files as libgit2 reads them, with what it lacks fetched.

use anyhow::{Context, Result};
use git2::{ErrorCode, ObjectType, Oid, Tree};
use std::path::Path;

use super::{CommitInfo, Repo};

impl Repo {
    /// The commit's root tree. In a partial clone without trees
    /// (`--filter=tree:0`) it is fetched, with every tree below it, first.
    pub(super) fn tree_of(&self, c: &CommitInfo) -> Result<Tree<'_>> {
        let commit = self.repo.find_commit(c.oid)?;
        self.tree(commit.tree_id(), c, "")
    }

    /// Tree `oid` (at `path` in commit `c`), fetched from the promisor remote
    /// when it is missing.
    pub(super) fn tree(&self, oid: Oid, c: &CommitInfo, path: &str) -> Result<Tree<'_>> {
        match self.repo.find_tree(oid) {
            Ok(t) => return Ok(t),
            Err(e) if e.code() != ErrorCode::NotFound => {
                return Err(e)
                    .with_context(|| format!("reading tree {oid} ({path}/) of {}", c.short))
            }
            Err(_) => {}
        }
        let why = match &self.promisor {
            // Fetching a tree with blob:none brings every tree below it in
            // one round trip, where a walk would fetch them one by one.
            Some(_) => self.fetch_promised(&[oid]).err(),
            None => None,
        };
        self.repo
            .find_tree(oid)
            .map_err(|_| self.missing_error(oid, &format!("{path}/"), c, why.as_deref(), 0))
    }

    /// The contents of one file of the commit's tree, if it has that file.
    /// A blob that is missing from the object database is materialized
    /// through `git` (see [`Repo::export_tree`]), or is an error: it is
    /// never taken for an absent file.
    pub fn read_file(&self, c: &CommitInfo, path: &str) -> Result<Option<Vec<u8>>> {
        let tree = self.tree_of(c)?;
        let entry = match tree.get_path(Path::new(path)) {
            Ok(e) => e,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("reading {path} of {}", c.short)),
        };
        if entry.kind() != Some(ObjectType::Blob) {
            return Ok(None);
        }
        if let Ok(blob) = self.repo.find_blob(entry.id()) {
            return Ok(Some(blob.content().to_vec()));
        }
        let (mut got, why) = self.materialize(&[entry.id()]);
        match got.remove(&entry.id()) {
            Some(bytes) => Ok(Some(bytes)),
            None => Err(self.missing_error(entry.id(), path, c, why.as_deref(), 0)),
        }
    }
}
