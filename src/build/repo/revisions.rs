//! Revisions and ranges: what a revision (or `REV+FILE…`) names, a commit's parent, and the
//! commits of `GOOD..BAD`.

use anyhow::{bail, Context, Result};
use git2::{Oid, Sort};
use std::fs;
use std::path::Path;

use super::{day, CommitInfo, Range, Repo};
use crate::build::patch::{self, Patch};

impl Repo {
    /// A revision, or a revision with patch files applied: `REV+FILE[+FILE…]` (see
    /// [`patch`](crate::build::patch)) when `text` is no revision itself and every part after
    /// a `+` is a file. The patches must apply to the commit (checked without building).
    pub fn resolve_subject(&self, text: &str) -> Result<CommitInfo> {
        let split =
            patch::split(text.trim()).filter(|_| self.repo.revparse_single(text.trim()).is_err());
        let Some((rev, files)) = split else {
            return self.resolve(text);
        };
        let mut c = self.resolve(rev)?;
        for f in files {
            let p = Patch::load(Path::new(f))?;
            if c.patches.iter().any(|q| q.path == p.path) {
                bail!("patch {f} is given twice in '{text}'");
            }
            c.patches.push(p);
        }
        let onto = format!("{rev} ({})", c.short);
        patch::check(&c.patches, &onto, &|path| self.read_file(&c, path))?;
        c.short = format!("{}{}", c.short, patch::suffix(&c.patches));
        Ok(c)
    }

    /// Resolve like git does: sha prefixes, tags, branches, REV^, REV~3.
    pub fn resolve(&self, rev: &str) -> Result<CommitInfo> {
        let rev = rev.trim();
        // An argument such as --upload-pack=… is never a revision.
        if rev.is_empty() || rev.starts_with('-') || rev.contains('\0') {
            bail!("'{rev}' is not a valid revision");
        }
        let obj = self.repo.revparse_single(rev).map_err(|_| {
            if self.repo.is_shallow() {
                anyhow::anyhow!(
                    "unknown revision '{rev}' in {}, a shallow clone: it may lie beyond the shallow boundary; fetch the history with `git -C {} fetch --unshallow`",
                    self.path.display(),
                    self.path.display()
                )
            } else if patch::split(rev).is_some() {
                anyhow::anyhow!(
                    "unknown revision '{rev}' in {}: a revision with patches (REV+FILE) is measured by run, compare, verify, explain, gate, matrix and build, not searched",
                    self.path.display()
                )
            } else {
                anyhow::anyhow!("unknown revision '{rev}' in {}", self.path.display())
            }
        })?;
        let commit = obj
            .peel_to_commit()
            .map_err(|_| anyhow::anyhow!("revision '{rev}' is not a commit"))?;
        let info = self.info(commit.id())?;
        let tree = self.tree_of(&info)?;
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
        let committed = c.committer().when();
        let authored = c.author().when();
        let date = day(committed);
        let author_date =
            ((authored.seconds() - committed.seconds()).abs() > 86_400).then(|| day(authored));
        let id = oid.to_string();
        let author_name = c.author().name().unwrap_or("").to_string();
        Ok(CommitInfo {
            short: id[..10].to_string(),
            id,
            summary: c.summary().unwrap_or("").to_string(),
            author: author_name,
            date,
            author_date,
            patches: Vec::new(),
            oid,
        })
    }

    pub fn parent(&self, c: &CommitInfo) -> Result<CommitInfo> {
        let commit = self.repo.find_commit(c.oid)?;
        let p = commit.parent_id(0).map_err(|_| {
            if self.shallow_roots().contains(&c.oid) {
                anyhow::anyhow!(
                    "the parent of {} is beyond the shallow boundary of {}; fetch the history with `git -C {} fetch --unshallow`",
                    c.short,
                    self.path.display(),
                    self.path.display()
                )
            } else {
                anyhow::anyhow!("commit {} has no parent", c.short)
            }
        })?;
        self.info(p)
    }

    /// How many commits lie between `a` and `b` (reachable from one and not the other), or
    /// `None` when either is unknown here.
    pub fn distance(&self, a: &str, b: &str) -> Option<usize> {
        let (a, b) = (Oid::from_str(a).ok()?, Oid::from_str(b).ok()?);
        let (ahead, behind) = self.repo.graph_ahead_behind(a, b).ok()?;
        Some(ahead + behind)
    }

    pub fn is_ancestor(&self, a: Oid, b: Oid) -> Result<bool> {
        Ok(a == b || self.repo.graph_descendant_of(b, a)?)
    }

    /// The commits whose parents a shallow clone does not have (the
    /// `shallow` file of its git directory, shared by its worktrees).
    fn shallow_roots(&self) -> Vec<Oid> {
        if !self.repo.is_shallow() {
            return Vec::new();
        }
        fs::read_to_string(self.repo.commondir().join("shallow"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| Oid::from_str(l.trim()).ok())
            .collect()
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
        let base = self.repo.merge_base(g.oid, b.oid).map_err(|_| {
            if self.repo.is_shallow() {
                anyhow::anyhow!(
                    "{good} and {bad} have no common history in {}, a shallow clone: the range crosses its shallow boundary; fetch the history with `git -C {} fetch --unshallow`",
                    self.path.display(),
                    self.path.display()
                )
            } else {
                anyhow::anyhow!("{good} and {bad} have no common history")
            }
        })?;
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
