//! What a build publishes into its prefix: what `make install_dev`, `install_engines` and
//! `install_modules` would install (the shared libraries with their links, the public headers,
//! provider modules and engines), either moved from `make install`'s staging directory or
//! taken from the build tree. Each shared library is published under its installed name
//! exactly once, from the place the install rules mean (see [`shared_libraries`]).

use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use crate::build::builder::{BuildFailed, CONFIGURED_PREFIX};
use crate::build::makefile::Makefile;

macro_rules! failed {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new(BuildFailed(format!($($arg)*))))
    };
}

/// The shared libraries a build publishes, by their paths in the build tree (`libssl.so.3`,
/// `libcrypto.so.1.1`): one per installed file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedLibraries {
    pub files: Vec<String>,
    /// Installed names that more than one of the Makefile's libraries share.
    pub clashes: Vec<Clash>,
}

/// Two or more libraries of one tree installed under one file name: on the TLS record-layer
/// series of 2022 master, `ssl/record/methods/build.info` declared `LIBS=../libssl`, a second
/// library `ssl/record/libssl.so.3` (a 14,832-byte stub with no symbols) beside the real
/// `libssl.so.3`. `install_dev` copies every one of them to `$(libdir)/libssl.so.3` in turn,
/// so the last one listed — the stub — is what it leaves there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// The installed file name.
    pub name: String,
    /// Every library installed under it, as the Makefile lists them.
    pub candidates: Vec<String>,
    /// The one published: the library at the top of the build tree, which the top-level
    /// build.info declares (`LIBS=libcrypto libssl`). `None` when no candidate is there.
    pub published: Option<String>,
}

impl fmt::Display for Clash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} libraries are installed as {} ({})",
            self.candidates.len(),
            self.name,
            self.candidates.join(", ")
        )?;
        match &self.published {
            Some(p) => write!(f, ": publishing {p}, the top-level one"),
            None => write!(
                f,
                ": none is the top-level one, so which one is meant is unknown"
            ),
        }
    }
}

/// What the install rules install: `INSTALL_SHLIBS` (which leaves out `noinst` libraries),
/// or `SHLIBS` where the Makefile has no such variable (1.1.0), one per installed name.
/// `None` when the Makefile names neither (pre-1.1.0 trees).
pub fn shared_libraries(makefile: &Makefile) -> Option<SharedLibraries> {
    let listed = ["INSTALL_SHLIBS", "SHLIBS"]
        .iter()
        .find_map(|v| makefile.words(v).filter(|w| !w.is_empty()))?;
    let mut files = Vec::new();
    let mut clashes = Vec::new();
    let mut seen = BTreeSet::new();
    for lib in &listed {
        let name = installed_name(lib);
        if !seen.insert(name) {
            continue;
        }
        let candidates: Vec<String> = listed
            .iter()
            .filter(|l| installed_name(l) == name)
            .cloned()
            .collect();
        if candidates.len() == 1 {
            files.push(lib.clone());
            continue;
        }
        let published = candidates.iter().find(|c| !c.contains('/')).cloned();
        match &published {
            Some(p) => files.push(p.clone()),
            None => files.extend(candidates.iter().cloned()),
        }
        clashes.push(Clash {
            name: name.to_string(),
            candidates,
            published,
        });
    }
    Some(SharedLibraries { files, clashes })
}

fn installed_name(lib: &str) -> &str {
    lib.rsplit('/').next().unwrap_or(lib)
}

/// After `make install`: where install_dev left the last of several clashing libraries under
/// one name, the one the install rules mean is copied over it from the build tree.
pub fn mend_clashes(build: &Path, install_dir: &Path, clashes: &[Clash]) -> Result<Vec<String>> {
    let mut mended = Vec::new();
    for c in clashes {
        let Some(published) = &c.published else {
            failed!("install failed: {c}");
        };
        let to = install_dir.join("lib").join(&c.name);
        let tmp = to.with_extension("perfbisect-new");
        fs::copy(build.join(published), &tmp)
            .and_then(|_| fs::rename(&tmp, &to))
            .with_context(|| format!("copying {published} to {}", to.display()))?;
        mended.push(format!("lib/{} from {published}", c.name));
    }
    Ok(mended)
}

/// Moves what `make install` put under `destdir` into `install_dir` and
/// checks it. A failure of the tree is a [`BuildFailed`].
pub fn move_installed(destdir: &Path, install_dir: &Path) -> Result<()> {
    let staged = destdir.join(CONFIGURED_PREFIX.trim_start_matches('/'));
    if !staged.is_dir() {
        failed!(
            "install failed: make install put nothing under {}",
            staged.display()
        );
    }
    for e in fs::read_dir(&staged).with_context(|| format!("reading {}", staged.display()))? {
        let e = e?;
        let to = install_dir.join(e.file_name());
        fs::rename(e.path(), &to)
            .with_context(|| format!("moving {} to {}", e.path().display(), to.display()))?;
    }
    fs::remove_dir_all(destdir).with_context(|| format!("removing {}", destdir.display()))?;
    remove_static_libs(&install_dir.join("lib"))?;
    if let Err(e) = check_installed(install_dir) {
        failed!("install failed: {e}");
    }
    Ok(())
}

/// Installs into `install_dir` (which must not exist) what `install_dev`,
/// `install_engines` and `install_modules` would, straight from the build
/// tree: the shared libraries with their symbolic links, the public headers
/// (the source tree's include/openssl, then the generated ones of the build
/// tree over them), provider modules and engines. Returns the files, for
/// the log.
pub fn install_from_build_tree(
    src: &Path,
    build: &Path,
    install_dir: &Path,
) -> Result<Vec<String>> {
    let makefile = Makefile::parse(&fs::read_to_string(build.join("Makefile")).unwrap_or_default());
    let mut copier = Copier {
        install_dir,
        copied: Vec::new(),
    };
    let so_version = copy_shared_libraries(&mut copier, build, &makefile)?;
    copy_headers(&mut copier, src, build, &makefile)?;
    let missing = copy_modules_and_engines(&mut copier, build, &makefile, so_version)?;
    check_installed(install_dir)?;
    let mut copied = copier.copied;
    copied.extend(
        missing
            .into_iter()
            .map(|m| format!("{m} (not built: left out)")),
    );
    Ok(copied)
}

/// Copies files into the prefix and keeps the list, relative to it, for the log.
struct Copier<'a> {
    install_dir: &'a Path,
    copied: Vec<String>,
}

impl Copier<'_> {
    /// `from` (a file, or a symbolic link copied as a link) into `to_dir`.
    fn copy(&mut self, from: &Path, to_dir: &Path) -> Result<()> {
        let name = from.file_name().context("a file name")?;
        let to = to_dir.join(name);
        fs::create_dir_all(to_dir).with_context(|| format!("creating {}", to_dir.display()))?;
        if from.is_symlink() {
            let target =
                fs::read_link(from).with_context(|| format!("reading {}", from.display()))?;
            std::os::unix::fs::symlink(&target, &to)
        } else {
            fs::copy(from, &to).map(|_| ())
        }
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
        let rel = to.strip_prefix(self.install_dir).unwrap_or(&to);
        self.copied.push(rel.display().to_string());
        Ok(())
    }

    fn lib(&self) -> PathBuf {
        self.install_dir.join("lib")
    }
}

/// The shared libraries (see [`shared_libraries`]) and their `.so` links into `lib/`; returns
/// the shared library version, "3" of libcrypto.so.3, "1.1" of libcrypto.so.1.1, which names
/// the engines directory. A build tree that an incremental build moved from another release
/// still holds that release's files (libcrypto.so.1.1 beside libcrypto.so.3): only what this
/// tree's Makefile names is taken.
fn copy_shared_libraries(
    copier: &mut Copier,
    build: &Path,
    makefile: &Makefile,
) -> Result<Option<String>> {
    let lib = copier.lib();
    fs::create_dir_all(&lib).with_context(|| format!("creating {}", lib.display()))?;
    let shlib_files: Vec<PathBuf> = match shared_libraries(makefile) {
        Some(shlibs) => {
            if let Some(c) = shlibs.clashes.iter().find(|c| c.published.is_none()) {
                bail!("{c}");
            }
            let mut v = Vec::new();
            for n in &shlibs.files {
                let full = build.join(n);
                if !full.is_file() {
                    bail!("the Makefile's SHLIBS names {n}, which the build did not make");
                }
                v.push(full);
                // The link the kernels are compiled against (-lcrypto).
                if let Some(at) = n.find(".so") {
                    let simple = build.join(&n[..at + 3]);
                    if simple != build.join(n) && fs::symlink_metadata(&simple).is_ok() {
                        v.push(simple);
                    }
                }
            }
            v
        }
        None => sorted_entries(build)?
            .into_iter()
            .filter(|e| {
                let name = e.file_name().unwrap_or_default().to_string_lossy();
                name.starts_with("libcrypto.so") || name.starts_with("libssl.so")
            })
            .collect(),
    };
    if shlib_files.is_empty() {
        bail!("no libcrypto.so* or libssl.so* in {}", build.display());
    }
    let mut so_version = None;
    for e in &shlib_files {
        copier.copy(e, &lib)?;
        let name = e.file_name().unwrap_or_default().to_string_lossy();
        if let Some(v) = name.strip_prefix("libcrypto.so.") {
            so_version = Some(v.to_string());
        }
    }
    for simple in ["libcrypto.so", "libssl.so"] {
        if fs::symlink_metadata(lib.join(simple)).is_err() {
            if let Some(full) = shlib_files
                .iter()
                .filter_map(|p| p.file_name())
                .find(|n| n.to_string_lossy().starts_with(&format!("{simple}.")))
            {
                std::os::unix::fs::symlink(full, lib.join(simple))
                    .with_context(|| format!("linking {}", lib.join(simple).display()))?;
            }
        }
    }
    Ok(so_version)
}

/// The public headers: the source tree's include/openssl, then over them the ones the
/// Makefile generates (GENERATED_MANDATORY, GENERATED) when it names them — not a stale
/// generated header another release left in the build tree (1.1.1's opensslconf.h).
fn copy_headers(copier: &mut Copier, src: &Path, build: &Path, makefile: &Makefile) -> Result<()> {
    let mut generated: BTreeSet<String> = BTreeSet::new();
    for var in ["GENERATED_MANDATORY", "GENERATED"] {
        generated.extend(makefile.words(var).unwrap_or_default());
    }
    for (dir, from_build) in [
        (src.join("include/openssl"), false),
        (build.join("include/openssl"), true),
    ] {
        if !dir.is_dir() {
            continue;
        }
        let to = copier.install_dir.join("include/openssl");
        for e in sorted_entries(&dir)? {
            if e.extension().is_some_and(|x| x == "h") {
                let name = e.file_name().unwrap_or_default().to_string_lossy();
                if from_build
                    && !generated.is_empty()
                    && !generated.contains(&format!("include/openssl/{name}"))
                {
                    continue;
                }
                let target = to.join(e.file_name().unwrap_or_default());
                if target.exists() {
                    fs::remove_file(&target)
                        .with_context(|| format!("replacing {}", target.display()))?;
                }
                copier.copy(&e, &to)?;
            }
        }
    }
    Ok(())
}

/// Provider modules and engines, as install_modules and install_engines would; returns those
/// the Makefile names that were not built (they cost only the kernels that load them).
fn copy_modules_and_engines(
    copier: &mut Copier,
    build: &Path,
    makefile: &Makefile,
    so_version: Option<String>,
) -> Result<Vec<String>> {
    let lib = copier.lib();
    // The make variables name exactly what install_modules and
    // install_engines install (no test engines such as dasync); trees whose
    // Makefile lacks them get every .so of providers/ (but the FIPS module,
    // which only install_fips installs) and engines/.
    let modules = makefile.words("INSTALL_MODULES").unwrap_or_else(|| {
        so_files(&build.join("providers"))
            .into_iter()
            .filter(|p| p != "providers/fips.so")
            .collect()
    });
    // A module or engine that is missing costs only the kernels that load
    // it (and they say so); not a reason to lose the commit.
    let mut missing = Vec::new();
    for m in modules {
        let from = build.join(&m);
        if from.exists() {
            copier.copy(&from, &lib.join("ossl-modules"))?;
        } else {
            missing.push(m);
        }
    }
    let engines = makefile
        .words("INSTALL_ENGINES")
        .or_else(|| makefile.words("ENGINES"))
        .unwrap_or_else(|| so_files(&build.join("engines")));
    if !engines.is_empty() {
        let dir = makefile
            .words("ENGINESDIR")
            .and_then(|w| {
                w.first()
                    .and_then(|d| d.rsplit('/').next().map(String::from))
            })
            .filter(|d| d.starts_with("engines-"))
            .or_else(|| so_version.map(|v| format!("engines-{v}")))
            .unwrap_or_else(|| "engines".to_string());
        for e in engines {
            let from = build.join(&e);
            if from.exists() {
                copier.copy(&from, &lib.join(&dir))?;
            } else {
                missing.push(e);
            }
        }
    }
    Ok(missing)
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    v.sort();
    Ok(v)
}

/// `<dir name>/<file>.so` of the shared objects in `dir` (none if it is missing).
fn so_files(dir: &Path) -> Vec<String> {
    let base = dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    sorted_entries(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "so"))
        .filter_map(|p| Some(format!("{base}/{}", p.file_name()?.to_string_lossy())))
        .collect()
}

/// Removes static libraries (`*.a`) under `dir`: only the shared ones are
/// used, and OpenSSL 3 installs both.
fn remove_static_libs(dir: &Path) -> Result<()> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Ok(());
    };
    for e in rd {
        let e = e?;
        let p = e.path();
        let ft = e.file_type()?;
        if ft.is_dir() {
            remove_static_libs(&p)?;
        } else if p.extension().is_some_and(|x| x == "a") {
            fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
        }
    }
    Ok(())
}

fn check_installed(prefix: &Path) -> Result<()> {
    if !prefix.join("include/openssl/opensslv.h").is_file() {
        bail!("no include/openssl/opensslv.h in {}", prefix.display());
    }
    let lib = prefix.join("lib");
    let names: Vec<String> = fs::read_dir(&lib)
        .with_context(|| format!("no lib directory in {}", prefix.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for want in ["libcrypto.so", "libssl.so"] {
        if !names.iter().any(|n| n.starts_with(want)) {
            bail!("no {want}* in {}", lib.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_library_per_installed_name_the_top_level_one() {
        let m = Makefile::parse(
            "SHLIBS=libcrypto.so.3 libssl.so.3 ssl/record/libssl.so.3\n\
             INSTALL_SHLIBS=libcrypto.so.3 libssl.so.3 \\\n ssl/record/libssl.so.3\n",
        );
        let s = shared_libraries(&m).unwrap();
        assert_eq!(s.files, ["libcrypto.so.3", "libssl.so.3"]);
        assert_eq!(
            s.clashes[0].to_string(),
            "2 libraries are installed as libssl.so.3 (libssl.so.3, ssl/record/libssl.so.3): \
             publishing libssl.so.3, the top-level one"
        );
        // The stub listed first changes nothing.
        let m = Makefile::parse("SHLIBS=libcrypto.so.3 ssl/record/libssl.so.3 libssl.so.3\n");
        assert_eq!(
            shared_libraries(&m).unwrap().files,
            ["libcrypto.so.3", "libssl.so.3"]
        );
        // INSTALL_SHLIBS leaves out what is never installed (noinst).
        let m = Makefile::parse(
            "SHLIBS=libcrypto.so.3 libssl.so.3 test/libtest.so\nINSTALL_SHLIBS=libcrypto.so.3 libssl.so.3\n",
        );
        let s = shared_libraries(&m).unwrap();
        assert_eq!(s.files, ["libcrypto.so.3", "libssl.so.3"]);
        assert!(s.clashes.is_empty());
        // No top-level candidate: nothing says which one is meant.
        let m = Makefile::parse("SHLIBS=libcrypto.so.3 a/libssl.so.3 b/libssl.so.3\n");
        let s = shared_libraries(&m).unwrap();
        assert_eq!(s.clashes[0].published, None);
        assert!(s.clashes[0]
            .to_string()
            .ends_with("none is the top-level one, so which one is meant is unknown"));
        // 1.1.0-era trees without the variables, and empty ones.
        assert!(shared_libraries(&Makefile::parse("LIBS=libcrypto.a\n")).is_none());
        assert!(shared_libraries(&Makefile::parse("SHLIBS=\nINSTALL_SHLIBS=\n")).is_none());
    }

    #[test]
    fn build_tree_install_takes_only_what_the_makefile_names() {
        // A 3.0 tree that an incremental build moved from 1.1.1w: that release's library and
        // generated opensslconf.h are still in the build directory.
        let d = tempfile::tempdir().unwrap();
        let (src, build, prefix) = (d.path().join("src"), d.path().join("b"), d.path().join("p"));
        fs::create_dir_all(src.join("include/openssl")).unwrap();
        fs::create_dir_all(build.join("include/openssl")).unwrap();
        fs::write(
            src.join("include/openssl/opensslconf.h"),
            "/* 3.0 source */\n",
        )
        .unwrap();
        fs::write(
            build.join("include/openssl/opensslconf.h"),
            "/* stale 1.1.1 */\n",
        )
        .unwrap();
        fs::write(
            build.join("include/openssl/opensslv.h"),
            "/* generated */\n",
        )
        .unwrap();
        for f in [
            "libcrypto.so.3",
            "libssl.so.3",
            "libcrypto.so.1.1",
            "libssl.so.1.1",
        ] {
            fs::write(build.join(f), f).unwrap();
        }
        std::os::unix::fs::symlink("libcrypto.so.3", build.join("libcrypto.so")).unwrap();
        fs::write(
            build.join("Makefile"),
            "SHLIB_VERSION_NUMBER=3\nSHLIBS=libcrypto.so.$(SHLIB_VERSION_NUMBER) libssl.so.3\n\
             GENERATED_MANDATORY=include/openssl/opensslv.h \\\n include/crypto/bn_conf.h\n",
        )
        .unwrap();
        install_from_build_tree(&src, &build, &prefix).unwrap();
        let mut libs: Vec<String> = fs::read_dir(prefix.join("lib"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        libs.sort();
        assert_eq!(
            libs,
            ["libcrypto.so", "libcrypto.so.3", "libssl.so", "libssl.so.3"]
        );
        assert_eq!(
            fs::read_link(prefix.join("lib/libssl.so")).unwrap(),
            Path::new("libssl.so.3")
        );
        assert_eq!(
            fs::read_to_string(prefix.join("include/openssl/opensslconf.h")).unwrap(),
            "/* 3.0 source */\n"
        );
        assert!(prefix.join("include/openssl/opensslv.h").is_file());
    }

    #[test]
    fn install_from_a_3x_build_tree() {
        let d = tempfile::tempdir().unwrap();
        let (src, build, inst) = (d.path().join("s"), d.path().join("b"), d.path().join("i"));
        let w = |p: PathBuf, text: &str| {
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        };
        w(src.join("include/openssl/ssl.h"), "src ssl");
        w(src.join("include/openssl/opensslv.h.in"), "template");
        w(src.join("include/openssl/crypto.h"), "stale");
        w(build.join("include/openssl/opensslv.h"), "generated");
        w(build.join("include/openssl/crypto.h"), "generated crypto");
        w(build.join("libcrypto.so.3"), "c");
        w(build.join("libssl.so.3"), "s");
        w(build.join("libssl.a"), "static");
        std::os::unix::fs::symlink("libcrypto.so.3", build.join("libcrypto.so")).unwrap();
        w(build.join("providers/legacy.so"), "legacy");
        w(build.join("providers/fips.so"), "fips");
        w(build.join("engines/afalg.so"), "afalg");
        w(build.join("engines/dasync.so"), "test engine");
        w(
            build.join("Makefile"),
            "INSTALL_MODULES=providers/legacy.so\nINSTALL_ENGINES=engines/afalg.so engines/padlock.so\nENGINESDIR=$(libdir)/engines-3\n",
        );
        let files = install_from_build_tree(&src, &build, &inst).unwrap();
        let read = |p: &str| fs::read_to_string(inst.join(p)).unwrap();
        assert_eq!(read("include/openssl/crypto.h"), "generated crypto");
        assert_eq!(read("include/openssl/ssl.h"), "src ssl");
        assert_eq!(read("lib/ossl-modules/legacy.so"), "legacy");
        assert_eq!(read("lib/engines-3/afalg.so"), "afalg");
        assert_eq!(
            fs::read_link(inst.join("lib/libcrypto.so")).unwrap(),
            PathBuf::from("libcrypto.so.3")
        );
        for absent in [
            "include/openssl/opensslv.h.in",
            "lib/libssl.a",
            "lib/ossl-modules/fips.so",
            "lib/engines-3/dasync.so",
        ] {
            assert!(!inst.join(absent).exists(), "{absent}");
        }
        assert!(
            files.contains(&"engines/padlock.so (not built: left out)".to_string()),
            "{files:?}"
        );
        // 1.1.1: no INSTALL_* variables, ENGINES and engines-1.1 instead.
        let inst2 = d.path().join("i2");
        fs::remove_dir_all(build.join("providers")).unwrap();
        w(build.join("Makefile"), "ENGINES=engines/afalg.so\n");
        fs::rename(build.join("libcrypto.so.3"), build.join("libcrypto.so.1.1")).unwrap();
        install_from_build_tree(&src, &build, &inst2).unwrap();
        assert!(inst2.join("lib/engines-1.1/afalg.so").is_file());
        assert!(!inst2.join("lib/ossl-modules").exists());
        // Nothing built.
        let e = install_from_build_tree(&src, &d.path().join("s"), &d.path().join("i3"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no libcrypto.so*"), "{e}");
    }
}
