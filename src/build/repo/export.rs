//! A commit's tree written into a directory from its blobs, touching only what differs.

use anyhow::{bail, Context, Result};
use git2::{ErrorCode, ObjectType, Oid, Tree};
use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{CommitInfo, Repo};
use crate::progress;

/// Directories of an OpenSSL tree whose files no build reads, so a blob
/// missing there is left out instead of fetched or reported. A build runs
/// `config` (which reads Configure, Configurations/, util/*.pm and the
/// build.info files named by SUBDIRS, test/build.info included when tests
/// are enabled), `make` of the recipe's targets and the install targets.
/// Nothing of that reads `test/recipes/` (the scripts and data of `make
/// test`, read only by test/run_tests.pl), `fuzz/corpora/` (fuzzer
/// inputs, read only when a fuzzer is run) or `.github/` (GitHub Actions
/// workflows and their ABI baselines, read only by CI; the public mirror of
/// OpenSSL lacks a blob there, which stopped a 2,000-commit scan).
/// Deliberately short: every other
/// file, test/*.c and doc/ included, may be read by some recipe (a recipe
/// may build `all`, which builds tests and docs), so it is fetched or
/// reported. Not applied when a recipe's make targets run the tests.
pub const UNREAD_BY_BUILDS: &[&str] = &[".github/", "test/recipes/", "fuzz/corpora/"];

/// What [`Repo::export_tree`] did beyond writing the tree.
#[derive(Debug, Default)]
pub struct Export {
    /// Files whose blobs are missing and that no build reads: not written.
    pub left_out: Vec<String>,
    /// Blobs libgit2 could not read, obtained through `git`.
    pub materialized: usize,
    /// Files written (new, or different from what the destination held).
    pub written: Vec<String>,
    /// The files of `written` the destination did not hold at all.
    pub added: Vec<String>,
    /// Files (and symbolic links) removed because the tree does not have them.
    pub removed: Vec<String>,
    /// Files the destination already held with this content and mode.
    pub unchanged: usize,
}

impl Export {
    /// Records `path` as written; called before it is written, while the destination still
    /// shows whether the file is new.
    fn note_written(&mut self, dest: &Path, path: &str) {
        if fs::symlink_metadata(dest.join(path)).is_err() {
            self.added.push(path.to_string());
        }
        self.written.push(path.to_string());
    }
}

/// A directory or file of a tree, path relative to its root.
struct Item {
    path: String,
    kind: ItemKind,
}

enum ItemKind {
    Dir,
    File { oid: Oid, mode: i32 },
}

impl Item {
    fn oid(&self) -> Option<Oid> {
        match self.kind {
            ItemKind::File { oid, .. } => Some(oid),
            ItemKind::Dir => None,
        }
    }
}
impl Repo {
    /// Make `dest` hold exactly the commit's tree, from its blobs. `dest`
    /// may be empty, missing, or hold another commit's tree (an incremental
    /// build): files whose content and mode already match are left alone,
    /// keeping their mtimes, so make rebuilds only what depends on a change;
    /// the others are rewritten, and anything the tree does not have is
    /// removed. Nothing of the repository is written.
    ///
    /// Missing objects. libgit2 reads only the local object database. A blob
    /// it cannot find is
    /// - left out when its path starts with one of `leave_out` (data no
    ///   build reads, see [`UNREAD_BY_BUILDS`]): reported in the result;
    /// - otherwise materialized through the `git` command: in a partial
    ///   clone, all of this commit's missing blobs are fetched from its
    ///   promisor remote in one `git fetch` (the request git itself makes
    ///   when a command needs promised objects), then whatever is still
    ///   missing is read with `git cat-file --batch` (which also sees
    ///   objects libgit2 cannot, e.g. through alternates it does not
    ///   follow);
    /// - otherwise an error naming the object, its path, and the fix.
    ///
    /// Fetching promised objects adds packs to the repository's object
    /// database, exactly as `git show` or `git checkout` of that commit would
    /// in a partial clone. Its HEAD, refs, index, worktree and config are
    /// never written, which is what "the repository is only read" protects:
    /// the user's view of the repository does not change.
    pub fn export_tree(&self, c: &CommitInfo, dest: &Path, leave_out: &[&str]) -> Result<Export> {
        let tree = self.tree_of(c)?;
        let mut items = Vec::new();
        self.collect(c, &tree, "", &mut items)?;
        fs::create_dir_all(dest).with_context(|| format!("creating {}", dest.display()))?;
        let mut export = Export::default();
        let missing = self.write_items(c, &items, dest, leave_out, &mut export)?;
        if !missing.is_empty() {
            self.write_missing(c, missing, dest, &mut export)?;
        }
        // Left-out files are not part of the result either: a stale copy
        // from another commit must not stay behind.
        let keep: HashSet<&str> = items
            .iter()
            .map(|it| it.path.as_str())
            .filter(|p| !export.left_out.iter().any(|l| l == p))
            .collect();
        remove_others(dest, "", &keep, &mut export.removed)?;
        Ok(export)
    }

    /// Writes what differs of `items` under `dest` from the blobs libgit2 can read; returns the
    /// files whose blobs are missing (those under `leave_out` are only listed as left out).
    fn write_items<'i>(
        &self,
        c: &CommitInfo,
        items: &'i [Item],
        dest: &Path,
        leave_out: &[&str],
        export: &mut Export,
    ) -> Result<Vec<&'i Item>> {
        let mut missing: Vec<&Item> = Vec::new();
        for it in items {
            let p = dest.join(&it.path);
            match it.kind {
                ItemKind::Dir => {
                    if fs::symlink_metadata(&p).is_ok_and(|m| !m.is_dir()) {
                        remove_path(&p)?;
                    }
                    fs::create_dir_all(&p).with_context(|| format!("creating {}", p.display()))?
                }
                ItemKind::File { oid, mode } => {
                    if same_file(&p, oid, mode) {
                        export.unchanged += 1;
                        continue;
                    }
                    match self.repo.find_blob(oid) {
                        Ok(blob) => {
                            export.note_written(dest, &it.path);
                            write_entry(dest, it, mode, blob.content())?;
                        }
                        Err(e) if e.code() == ErrorCode::NotFound => {
                            if leave_out.iter().any(|p| it.path.starts_with(p)) {
                                export.left_out.push(it.path.clone());
                            } else {
                                missing.push(it);
                            }
                        }
                        Err(e) => {
                            return Err(e).with_context(|| {
                                format!("reading {oid} ({}) of {}", it.path, c.short)
                            })
                        }
                    }
                }
            }
        }
        Ok(missing)
    }

    /// Writes the files whose blobs libgit2 lacks, read through git (see [`Repo::export_tree`]);
    /// one still missing is an error.
    fn write_missing(
        &self,
        c: &CommitInfo,
        missing: Vec<&Item>,
        dest: &Path,
        export: &mut Export,
    ) -> Result<()> {
        let oids: Vec<Oid> = missing.iter().filter_map(|it| it.oid()).collect();
        progress::detail(&format!(
            "{}: {} blob(s) missing from {}; reading them through git",
            c.short,
            oids.len(),
            self.path.display()
        ));
        let (got, why) = self.materialize(&oids);
        let absent: Vec<&&Item> = missing
            .iter()
            .filter(|it| it.oid().is_some_and(|o| !got.contains_key(&o)))
            .collect();
        if let Some(first) = absent.first() {
            let oid = first.oid().expect("files have an oid");
            return Err(self.missing_error(oid, &first.path, c, why.as_deref(), absent.len() - 1));
        }
        for it in missing {
            if let ItemKind::File { oid, mode } = it.kind {
                export.note_written(dest, &it.path);
                write_entry(dest, it, mode, &got[&oid])?;
            }
        }
        export.materialized = got.len();
        Ok(())
    }

    /// Every directory and file of `tree`, parents before children, with
    /// names checked: a repository is input, and a name such as `..` must
    /// not write outside the destination.
    fn collect(
        &self,
        c: &CommitInfo,
        tree: &Tree,
        prefix: &str,
        out: &mut Vec<Item>,
    ) -> Result<()> {
        for entry in tree.iter() {
            let name = std::str::from_utf8(entry.name_bytes()).map_err(|_| {
                anyhow::anyhow!(
                    "file name {:?} in {prefix}/ of {} is not UTF-8",
                    String::from_utf8_lossy(entry.name_bytes()),
                    c.short
                )
            })?;
            if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
                bail!("unsafe path {prefix}{name} in {}", c.short);
            }
            let path = format!("{prefix}{name}");
            match entry.kind() {
                Some(ObjectType::Tree) => {
                    out.push(Item {
                        path: path.clone(),
                        kind: ItemKind::Dir,
                    });
                    let sub = self.tree(entry.id(), c, &path)?;
                    self.collect(c, &sub, &format!("{path}/"), out)?;
                }
                Some(ObjectType::Blob) => out.push(Item {
                    path,
                    kind: ItemKind::File {
                        oid: entry.id(),
                        mode: entry.filemode(),
                    },
                }),
                // Submodules (gitlinks) have no content in this repository.
                _ => {}
            }
        }
        Ok(())
    }
}

/// Does `p` hold blob `oid` with the file type and executable bit of `mode`?
fn same_file(p: &Path, oid: Oid, mode: i32) -> bool {
    let Ok(m) = fs::symlink_metadata(p) else {
        return false;
    };
    if mode == 0o120000 {
        m.file_type().is_symlink()
            && fs::read_link(p).is_ok_and(|t| {
                use std::os::unix::ffi::OsStrExt;
                Oid::hash_object(ObjectType::Blob, t.as_os_str().as_bytes()).ok() == Some(oid)
            })
    } else {
        m.is_file()
            && (m.permissions().mode() & 0o111 != 0) == (mode & 0o111 != 0)
            && Oid::hash_file(ObjectType::Blob, p).ok() == Some(oid)
    }
}

fn remove_path(p: &Path) -> Result<()> {
    let is_dir = fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    if is_dir {
        fs::remove_dir_all(p)
    } else {
        fs::remove_file(p)
    }
    .with_context(|| format!("removing {}", p.display()))
}

/// Removes what `keep` (paths relative to the root) does not name, below
/// `dir`; records removed files (not directories).
fn remove_others(
    root: &Path,
    dir: &str,
    keep: &HashSet<&str>,
    removed: &mut Vec<String>,
) -> Result<()> {
    let abs = root.join(dir);
    let rd = fs::read_dir(&abs).with_context(|| format!("reading {}", abs.display()))?;
    for e in rd {
        let e = e.with_context(|| format!("reading {}", abs.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if dir.is_empty() {
            name
        } else {
            format!("{dir}/{name}")
        };
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if !keep.contains(rel.as_str()) {
            // Only files count: the empty directories OpenSSL's build
            // creates in the source tree (doc/html, doc/man) are no change,
            // but a removed directory's headers are.
            if is_dir {
                remove_others(root, &rel, &HashSet::new(), removed)?;
            } else {
                removed.push(rel);
            }
            remove_path(&e.path())?;
        } else if is_dir {
            remove_others(root, &rel, keep, removed)?;
        }
    }
    Ok(())
}

fn write_entry(dest: &Path, it: &Item, mode: i32, content: &[u8]) -> Result<()> {
    let path = dest.join(&it.path);
    if fs::symlink_metadata(&path).is_ok() {
        // Never write through a symbolic link, or into an old file's inode
        // (a hard link elsewhere would change too).
        remove_path(&path)?;
    }
    let res = (|| -> std::io::Result<()> {
        if mode == 0o120000 {
            let target = String::from_utf8_lossy(content).into_owned();
            std::os::unix::fs::symlink(target, &path)
        } else {
            let mut f = fs::File::create(&path)?;
            f.write_all(content)?;
            let perm = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
            f.set_permissions(fs::Permissions::from_mode(perm))
        }
    })();
    res.with_context(|| format!("writing {}", path.display()))
}
