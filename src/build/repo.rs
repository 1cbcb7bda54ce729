//! Read-only access to the user's OpenSSL repository with git2. Nothing here
//! moves HEAD, writes the index or adds worktree metadata: trees are written
//! into the cache straight from their blobs.

use anyhow::{bail, Context, Result};
use git2::{ErrorCode, ObjectType, Oid, Repository, Sort, Tree};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::build::patch::{self, Patch};
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

pub struct Repo {
    repo: Repository,
    pub path: PathBuf,
    /// The remote that promises this partial clone's missing objects.
    promisor: Option<String>,
}

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

    /// The commit's root tree. In a partial clone without trees
    /// (`--filter=tree:0`) it is fetched, with every tree below it, first.
    fn tree_of(&self, c: &CommitInfo) -> Result<Tree<'_>> {
        let commit = self.repo.find_commit(c.oid)?;
        self.tree(commit.tree_id(), c, "")
    }

    /// Tree `oid` (at `path` in commit `c`), fetched from the promisor remote
    /// when it is missing.
    fn tree(&self, oid: Oid, c: &CommitInfo, path: &str) -> Result<Tree<'_>> {
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

    /// Reads blobs libgit2 cannot find, through the `git` command (see
    /// [`Repo::export_tree`]). Returns what could be read, and why the rest
    /// could not when git said so.
    fn materialize(&self, oids: &[Oid]) -> (HashMap<Oid, Vec<u8>>, Option<String>) {
        let mut got = HashMap::new();
        let mut why = None;
        let mut rest: Vec<Oid> = oids.to_vec();
        if self.promisor.is_some() {
            if let Err(e) = self.fetch_promised(&rest) {
                why = Some(e);
            }
            rest.retain(|oid| match self.repo.find_blob(*oid) {
                Ok(b) => {
                    got.insert(*oid, b.content().to_vec());
                    false
                }
                Err(_) => true,
            });
        }
        if !rest.is_empty() {
            match self.cat_file(&rest) {
                Ok(more) => got.extend(more),
                Err(e) => {
                    why.get_or_insert(e);
                }
            }
        }
        (got, why)
    }

    /// Fetches promised objects from the partial clone's promisor remote in
    /// one request, as git does when a command needs them.
    fn fetch_promised(&self, oids: &[Oid]) -> std::result::Result<(), String> {
        let remote = self.promisor.as_deref().unwrap_or("origin");
        progress::detail(&format!(
            "fetching {} promised object(s) from remote '{remote}' of {}",
            oids.len(),
            self.path.display()
        ));
        let mut cmd = self.git();
        cmd.args([
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            remote,
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            "--filter=blob:none",
            "--stdin",
        ]);
        let input: String = oids.iter().map(|o| format!("{o}\n")).collect();
        let out = run_with_input(cmd, input.as_bytes())
            .map_err(|e| format!("cannot run git fetch: {e}"))?;
        // Newer packs are invisible to libgit2 until it looks again.
        if let Ok(odb) = self.repo.odb() {
            let _ = odb.refresh();
        }
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git fetch from its promisor remote '{remote}' failed: {}",
                git_message(&out.stderr)
            ))
        }
    }

    /// `git cat-file --batch`: the blobs git can read locally. No lazy
    /// fetch here (`GIT_NO_LAZY_FETCH`): fetch_promised already asked the
    /// remote once for all of them, and one fetch per object of a large tree
    /// would take hours against an unreachable remote.
    fn cat_file(&self, oids: &[Oid]) -> std::result::Result<HashMap<Oid, Vec<u8>>, String> {
        let mut cmd = self.git();
        cmd.args(["cat-file", "--batch"])
            .env("GIT_NO_LAZY_FETCH", "1");
        let input: String = oids.iter().map(|o| format!("{o}\n")).collect();
        let out = run_with_input(cmd, input.as_bytes())
            .map_err(|e| format!("cannot run git cat-file: {e}"))?;
        if !out.status.success() {
            return Err(format!("git cat-file failed: {}", git_message(&out.stderr)));
        }
        parse_batch(&out.stdout).map_err(|e| format!("git cat-file --batch: {e}"))
    }

    /// `git -C <repo>`, with the variables that would point it at another
    /// repository (or make it prompt for a password behind our spinner)
    /// removed.
    fn git(&self) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("-C").arg(&self.path);
        for k in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_COMMON_DIR",
            "GIT_INDEX_FILE",
            "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES",
            "GIT_NAMESPACE",
            "GIT_CEILING_DIRECTORIES",
        ] {
            cmd.env_remove(k);
        }
        cmd.env("GIT_TERMINAL_PROMPT", "0").env("LC_ALL", "C");
        cmd
    }

    /// One line: which object, where, and what to do about it.
    fn missing_error(
        &self,
        oid: Oid,
        path: &str,
        c: &CommitInfo,
        why: Option<&str>,
        more: usize,
    ) -> anyhow::Error {
        let repo = self.path.display();
        let more = match more {
            0 => String::new(),
            n => format!(", with {n} more missing object(s)"),
        };
        let why = why.map(|w| format!(" ({w})")).unwrap_or_default();
        match &self.promisor {
            Some(remote) => anyhow::anyhow!(
                "object {oid} ({path} in commit {}) is missing from partial clone {repo}{more}{why}; make its remote '{remote}' reachable (`git -C {repo} fetch {remote}`) or check the repository (`git -C {repo} fsck`)",
                c.short
            ),
            None => anyhow::anyhow!(
                "object {oid} ({path} in commit {}) is missing from {repo}{more}{why}; fetch it (`git -C {repo} fetch`) or check the repository (`git -C {repo} fsck`)",
                c.short
            ),
        }
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

/// Runs `cmd` with `input` on its stdin, capturing stdout and stderr.
fn run_with_input(mut cmd: Command, input: &[u8]) -> std::io::Result<Output> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = input.to_vec();
    // A separate writer: git answers while it reads, and a full stdout pipe
    // would otherwise block both sides.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output();
    let _ = writer.join();
    out
}

/// The line of git's stderr that says what went wrong: its first
/// `fatal:`/`error:` line (advice follows it), else its last line.
fn git_message(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or(lines.last())
        .copied()
        .unwrap_or("no message")
        .to_string()
}

/// The blobs of `git cat-file --batch` output (`<oid> blob <size>\n<bytes>\n`,
/// or `<oid> missing\n`).
fn parse_batch(mut out: &[u8]) -> std::result::Result<HashMap<Oid, Vec<u8>>, String> {
    let mut got = HashMap::new();
    while !out.is_empty() {
        let nl = out
            .iter()
            .position(|&b| b == b'\n')
            .ok_or("truncated header")?;
        let header = String::from_utf8_lossy(&out[..nl]).into_owned();
        out = &out[nl + 1..];
        let mut f = header.split_whitespace();
        let (Some(oid), Some(kind)) = (f.next(), f.next()) else {
            return Err(format!("unexpected line '{header}'"));
        };
        if kind == "missing" || kind == "ambiguous" {
            continue;
        }
        let size: usize = f
            .next()
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("unexpected line '{header}'"))?;
        if out.len() < size + 1 {
            return Err("truncated object".into());
        }
        if kind == "blob" {
            let oid = Oid::from_str(oid).map_err(|e| e.message().to_string())?;
            got.insert(oid, out[..size].to_vec());
        }
        out = &out[size + 1..];
    }
    Ok(got)
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
#[path = "repo_tests.rs"]
mod tests;
