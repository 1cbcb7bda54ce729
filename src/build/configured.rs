//! configure's output, kept per work tree by the content of configure's inputs. OpenSSL 3's
//! configure takes about 10 s on 2 cores (Perl reading every build.info), and a bisect's work
//! tree often goes back to inputs it has configured before: past a build.info change and back
//! again. Then configure would write the same files (configdata.pm, Makefile.in, Makefile: its
//! output depends only on its inputs, its arguments and the tree's paths), so they are copied
//! from the last time instead.
//!
//! The inputs are the files [`configure_input`] names, the same rule that decides whether an
//! incremental build configures again at all: a cache keyed by them is exactly as safe as not
//! configuring again when they did not change. The key also holds configure's arguments
//! (compiler command included), the recipe's fingerprint and the tree's absolute paths. What
//! configure wrote is found by comparing the build directory before and after it ran, so no
//! list of its outputs per OpenSSL version is needed. A clean build stores its configure output
//! but never reuses one (`--clean-build` runs everything).

use anyhow::{Context, Result};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::hashing::Hasher;

/// Entries kept per work tree (a few MB each for OpenSSL 3): the states a bisect's tree
/// alternates between.
const KEEP: usize = 6;

/// Files whose change can change what configure writes: the top-level
/// files configure reads (Configure, config, VERSION.dat, configdata.pm.in,
/// build.info; Makefile.in of trees older than 1.1.0 and of the test fake;
/// not CHANGES.md or NEWS.md, which many commits touch), every build.info, the platform configurations, the Perl configure runs
/// (util/perl/, external/perl/, util/dofile.pl which turns the templates
/// into the Makefile), and the header 1.1.1's Configure reads its version
/// from. Wide where in doubt: configuring again costs a rebuild that ccache
/// mostly serves, a stale Makefile costs a wrong build. Not util/*.num and
/// the other util/ scripts: make's own rules depend on those.
pub fn configure_input(path: &str) -> bool {
    matches!(
        path,
        "Configure" | "config" | "VERSION.dat" | "configdata.pm.in" | "build.info" | "Makefile.in"
    ) || path.ends_with("/build.info")
        || path.starts_with("Configurations/")
        || path.starts_with("util/perl/")
        || path.starts_with("external/perl/")
        || path == "util/dofile.pl"
        || path == "include/openssl/opensslv.h"
}

/// Whether a changed (or removed) `path` can change what configure writes: a
/// [`configure_input`], except a build.info that the tree's last configure did not read (`read`,
/// from [`build_infos_read`]) and that is not new. Configure reads a build.info only when one it
/// read names that directory (SUBDIRS; with `no-tests` the top build.info leaves test/ out) or,
/// on 1.1.1, when one exists in a directory Configure lists itself; either way an edit to a file
/// it did not read cannot change its output unless the file is new or a file it read changed.
/// On 2023–24 master, 8 of the 50 commits of a 500-commit range that touch a configure input
/// touch only test/ build.info files.
pub fn changes_configure(path: &str, read: Option<&HashSet<String>>, added: bool) -> bool {
    if !configure_input(path) {
        return false;
    }
    let build_info = path == "build.info" || path.ends_with("/build.info");
    match read {
        Some(read) if build_info && !added => read.contains(path),
        _ => true,
    }
}

/// The build.info files the last configure in `build_dir` read, relative to `src`: the
/// `build_infos` list of its configdata.pm (1.1.1 and 3.x write one). None when there is no
/// configdata.pm, no such list, or an entry outside `src`: then every build.info counts.
pub fn build_infos_read(build_dir: &Path, src: &Path) -> Option<HashSet<String>> {
    let text = fs::read_to_string(build_dir.join("configdata.pm")).ok()?;
    let at = text.find("build_infos")?;
    let rest = &text[at..];
    let open = rest.find('[')?;
    // 3.x quotes the key ("build_infos" => [); 1.1.1 does not (build_infos => [).
    if !rest[..open]
        .trim_start_matches("build_infos")
        .trim_start_matches(['"', '\''])
        .trim()
        .starts_with("=>")
    {
        return None;
    }
    let list = &rest[open + 1..open + rest[open..].find(']')?];
    let src = normalize(src);
    let mut read = HashSet::new();
    for entry in list.split(',').map(|e| e.trim()).filter(|e| !e.is_empty()) {
        let entry = entry.trim_matches(['"', '\'']);
        let full = normalize(&build_dir.join(entry));
        let rel = full.strip_prefix(&src).ok()?.to_str()?.to_string();
        read.insert(rel);
    }
    (!read.is_empty()).then_some(read)
}

/// `p` with `.` and `..` resolved by name (configdata.pm's entries are `../src/...`).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The key of a configure run: its inputs' content in `src`, and everything else it depends on.
pub fn key(src: &Path, build_dir: &Path, args: &str, fingerprint: &str) -> Result<String> {
    let mut inputs = Vec::new();
    walk(src, src, &mut |rel, p| {
        if configure_input(rel) {
            inputs.push((rel.to_string(), p.to_path_buf()));
        }
    })?;
    inputs.sort();
    let mut h = Hasher::new();
    h.field(&src.display().to_string())
        .field(&build_dir.display().to_string())
        .field(args)
        .field(fingerprint);
    for (rel, p) in &inputs {
        let bytes = fs::read(p).with_context(|| format!("reading {}", p.display()))?;
        h.field(rel).bytes(&bytes);
    }
    Ok(h.finish())
}

fn walk(root: &Path, dir: &Path, f: &mut dyn FnMut(&str, &Path)) -> Result<()> {
    for e in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let e = e.with_context(|| format!("reading {}", dir.display()))?;
        let p = e.path();
        let t = e.file_type()?;
        if t.is_dir() {
            walk(root, &p, f)?;
        } else if let Some(rel) = p.strip_prefix(root).ok().and_then(|r| r.to_str()) {
            f(rel, &p);
        }
    }
    Ok(())
}

/// The files of a build directory with their mtimes and sizes, to find what configure wrote.
pub struct Before(HashMap<PathBuf, (SystemTime, u64)>);

pub fn before(build_dir: &Path) -> Result<Before> {
    let mut m = HashMap::new();
    walk(build_dir, build_dir, &mut |_, p| {
        if let Ok(md) = fs::symlink_metadata(p) {
            if let Ok(t) = md.modified() {
                m.insert(p.to_path_buf(), (t, md.len()));
            }
        }
    })?;
    Ok(Before(m))
}

/// Stores what configure wrote into `build_dir` since `before` under `key` in `store`
/// (`store/KEY/`, files in the order configure wrote them), and keeps the newest [`KEEP`].
pub fn save(store: &Path, key: &str, build_dir: &Path, before: &Before) -> Result<usize> {
    let mut written: Vec<(SystemTime, String)> = Vec::new();
    walk(build_dir, build_dir, &mut |rel, p| {
        let Ok(md) = fs::symlink_metadata(p) else {
            return;
        };
        let Ok(t) = md.modified() else { return };
        // perfbisect's own files (the ccache log of configure's compiler checks) are not
        // configure's output.
        let ours = rel.starts_with(".perfbisect-");
        if md.is_file() && !ours && before.0.get(p) != Some(&(t, md.len())) {
            written.push((t, rel.to_string()));
        }
    })?;
    written.sort();
    fs::create_dir_all(store).with_context(|| format!("creating {}", store.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix(".tmp-")
        .tempdir_in(store)
        .with_context(|| format!("creating a directory in {}", store.display()))?;
    let mut order = String::new();
    for (i, (_, rel)) in written.iter().enumerate() {
        let to = tmp.path().join(i.to_string());
        fs::copy(build_dir.join(rel), &to)
            .with_context(|| format!("copying {rel} into {}", store.display()))?;
        order.push_str(rel);
        order.push('\n');
    }
    fs::write(tmp.path().join("files"), order)
        .with_context(|| format!("writing into {}", store.display()))?;
    let entry = store.join(key);
    if entry.exists() {
        fs::remove_dir_all(&entry).with_context(|| format!("removing {}", entry.display()))?;
    }
    fs::rename(tmp.keep(), &entry).with_context(|| format!("creating {}", entry.display()))?;
    prune(store)?;
    Ok(written.len())
}

/// What configure writes every time it runs (the rest it writes only when their content changes).
const ALWAYS_WRITTEN: &[&str] = &["configdata.pm", "Makefile"];

/// Writes the files stored under `key` into `build_dir`, in the order configure wrote them (the
/// Makefile must not be older than configdata.pm), and returns those written; `None` when
/// nothing is stored under `key`.
pub fn restore(store: &Path, key: &str, build_dir: &Path) -> Result<Option<Vec<String>>> {
    let entry = store.join(key);
    let Ok(order) = fs::read_to_string(entry.join("files")) else {
        return Ok(None);
    };
    let files: Vec<String> = order.lines().map(String::from).collect();
    let mut restored = Vec::new();
    for (i, rel) in files.iter().enumerate() {
        let to = build_dir.join(rel);
        let from = entry.join(i.to_string());
        // configure rewrites configdata.pm and the Makefile every time, but a header such as
        // 3.x's include/openssl/configuration.h only when its content changes: make compares
        // its mtime with the objects' as a source's, so an unchanged one keeps its mtime here
        // too.
        if !ALWAYS_WRITTEN.contains(&rel.as_str())
            && fs::read(&to)
                .ok()
                .is_some_and(|old| fs::read(&from).ok() == Some(old))
        {
            continue;
        }
        restored.push(rel.clone());
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        }
        // A new file, not a rewrite through a link or of a file make holds open.
        let _ = fs::remove_file(&to);
        fs::copy(&from, &to)
            .with_context(|| format!("restoring {rel} from {}", entry.display()))?;
    }
    // The entry was used now: pruning keeps it longest.
    let _ = fs::File::options()
        .write(true)
        .open(entry.join("files"))
        .and_then(|f| f.set_modified(SystemTime::now()));
    Ok(Some(restored))
}

fn prune(store: &Path) -> Result<()> {
    let mut entries: Vec<(SystemTime, PathBuf)> = Vec::new();
    for e in fs::read_dir(store).with_context(|| format!("reading {}", store.display()))? {
        let p = e?.path();
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        {
            continue;
        }
        let t = fs::metadata(p.join("files"))
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        entries.push((t, p));
    }
    entries.sort();
    let excess = entries.len().saturating_sub(KEEP);
    for (_, p) in entries.into_iter().take(excess) {
        fs::remove_dir_all(&p).with_context(|| format!("removing {}", p.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configure_inputs() {
        for p in [
            "Configure",
            "crypto/md5/build.info",
            "Configurations/10-main.conf",
            "util/perl/OpenSSL/stackhash.pm",
        ] {
            assert!(configure_input(p), "{p}");
        }
        assert!(!configure_input("util/libcrypto.num"));
        assert!(!configure_input("apps/openssl.c"));
        assert!(!configure_input("CHANGES.md"));
    }

    #[test]
    fn build_infos_configure_did_not_read_are_not_inputs() {
        let d = tempfile::tempdir().unwrap();
        let (src, build) = (d.path().join("src"), d.path().join("build"));
        fs::create_dir_all(&build).unwrap();
        fs::create_dir_all(&src).unwrap();
        assert_eq!(build_infos_read(&build, &src), None);
        // OpenSSL 3's configdata.pm, then 1.1.1's.
        for text in [
            "our %config = (\n    \"build_file_templates\" => [\n        \"../src/Configurations/unix-Makefile.tmpl\"\n    ],\n    \"build_infos\" => [\n        \"../src/build.info\",\n        \"../src/crypto/build.info\"\n    ],\n",
            "our %config = (\n  build_infos => [ \"./build.info\", \"crypto/build.info\" ],\n",
        ] {
            let dir = if text.contains("../src") { &build } else { &src };
            fs::write(dir.join("configdata.pm"), text).unwrap();
            let read = build_infos_read(dir, &src).unwrap();
            assert_eq!(
                read,
                HashSet::from(["build.info".to_string(), "crypto/build.info".to_string()])
            );
            let read = Some(&read);
            assert!(changes_configure("crypto/build.info", read, false));
            assert!(changes_configure("build.info", read, false));
            // test/ was not read (no-tests): its build.info is not an input, unless it is new.
            assert!(!changes_configure("test/build.info", read, false));
            assert!(changes_configure("test/build.info", read, true));
            // Other inputs are inputs whatever was read; sources never are.
            assert!(changes_configure("Configurations/10-main.conf", read, false));
            assert!(!changes_configure("crypto/a.c", read, true));
            // Nothing known of what was read: every build.info counts.
            assert!(changes_configure("test/build.info", None, false));
            fs::remove_file(dir.join("configdata.pm")).unwrap();
        }
        // A list that names a file outside the tree is not trusted.
        fs::write(
            build.join("configdata.pm"),
            "\"build_infos\" => [ \"/elsewhere/build.info\" ],",
        )
        .unwrap();
        assert_eq!(build_infos_read(&build, &src), None);
    }

    #[test]
    fn what_configure_wrote_is_restored_in_order() {
        let d = tempfile::tempdir().unwrap();
        let (src, build, store) = (
            d.path().join("src"),
            d.path().join("build"),
            d.path().join("store"),
        );
        fs::create_dir_all(src.join("crypto")).unwrap();
        fs::create_dir_all(&build).unwrap();
        fs::write(src.join("crypto/build.info"), "SOURCE[x]=a.c\n").unwrap();
        fs::write(src.join("crypto/a.c"), "int a;\n").unwrap();
        fs::write(build.join("old.o"), "object").unwrap();
        let k = key(&src, &build, "shared", "fp").unwrap();
        // Not a configure input: same key.
        fs::write(src.join("crypto/a.c"), "int b;\n").unwrap();
        assert_eq!(key(&src, &build, "shared", "fp").unwrap(), k);
        assert_ne!(key(&src, &build, "no-shared", "fp").unwrap(), k);
        fs::write(src.join("crypto/build.info"), "SOURCE[x]=b.c\n").unwrap();
        let k2 = key(&src, &build, "shared", "fp").unwrap();
        assert_ne!(k2, k);

        let b = before(&build).unwrap();
        fs::write(build.join("configdata.pm"), "data").unwrap();
        let t0 = fs::metadata(build.join("configdata.pm"))
            .unwrap()
            .modified()
            .unwrap();
        fs::File::options()
            .write(true)
            .open(build.join("configdata.pm"))
            .unwrap()
            .set_modified(t0 - std::time::Duration::from_secs(5))
            .unwrap();
        fs::write(build.join("Makefile"), "all:\n").unwrap();
        fs::write(build.join("conf.h"), "#define X 1\n").unwrap();
        fs::write(build.join(".perfbisect-ccache-stats.log"), "x").unwrap();
        assert_eq!(save(&store, &k2, &build, &b).unwrap(), 3);
        let conf_time = fs::metadata(build.join("conf.h"))
            .unwrap()
            .modified()
            .unwrap();
        fs::remove_file(build.join("Makefile")).unwrap();
        fs::write(build.join("configdata.pm"), "other").unwrap();

        assert_eq!(restore(&store, &k, &build).unwrap(), None);
        let files = restore(&store, &k2, &build).unwrap().unwrap();
        // conf.h is as configure would write it: left alone, with its mtime.
        assert_eq!(files, ["configdata.pm", "Makefile"]);
        assert_eq!(
            fs::metadata(build.join("conf.h"))
                .unwrap()
                .modified()
                .unwrap(),
            conf_time
        );
        fs::write(build.join("conf.h"), "#define X 2\n").unwrap();
        let files = restore(&store, &k2, &build).unwrap().unwrap();
        assert!(files.contains(&"conf.h".to_string()), "{files:?}");
        assert_eq!(
            fs::read_to_string(build.join("conf.h")).unwrap(),
            "#define X 1\n"
        );
        assert_eq!(
            fs::read_to_string(build.join("configdata.pm")).unwrap(),
            "data"
        );
        assert_eq!(
            fs::read_to_string(build.join("Makefile")).unwrap(),
            "all:\n"
        );
        let m = |n: &str| fs::metadata(build.join(n)).unwrap().modified().unwrap();
        assert!(m("Makefile") >= m("configdata.pm"));
        assert_eq!(fs::read_to_string(build.join("old.o")).unwrap(), "object");
    }

    #[test]
    fn only_the_newest_entries_are_kept() {
        let d = tempfile::tempdir().unwrap();
        let (build, store) = (d.path().join("build"), d.path().join("store"));
        fs::create_dir_all(&build).unwrap();
        for i in 0..KEEP + 2 {
            let b = before(&build).unwrap();
            fs::write(build.join("Makefile"), format!("{i}")).unwrap();
            save(&store, &format!("k{i}"), &build, &b).unwrap();
            let f = store.join(format!("k{i}/files"));
            fs::File::options()
                .write(true)
                .open(&f)
                .unwrap()
                .set_modified(
                    SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64),
                )
                .unwrap();
        }
        prune(&store).unwrap();
        assert!(!store.join("k0").exists() && !store.join("k1").exists());
        assert!(store.join(format!("k{}", KEEP + 1)).exists());
        assert_eq!(fs::read_dir(&store).unwrap().count(), KEEP);
    }
}
