//! A revision with patch files applied: `openssl-3.2.1+ecdsa.patch` (`REV+FILE[+FILE…]`) is
//! built like any revision — exported into a work tree, then the patches applied in order
//! with `git apply` — and cached under the commit and the patches' content hashes. This is how
//! a patch posted to a list, or a backport that is no commit of the repository, is measured
//! before and after.
//!
//! A patch that does not apply is an error of the invocation (exit 2), found before anything
//! is built: the files the patches touch are taken from the commit into a scratch directory
//! and the patches applied there first. The user's repository is only read.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::hashing::{self, Hasher};

/// One patch file of a subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Patch {
    /// The file name, as results show it (`ecdsa.patch`).
    pub name: String,
    /// Where it was read from (absolute).
    pub path: PathBuf,
    /// sha256 of its content: part of the build's cache key.
    pub sha256: String,
}

impl Patch {
    /// Reads and hashes the patch at `path`; it must be a file that `git apply` reads as a
    /// patch of at least one file.
    pub fn load(path: &Path) -> Result<Patch> {
        let abs = std::path::absolute(path)
            .with_context(|| format!("resolving patch file {}", path.display()))?;
        if !abs.is_file() {
            bail!("patch file {} does not exist", path.display());
        }
        let files = touched_files(&abs)?;
        if files.is_empty() {
            bail!("{} is not a patch (it changes no file)", path.display());
        }
        Ok(Patch {
            name: abs
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            sha256: hashing::file_sha256(&abs)?,
            path: abs,
        })
    }
}

/// `+a.patch+b.patch`: how a subject's patches are written after its revision.
pub fn suffix(patches: &[Patch]) -> String {
    patches.iter().map(|p| format!("+{}", p.name)).collect()
}

/// One hash of the patches in their order, for cache keys; empty without patches.
pub fn key(patches: &[Patch]) -> String {
    if patches.is_empty() {
        return String::new();
    }
    let mut h = Hasher::new();
    for p in patches {
        h.field(&p.sha256);
    }
    h.finish()[..12].to_string()
}

/// `REV+FILE+FILE…` split into the revision and the patch files, when `text` is one:
/// every part after the first `+` must name an existing file. `None`: `text` names no patch
/// (a plain revision, which may itself contain `+`).
pub fn split(text: &str) -> Option<(&str, Vec<&str>)> {
    let mut parts = text.split('+');
    let rev = parts.next()?;
    let files: Vec<&str> = parts.collect();
    let all_files = !rev.is_empty()
        && !files.is_empty()
        && files
            .iter()
            .all(|f| !f.is_empty() && Path::new(f).is_file());
    all_files.then_some((rev, files))
}

/// The paths a patch changes, as `git apply --numstat` reads them.
fn touched_files(patch: &Path) -> Result<Vec<String>> {
    let scratch = tempfile::tempdir()?;
    let out = git_apply(scratch.path())
        .arg("--numstat")
        .arg(patch)
        .output()
        .context("cannot run git apply")?;
    if !out.status.success() {
        bail!(
            "{} is not a patch git apply can read: {}",
            patch.display(),
            first_error(&String::from_utf8_lossy(&out.stderr))
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.splitn(3, '\t').nth(2))
        .map(|p| p.to_string())
        .collect())
}

/// `git apply` in `dir`, which must not be taken for part of any repository around it
/// (the cache may lie inside one).
fn git_apply(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env("GIT_CEILING_DIRECTORIES", dir.parent().unwrap_or(dir))
        .args(["apply", "--whitespace=nowarn"]);
    c
}

/// Applies `patches` in order to the tree in `dir`. The error names the patch and the first
/// hunk that failed (`patch failed: crypto/ec/ecdsa_ossl.c:25`); on error `dir` may hold
/// the patches before it.
pub fn apply(dir: &Path, patches: &[Patch], onto: &str) -> Result<Vec<String>> {
    let mut changed = Vec::new();
    for p in patches {
        let now = hashing::file_sha256(&p.path)?;
        if now != p.sha256 {
            bail!(
                "patch {} changed while perfbisect was using it",
                p.path.display()
            );
        }
        let out = git_apply(dir)
            .arg(&p.path)
            .output()
            .context("cannot run git apply")?;
        if !out.status.success() {
            bail!(
                "patch {} does not apply to {onto}: {}",
                p.path.display(),
                first_error(&String::from_utf8_lossy(&out.stderr))
            );
        }
        changed.extend(touched_files(&p.path)?);
    }
    changed.sort();
    changed.dedup();
    Ok(changed)
}

/// Applies `patches` to the files they touch, read from the commit by `read` (a path of the
/// tree → its content, `None` when the commit has no such file), in a scratch directory:
/// the check before any build.
pub fn check(
    patches: &[Patch],
    onto: &str,
    read: &dyn Fn(&str) -> Result<Option<Vec<u8>>>,
) -> Result<()> {
    let scratch = tempfile::tempdir()?;
    let tree = scratch.path().join("tree");
    fs::create_dir_all(&tree)?;
    for p in patches {
        for f in touched_files(&p.path)? {
            let to = tree.join(&f);
            if to.exists() || f.split('/').any(|c| c == "..") {
                continue;
            }
            if let Some(bytes) = read(&f)? {
                fs::create_dir_all(to.parent().expect("a file in the tree"))?;
                fs::write(&to, bytes)?;
            }
        }
    }
    apply(&tree, patches, onto).map(|_| ())
}

/// git's first `error:` line, without the prefix: for a hunk that does not apply,
/// `patch failed: FILE:LINE`.
fn first_error(stderr: &str) -> String {
    let errors: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("error: "))
        .collect();
    let hunk = errors.iter().find(|l| l.starts_with("patch failed: "));
    hunk.or(errors.first())
        .map(|s| s.to_string())
        .unwrap_or_else(|| stderr.trim().lines().next().unwrap_or("").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str =
        "--- a/x.c\n+++ b/x.c\n@@ -1,3 +1,3 @@\n int a;\n-int b;\n+int c;\n int d;\n";

    #[test]
    fn applies_in_a_scratch_tree_and_names_the_failed_hunk() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("c.patch");
        fs::write(&file, PATCH).unwrap();
        let p = Patch::load(&file).unwrap();
        assert_eq!(p.name, "c.patch");
        assert_eq!(key(std::slice::from_ref(&p)).len(), 12);
        let ok = |path: &str| -> Result<Option<Vec<u8>>> {
            Ok((path == "x.c").then(|| b"int a;\nint b;\nint d;\n".to_vec()))
        };
        check(std::slice::from_ref(&p), "v1 (abc)", &ok).unwrap();
        let other =
            |_: &str| -> Result<Option<Vec<u8>>> { Ok(Some(b"int a;\nint z;\nint d;\n".to_vec())) };
        let e = check(std::slice::from_ref(&p), "v1 (abc)", &other)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("c.patch does not apply to v1 (abc): patch failed: x.c:1"),
            "{e}"
        );
        // A file that is no patch, and one that does not exist.
        let text = d.path().join("notes.txt");
        fs::write(&text, "just text\n").unwrap();
        let e = Patch::load(&text).unwrap_err().to_string();
        assert!(e.contains("is not a patch"), "{e}");
        assert!(Patch::load(&d.path().join("gone.patch")).is_err());
    }

    #[test]
    fn a_subject_names_its_patches_after_a_plus() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.patch");
        fs::write(&a, PATCH).unwrap();
        let a = a.to_str().unwrap();
        let text = format!("openssl-3.2.1+{a}");
        assert_eq!(split(&text), Some(("openssl-3.2.1", vec![a])));
        let two = format!("v1+{a}+{a}");
        assert_eq!(split(&two).unwrap().1.len(), 2);
        // Not files: a revision that happens to hold a '+'.
        assert_eq!(split("feature+x"), None);
        assert_eq!(split("openssl-3.2.1"), None);
        assert_eq!(split(&format!("+{a}")), None);
    }
}
