//! Read-only access to the user's OpenSSL repository with git2. Nothing here
//! moves HEAD, writes the index or adds worktree metadata: trees are written
//! into the cache straight from their blobs.

use anyhow::{bail, Context, Result};
use git2::{ObjectType, Oid, Repository, Sort, TreeWalkMode, TreeWalkResult};
use serde::Serialize;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

pub struct Repo {
    repo: Repository,
    pub path: PathBuf,
}

#[derive(Debug, Clone, Serialize)]
pub struct CommitInfo {
    pub id: String,
    pub short: String,
    pub summary: String,
    pub author: String,
    /// ISO 8601 date of the commit (author date).
    pub date: String,
    #[serde(skip)]
    pub oid: Oid,
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
        let repo = Repository::open(dir).map_err(|e| {
            anyhow::anyhow!(
                "{} is not a git repository ({})",
                dir.display(),
                e.message()
            )
        })?;
        Ok(Repo {
            repo,
            path: dir.to_path_buf(),
        })
    }

    /// Resolve like git does: sha prefixes, tags, branches, REV^, REV~3.
    pub fn resolve(&self, rev: &str) -> Result<CommitInfo> {
        let rev = rev.trim();
        // An argument such as --upload-pack=… is never a revision.
        if rev.is_empty() || rev.starts_with('-') || rev.contains('\0') {
            bail!("'{rev}' is not a valid revision");
        }
        let obj = self
            .repo
            .revparse_single(rev)
            .map_err(|_| anyhow::anyhow!("unknown revision '{rev}' in {}", self.path.display()))?;
        let commit = obj
            .peel_to_commit()
            .map_err(|_| anyhow::anyhow!("revision '{rev}' is not a commit"))?;
        let info = self.info(commit.id())?;
        let tree = commit.tree()?;
        if tree.get_name("Configure").is_none() {
            bail!(
                "{} at {} does not look like OpenSSL (no Configure in its tree)",
                self.path.display(),
                info.short
            );
        }
        Ok(info)
    }

    pub fn info(&self, oid: Oid) -> Result<CommitInfo> {
        let c = self.repo.find_commit(oid)?;
        let t = c.author().when();
        let date = chrono::DateTime::from_timestamp(t.seconds(), 0)
            .map(|d| {
                d.with_timezone(
                    &chrono::FixedOffset::east_opt(t.offset_minutes() * 60)
                        .unwrap_or(chrono::FixedOffset::east_opt(0).expect("zero offset")),
                )
                .format("%Y-%m-%d")
                .to_string()
            })
            .unwrap_or_default();
        let id = oid.to_string();
        let author_name = c.author().name().unwrap_or("").to_string();
        Ok(CommitInfo {
            short: id[..10].to_string(),
            id,
            summary: c.summary().unwrap_or("").to_string(),
            author: author_name,
            date,
            oid,
        })
    }

    pub fn parent(&self, c: &CommitInfo) -> Result<CommitInfo> {
        let commit = self.repo.find_commit(c.oid)?;
        let p = commit
            .parent_id(0)
            .map_err(|_| anyhow::anyhow!("commit {} has no parent", c.short))?;
        self.info(p)
    }

    pub fn is_ancestor(&self, a: Oid, b: Oid) -> Result<bool> {
        Ok(a == b || self.repo.graph_descendant_of(b, a)?)
    }

    /// The commits of GOOD..BAD along BAD's first-parent line, oldest first,
    /// starting at GOOD (or at the merge base when GOOD is not an ancestor).
    pub fn range(&self, good: &str, bad: &str) -> Result<Range> {
        let g = self.resolve(good)?;
        let b = self.resolve(bad)?;
        if g.oid == b.oid {
            bail!("GOOD and BAD are the same commit ({})", g.short);
        }
        if self.is_ancestor(b.oid, g.oid)? {
            bail!(
                "{bad} is an ancestor of {good}: the range is reversed (did you mean {bad}..{good}?)"
            );
        }
        let base = self
            .repo
            .merge_base(g.oid, b.oid)
            .map_err(|_| anyhow::anyhow!("{good} and {bad} have no common history"))?;
        let start = if base == g.oid { g.oid } else { base };
        let mut walk = self.repo.revwalk()?;
        walk.push(b.oid)?;
        walk.hide(start)?;
        walk.simplify_first_parent()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)?;
        let mut commits = vec![self.info(start)?];
        for oid in walk {
            commits.push(self.info(oid?)?);
        }
        Ok(Range {
            merge_base: (start != g.oid).then(|| commits[0].clone()),
            commits,
            good: g,
            bad: b,
        })
    }

    /// The contents of one file of the commit's tree, if it has that file.
    pub fn read_file(&self, c: &CommitInfo, path: &str) -> Result<Option<Vec<u8>>> {
        let tree = self.repo.find_commit(c.oid)?.tree()?;
        let Ok(entry) = tree.get_path(Path::new(path)) else {
            return Ok(None);
        };
        let Ok(blob) = self.repo.find_blob(entry.id()) else {
            return Ok(None);
        };
        Ok(Some(blob.content().to_vec()))
    }

    /// Write the commit's tree into `dest` (which must not exist), from blobs.
    pub fn export_tree(&self, c: &CommitInfo, dest: &Path) -> Result<()> {
        let commit = self.repo.find_commit(c.oid)?;
        let tree = commit.tree()?;
        fs::create_dir_all(dest)?;
        let mut failure: Option<anyhow::Error> = None;
        tree.walk(TreeWalkMode::PreOrder, |root, entry| {
            let name = match entry.name() {
                Some(n) => n,
                None => return TreeWalkResult::Skip,
            };
            // Paths come from the repository: refuse anything that could
            // escape the destination.
            if name == ".."
                || name == "."
                || name.contains('/')
                || root.split('/').any(|p| p == "..")
            {
                failure = Some(anyhow::anyhow!("unsafe path {root}{name} in {}", c.short));
                return TreeWalkResult::Abort;
            }
            let path = dest.join(root).join(name);
            let res = (|| -> Result<()> {
                match entry.kind() {
                    Some(ObjectType::Tree) => fs::create_dir_all(&path)?,
                    Some(ObjectType::Blob) => {
                        let blob = self.repo.find_blob(entry.id())?;
                        let mode = entry.filemode();
                        if mode == 0o120000 {
                            let target = String::from_utf8_lossy(blob.content()).into_owned();
                            std::os::unix::fs::symlink(target, &path)?;
                        } else {
                            let mut f = fs::File::create(&path)?;
                            f.write_all(blob.content())?;
                            let perm = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
                            f.set_permissions(fs::Permissions::from_mode(perm))?;
                        }
                    }
                    // Submodules (gitlinks) have no content in this repository.
                    _ => {}
                }
                Ok(())
            })();
            match res {
                Ok(()) => TreeWalkResult::Ok,
                Err(e) => {
                    failure = Some(e.context(format!("writing {}", path.display())));
                    TreeWalkResult::Abort
                }
            }
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        Ok(())
    }
}

/// Split `GOOD..BAD`.
pub fn split_range(spec: &str) -> Result<(String, String)> {
    let (g, b) = spec
        .split_once("..")
        .with_context(|| format!("malformed range '{spec}' (expected GOOD..BAD)"))?;
    if g.is_empty() || b.is_empty() || b.starts_with('.') {
        bail!("malformed range '{spec}' (expected GOOD..BAD)");
    }
    Ok((g.to_string(), b.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_split() {
        assert_eq!(
            split_range("openssl-3.0.0..openssl-3.2.1").unwrap(),
            ("openssl-3.0.0".into(), "openssl-3.2.1".into())
        );
        assert!(split_range("a").is_err());
        assert!(split_range("..b").is_err());
        assert!(split_range("a...b").is_err());
    }
}
