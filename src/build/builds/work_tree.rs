//! The work trees builds continue from: which one a build of a commit takes, moving it to
//! the commit, and what an incremental build must redo there.

use super::*;

/// One work tree's paths (see [`pick_work_tree`]).
pub(super) struct WorkTree {
    pub(super) src: PathBuf,
    pub(super) build_dir: PathBuf,
    /// The record of the build the trees hold ([`TREE_STATE`]).
    pub(super) state: PathBuf,
    /// configure's output kept by its inputs (see configured).
    pub(super) configure_store: PathBuf,
}

impl WorkTree {
    pub(super) fn at(work: &Path) -> WorkTree {
        WorkTree {
            src: work.join("src"),
            build_dir: work.join("build"),
            state: work.join(TREE_STATE),
            configure_store: work.join("configured"),
        }
    }

    /// The earlier build these trees hold, when a build of `c` with `resolved` may continue it.
    pub(super) fn continuable(
        &self,
        o: &BuildOptions,
        c: &CommitInfo,
        resolved: &ResolvedRecipe,
    ) -> Option<TreeState> {
        if o.clean_build {
            return None;
        }
        read_tree_state(&self.state).filter(|t| {
            // --rebuild of the commit the tree holds: continuing it would
            // only repeat the install, not build again.
            !(o.rebuild && t.commit == c.id && t.patches == patch::key(&c.patches))
                && t.recipe == resolved.name
                && t.fingerprint == resolved.fingerprint
                && self.src.is_dir()
                && self.build_dir.join("Makefile").is_file()
        })
    }

    /// From here the trees are in flux: only a finished build vouches for them again.
    pub(super) fn forget(&self) -> Result<()> {
        if let Err(e) = fs::remove_file(&self.state) {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(e).with_context(|| format!("cannot remove {}", self.state.display()));
            }
        }
        Ok(())
    }

    /// The trees hold a finished build of `c` with `resolved`.
    pub(super) fn remember(&self, resolved: &ResolvedRecipe, c: &CommitInfo) -> Result<()> {
        let state = TreeState {
            recipe: resolved.name.clone(),
            fingerprint: resolved.fingerprint.clone(),
            commit: c.id.clone(),
            patches: patch::key(&c.patches),
        };
        fs::write(&self.state, serde_json::to_string(&state)?)
            .with_context(|| format!("cannot write {}", self.state.display()))
    }
}

/// Where work trees live when set (default: the cache's `work/`).
pub const WORK_DIR_ENV: &str = "PERFBISECT_WORK_DIR";

/// The work directory of this node under `root`: a directory per Slurm node
/// (`SLURMD_NODENAME`), so that nodes which share the filesystem `root` is on (a `/tmp` that is
/// not node-local, several slurmd on one host) still keep trees and slot locks of their own.
fn node_dir(root: &Path) -> Result<PathBuf> {
    let root = private_dir(root)?;
    match std::env::var("SLURMD_NODENAME") {
        Ok(node) if !node.is_empty() && !node.contains('/') => private_dir(&root.join(node)),
        _ => Ok(root),
    }
}

/// Beyond this many commits a work tree is not worth keeping a build away from: with a free
/// slot, the build starts a tree of its own instead of moving this one (far apart, an
/// incremental build recompiles nearly everything anyway, and the old tree stays for the
/// commits near it — a bisect's other end).
pub(super) const FAR_COMMITS: usize = 64;

/// The work tree a build of `c` continues, locked. Of the trees of this recipe and
/// fingerprint, the one whose commit is nearest to `c` in the history (fewest commits between
/// them, so fewest files to rewrite and recompile); an empty slot when every tree is further
/// than [`FAR_COMMITS`]; without either, the least recently built. Trees another process holds
/// are passed over while a free one exists. Slot 0 is `work/` itself (the layout of caches made
/// before there were several), slot k is `work/k/`.
pub(super) fn pick_work_tree(
    cache: &Cache,
    repo: &Repo,
    c: &CommitInfo,
    resolved: &crate::build::recipe::ResolvedRecipe,
    o: &BuildOptions,
) -> Result<(PathBuf, cache::Lock)> {
    // A fleet's build jobs keep their trees on the node's own disk (see exec::slurm), and
    // the locks that guard them beside them: a lock in the shared cache held one tree slot
    // for the whole fleet (at 07d6d4e, `--work-trees` builds at once anywhere).
    let node_root = match std::env::var_os(WORK_DIR_ENV) {
        Some(d) if !d.is_empty() => Some(node_dir(Path::new(&d))?),
        _ => None,
    };
    let root = match &node_root {
        Some(d) => d.clone(),
        None => cache.dir("work")?,
    };
    let try_lock = |k: usize| match &node_root {
        Some(d) => cache::Lock::try_at(&d.join(format!(".workdir-{k}.lock"))),
        None => cache.try_lock(&format!("workdir-{k}")),
    };
    let slot_dir = |k: usize| {
        if k == 0 {
            root.clone()
        } else {
            root.join(k.to_string())
        }
    };
    // (class, distance or age, slot), smaller first: class 0 a near tree; 1 a slot with no
    // tree this build can continue (empty first, then the least recently built tree of
    // another recipe or repository); 2 a far tree, nearest first.
    let mut ranked: Vec<(u8, u64, usize)> = (0..o.work_trees.max(1))
        .map(|k| {
            let state_path = slot_dir(k).join(TREE_STATE);
            let Some(state) = read_tree_state(&state_path) else {
                return (1, 0, k);
            };
            let distance = (state.recipe == resolved.name
                && state.fingerprint == resolved.fingerprint)
                .then(|| repo.distance(&state.commit, &c.id))
                .flatten();
            match distance {
                Some(d) if d <= FAR_COMMITS => (0, d as u64, k),
                Some(d) => (2, d as u64, k),
                None => {
                    let built_at = fs::metadata(&state_path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                        .map_or(1, |d| d.as_secs().max(1));
                    (1, built_at, k)
                }
            }
        })
        .collect();
    ranked.sort();
    let open = |k: usize, lock: cache::Lock| -> Result<(PathBuf, cache::Lock)> {
        let dir = slot_dir(k);
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok((dir, lock))
    };
    for &(_, _, k) in &ranked {
        if let Some(lock) = try_lock(k)? {
            return open(k, lock);
        }
    }
    let k = ranked[0].2;
    let lock = match &node_root {
        Some(d) => cache::Lock::at(&d.join(format!(".workdir-{k}.lock")))?,
        None => cache.lock(&format!("workdir-{k}"))?,
    };
    open(k, lock)
}

/// `d` as a directory of this user's alone, for work trees on a node's disk: created with
/// owner-only permissions when missing; an existing one must be a real directory (a symbolic
/// link there is refused, never followed: another user could have planted it to point a clean
/// checkout's removal at our files), owned by this user and writable by no one else. At
/// 07d6d4e every node used `$TMPDIR/perfbisect-work` as it found it.
pub fn private_dir(d: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    if let Some(parent) = d.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    match fs::DirBuilder::new().mode(0o700).create(d) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            return Err(e).with_context(|| format!("creating work directory {}", d.display()))
        }
        _ => {}
    }
    let m = fs::symlink_metadata(d).with_context(|| format!("reading {}", d.display()))?;
    let shown = d.display();
    if m.file_type().is_symlink() {
        bail!("work directory {shown} is a symbolic link: refused, never followed (another user may have planted it); remove it, or set work_dir to a directory of your own");
    }
    if !m.is_dir() {
        bail!("work directory {shown} is not a directory");
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if m.uid() != me {
        bail!(
            "work directory {shown} belongs to uid {}, not to this user ({me}): refused; set work_dir to a directory of your own",
            m.uid()
        );
    }
    if m.mode() & 0o022 != 0 {
        bail!(
            "work directory {shown} is writable by others (mode {:o}): refused; `chmod go-w` it or set work_dir elsewhere",
            m.mode() & 0o777
        );
    }
    Ok(d.to_path_buf())
}

/// The file in the work directory that says which commit's tree
/// work/src and work/build hold, for which recipe and fingerprint. Written
/// only after a successful build, removed before the trees are touched: a
/// failed, interrupted or killed build leaves none, and the next build
/// starts clean.
pub(super) const TREE_STATE: &str = "tree.json";

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct TreeState {
    pub(super) recipe: String,
    pub(super) fingerprint: String,
    pub(super) commit: String,
    /// [`patch::key`] of the patches applied on top of `commit` (empty: none).
    #[serde(default)]
    pub(super) patches: String,
}

pub(super) fn read_tree_state(path: &Path) -> Option<TreeState> {
    serde_json::from_str(&fs::read_to_string(path).ok()?).ok()
}

/// Moves the work tree of an earlier build (`prev`) to `c`: rewrites what differs, plans
/// whether configure must run again, regenerates the assembler where a translator changed and
/// takes removed files out of make's dependency records. Each decision is a line of `notes`
/// (the build log). Returns the export, whether to configure again, and the record of it.
pub(super) fn move_tree(
    repo: &Repo,
    c: &CommitInfo,
    prev: &TreeState,
    (src, build_dir): (&Path, &Path),
    leave_out: &[&str],
    notes: &mut String,
) -> Result<(repo::Export, bool, Incremental)> {
    progress::detail(&format!(
        "moving the tree in {} from {} to {}",
        src.display(),
        &prev.commit[..10.min(prev.commit.len())],
        c.short
    ));
    let read = configured::build_infos_read(build_dir, src);
    let export = export_patched(repo, c, src, leave_out)?;
    let plan = incremental_plan(&export, read.as_ref());
    notes.push_str(&format!(
        "### perfbisect: incremental build from {}: {} file(s) rewritten, {} removed, {} unchanged\n",
        prev.commit,
        export.written.len(),
        export.removed.len(),
        export.unchanged
    ));
    if let Some(why) = &plan.reconfigure {
        notes.push_str(&format!(
            "### perfbisect: configuring again: {why} changed\n"
        ));
    }
    if let Some(path) = &plan.unread_build_info {
        notes.push_str(&format!(
            "### perfbisect: not configuring again: {path} changed, but the last configure did not read it\n"
        ));
    }
    if let Some(why) = &plan.regenerate_asm {
        let n = remove_generated_asm(build_dir)?;
        notes.push_str(&format!(
            "### perfbisect: {why} changed: removed {n} generated assembler file(s) for make to generate again\n"
        ));
    }
    let forgotten =
        depends::forget_removed(src, build_dir, &export.removed).with_context(|| {
            format!(
                "cannot update the dependency records in {}",
                build_dir.display()
            )
        })?;
    if forgotten != depends::Forgotten::default() {
        notes.push_str(&format!(
            "### perfbisect: {} removed file(s) taken out of make's dependency records: {} object(s) to compile again, {} mention(s) in the Makefile\n",
            export.removed.len(),
            forgotten.objects,
            forgotten.makefile_mentions
        ));
    }
    let info = Incremental {
        from: prev.commit.clone(),
        written: export.written.len(),
        removed: export.removed.len(),
        configured: plan.reconfigure.is_some(),
        kept: None,
    };
    Ok((export, plan.reconfigure.is_some(), info))
}

/// The commit's tree in `src` (see [`Repo::export_tree`]) with its patches applied; the files
/// they change count as written, so that an incremental build configures again when a patch
/// touches a configure input.
pub(super) fn export_patched(
    repo: &Repo,
    c: &CommitInfo,
    src: &Path,
    leave_out: &[&str],
) -> Result<repo::Export> {
    let mut export = repo.export_tree(c, src, leave_out)?;
    if !c.patches.is_empty() {
        let onto = &c.short[..10.min(c.short.len())];
        for f in patch::apply(src, &c.patches, onto)? {
            if !export.written.contains(&f) {
                export.written.push(f);
            }
        }
    }
    Ok(export)
}

/// Empty work directories, the commit's tree written afresh.
pub(super) fn clean_checkout(
    repo: &Repo,
    c: &CommitInfo,
    src: &Path,
    build_dir: &Path,
    leave_out: &[&str],
) -> Result<repo::Export> {
    for d in [src, build_dir] {
        if d.exists() {
            fs::remove_dir_all(d).with_context(|| format!("cannot clear {}", d.display()))?;
        }
    }
    progress::detail(&format!("checking out {} into {}", c.short, src.display()));
    let export = export_patched(repo, c, src, leave_out)?;
    fs::create_dir_all(build_dir)
        .with_context(|| format!("cannot create {}", build_dir.display()))?;
    Ok(export)
}

/// What an incremental build must do besides make.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Plan {
    /// The first changed configure input: configure runs again.
    pub(super) reconfigure: Option<String>,
    /// The first changed perlasm translator: the generated assembler files
    /// are removed so that make generates them again.
    pub(super) regenerate_asm: Option<String>,
    /// A changed build.info that would have meant configuring again had the last configure
    /// read it (see [`configured::changes_configure`]), when nothing else does: for the log.
    pub(super) unread_build_info: Option<String>,
}

/// What make needs besides the moved tree. Files the commit removed are taken out of make's
/// dependency records ([`depends::forget_removed`]) rather than building clean; an incremental
/// build that fails all the same is built again from a clean tree.
pub(super) fn incremental_plan(export: &repo::Export, read: Option<&HashSet<String>>) -> Plan {
    let changed = || export.written.iter().chain(&export.removed);
    let reconfigure = changed()
        .find(|p| configured::changes_configure(p, read, export.added.contains(p)))
        .cloned();
    Plan {
        unread_build_info: match reconfigure {
            Some(_) => None,
            None => changed().find(|p| configured::configure_input(p)).cloned(),
        },
        reconfigure,
        // The translators (x86_64-xlate.pl …) are not named as a dependency
        // of every assembler file they generate.
        regenerate_asm: changed()
            .find(|p| p.starts_with("crypto/perlasm/"))
            .cloned(),
    }
}

/// Removes the assembler files a build generated (`*.s`, `*.S` below the
/// build directory: in an out-of-tree build every one of them is generated
/// from a perlasm script); make generates them again. Returns how many.
pub(super) fn remove_generated_asm(dir: &Path) -> Result<usize> {
    let mut n = 0;
    for e in fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let e = e.with_context(|| format!("cannot read {}", dir.display()))?;
        let p = e.path();
        if e.file_type()?.is_dir() {
            n += remove_generated_asm(&p)?;
        } else if p.extension().is_some_and(|x| x == "s" || x == "S") {
            fs::remove_file(&p).with_context(|| format!("cannot remove {}", p.display()))?;
            n += 1;
        }
    }
    Ok(n)
}
