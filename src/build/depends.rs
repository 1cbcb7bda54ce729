//! make's records of what each object was compiled from, in a build tree that an incremental
//! build moves to another commit. OpenSSL (1.1.1 and 3.x) keeps them twice: one `*.d` file per
//! object, written by the compiler (`-MMD`), and the same lines appended to the Makefile below
//! `# DO NOT DELETE THIS LINE` by `make depend` (util/add-depends.pl, which reads only the `.d`
//! files that exist). A file the new commit removed is still named there, and make stops with
//! "No rule to make target" — so a removed header used to cost a clean build (about 170 s on
//! 2023 master against tens of seconds).

use anyhow::{Context, Result};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::build::makefile::DEPEND_MARKER as MARKER;

/// What [`forget_removed`] changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Forgotten {
    /// Objects compiled from a removed file: deleted with their `.d` files, so that make
    /// compiles them again and records their new dependencies.
    pub objects: usize,
    /// Mentions of removed files taken out of the Makefile's dependency lines.
    pub makefile_mentions: usize,
}

/// Takes every file of `removed` (paths in the source tree `src`) out of the dependency records
/// of `build_dir`. An object that was compiled from one of them had a source or header that
/// changed as well (it no longer includes it), so recompiling it is what make would do anyway.
/// The Makefile keeps its modification time: OpenSSL's Makefile compares itself with
/// configdata.pm, and `make depend` rewrites the lines whenever a `.d` file is newer.
pub fn forget_removed(src: &Path, build_dir: &Path, removed: &[String]) -> Result<Forgotten> {
    let mut out = Forgotten::default();
    if removed.is_empty() {
        return Ok(out);
    }
    let gone: BTreeSet<PathBuf> = removed.iter().map(|p| lexical(&src.join(p))).collect();
    let names_removed = |token: &str| {
        let t = token.trim_end_matches(':');
        !t.is_empty() && t != "\\" && gone.contains(&lexical(&build_dir.join(t)))
    };
    let mut depfiles = Vec::new();
    find_depfiles(build_dir, &mut depfiles)?;
    for d in depfiles {
        let text = fs::read_to_string(&d).with_context(|| format!("reading {}", d.display()))?;
        if !text.split_whitespace().any(names_removed) {
            continue;
        }
        if let Some(target) = text
            .split(':')
            .next()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            let object = build_dir.join(target);
            if object.exists() {
                fs::remove_file(&object)
                    .with_context(|| format!("removing {}", object.display()))?;
            }
        }
        fs::remove_file(&d).with_context(|| format!("removing {}", d.display()))?;
        out.objects += 1;
    }
    let makefile = build_dir.join("Makefile");
    let Ok(text) = fs::read_to_string(&makefile) else {
        return Ok(out);
    };
    let Some(at) = text.find(MARKER) else {
        return Ok(out);
    };
    let (head, deps) = text.split_at(at);
    let mut kept = String::with_capacity(deps.len());
    for line in deps.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        if body.starts_with('#') || !body.split_whitespace().any(names_removed) {
            kept.push_str(line);
            continue;
        }
        let tokens: Vec<&str> = body.split_whitespace().collect();
        out.makefile_mentions += tokens.iter().filter(|t| names_removed(t)).count();
        let rest: Vec<&str> = tokens.into_iter().filter(|t| !names_removed(t)).collect();
        // Continuation lines start with a space; a line left with only its `\` stays a
        // (harmless) empty continuation.
        let lead = if body.starts_with(' ') { " " } else { "" };
        kept.push_str(lead);
        kept.push_str(&rest.join(" "));
        if line.ends_with('\n') {
            kept.push('\n');
        }
    }
    if out.makefile_mentions > 0 {
        let mtime = fs::metadata(&makefile)
            .and_then(|m| m.modified())
            .with_context(|| format!("reading {}", makefile.display()))?;
        fs::write(&makefile, format!("{head}{kept}"))
            .with_context(|| format!("writing {}", makefile.display()))?;
        fs::File::options()
            .write(true)
            .open(&makefile)
            .and_then(|f| f.set_modified(mtime))
            .with_context(|| format!("restoring the time of {}", makefile.display()))?;
    }
    Ok(out)
}

fn find_depfiles(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for e in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let e = e.with_context(|| format!("reading {}", dir.display()))?;
        let p = e.path();
        let ft = e.file_type()?;
        if ft.is_dir() {
            find_depfiles(&p, out)?;
        } else if ft.is_file() && p.extension().is_some_and(|x| x == "d") {
            out.push(p);
        }
    }
    Ok(())
}

/// `p` with `.` and `..` resolved by name (the trees hold no symbolic links to follow).
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_headers_leave_the_dependency_records() {
        let d = tempfile::tempdir().unwrap();
        let (src, build) = (d.path().join("src"), d.path().join("build"));
        fs::create_dir_all(build.join("ssl/quic")).unwrap();
        fs::create_dir_all(&src).unwrap();
        let gone_dep = "ssl/quic/libssl-shlib-quic_a.d";
        fs::write(
            build.join(gone_dep),
            "ssl/quic/libssl-shlib-quic_a.o: ../src/ssl/quic/quic_a.c \\\n ../src/include/internal/quic_rcidm.h include/openssl/configuration.h\n",
        )
        .unwrap();
        fs::write(build.join("ssl/quic/libssl-shlib-quic_a.o"), "obj").unwrap();
        let kept_dep = "ssl/quic/libssl-shlib-quic_b.d";
        fs::write(
            build.join(kept_dep),
            "ssl/quic/libssl-shlib-quic_b.o: ../src/ssl/quic/quic_b.c \\\n ../src/include/internal/quic_cc.h\n",
        )
        .unwrap();
        fs::write(build.join("ssl/quic/libssl-shlib-quic_b.o"), "obj").unwrap();
        let makefile = "all: x\n\nx: ../src/include/internal/quic_rcidm.h.in\n\n# DO NOT DELETE THIS LINE -- make depend depends on it.\nssl/quic/libssl-shlib-quic_a.o : ../src/ssl/quic/quic_a.c \\\n ../src/include/internal/quic_rcidm.h \\\n include/openssl/configuration.h ../src/include/internal/quic_rcidm.h\nssl/quic/libssl-shlib-quic_b.o : ../src/ssl/quic/quic_b.c \\\n ../src/include/internal/quic_cc.h\n";
        fs::write(build.join("Makefile"), makefile).unwrap();
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        fs::File::options()
            .write(true)
            .open(build.join("Makefile"))
            .unwrap()
            .set_modified(old)
            .unwrap();

        let f = forget_removed(&src, &build, &["include/internal/quic_rcidm.h".into()]).unwrap();
        assert_eq!(
            f,
            Forgotten {
                objects: 1,
                makefile_mentions: 2
            }
        );
        assert!(!build.join(gone_dep).exists());
        assert!(!build.join("ssl/quic/libssl-shlib-quic_a.o").exists());
        assert!(build.join(kept_dep).exists());
        assert!(build.join("ssl/quic/libssl-shlib-quic_b.o").exists());
        let m = fs::read_to_string(build.join("Makefile")).unwrap();
        assert!(
            !m.contains("quic_rcidm.h \\") && !m.contains("quic_rcidm.h\n"),
            "{m}"
        );
        // Above the marker nothing changes (a rule naming a similar file stays).
        assert!(m.starts_with("all: x\n\nx: ../src/include/internal/quic_rcidm.h.in\n"));
        assert!(m.contains(" include/openssl/configuration.h\n"), "{m}");
        assert!(m.contains("../src/include/internal/quic_cc.h"), "{m}");
        assert_eq!(
            fs::metadata(build.join("Makefile"))
                .unwrap()
                .modified()
                .unwrap(),
            old
        );
        // Nothing more to forget the second time.
        let again =
            forget_removed(&src, &build, &["include/internal/quic_rcidm.h".into()]).unwrap();
        assert_eq!(again, Forgotten::default());
    }
}
