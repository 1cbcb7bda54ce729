//! Keeping what a configure-again build did not change. When an incremental build has to run
//! configure again (a build.info or a Perl module of configure changed), OpenSSL's Makefile
//! regenerates every header made from a template (`include/openssl/*.h` from `*.h.in`,
//! `buildinf.h`, …) because configdata.pm is newer. Most come out byte-identical, but their new
//! mtimes make make recompile every object that includes them: about 1,050 objects, 26–29 s of
//! ccache replay on 2 cores, where the commit changed a few files.
//!
//! What this does is ninja's `restat`, done by hand and only where it is provably right: after
//! configure and the regeneration of the generated sources, a target is *unchanged* when make,
//! had the regenerated files kept their old mtimes, would not rebuild it:
//!
//! - its rule in the new Makefile, variables expanded (the compile command with every flag and
//!   define, the object list of a library), is the rule the old Makefile built it with;
//! - every input (the rule's prerequisites, and for an object the headers of its `.d` file, which
//!   the compiler wrote when it last compiled it) is a source file not newer than the target, a
//!   regenerated file whose content is byte-identical to before and whose old mtime was not
//!   newer than the target, or itself an unchanged target.
//!
//! Unchanged targets that make would rebuild only for the new mtimes get the current time, so
//! make leaves them alone; everything else is left to make. An existing target whose rule
//! changed is removed first, so make builds it again even where no input is newer (a
//! `DEFINE[...]` added in a build.info changes an object's flags and nothing else). When in
//! doubt (an input that is missing, a phony prerequisite, an object with no `.d` file although
//! its command writes one) the target is not kept: a kept target is one make would not have
//! rebuilt, never one it should have.

use anyhow::{Context, Result};
use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::time::SystemTime;

use crate::build::makefile::{Makefile, Rule};
use crate::hashing;

/// configure's own outputs: make must never be told they are up to date, nor lose them.
const CONFIGURE_OUTPUTS: &[&str] = &["Makefile", "configdata.pm"];

/// What the build directory held before configure ran again.
pub struct Snapshot {
    old: Makefile,
    /// Generated files (targets of the old Makefile that are not objects or libraries, and
    /// configdata.pm): their sha256 and mtime.
    generated: HashMap<String, (String, SystemTime)>,
}

/// What [`keep_unchanged`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// Objects and other targets given the current time (make would have rebuilt them for
    /// nothing).
    pub objects: usize,
    pub others: usize,
    /// Objects of the earlier build that make will compile again (an input or the command
    /// changed). Objects removed because their rule changed are counted in `removed`.
    pub objects_to_build: usize,
}

fn is_object(t: &str) -> bool {
    t.ends_with(".o") || t.ends_with(".obj")
}

/// Built products (objects, libraries): large, and never written by configure or by the
/// generation step, so not worth hashing.
fn is_product(t: &str) -> bool {
    is_object(t)
        || t.ends_with(".a")
        || t.ends_with(".so")
        || t.contains(".so.")
        || t.ends_with(".d")
}

fn mtime(p: &Path) -> Option<SystemTime> {
    fs::metadata(p)
        .ok()
        .filter(|m| m.is_file())
        .and_then(|m| m.modified().ok())
}

impl Snapshot {
    /// Reads the build directory's Makefile and hashes its generated files. `None` when there is
    /// no Makefile to compare with (nothing will be kept).
    pub fn take(build_dir: &Path) -> Result<Option<Snapshot>> {
        let Ok(text) = fs::read_to_string(build_dir.join("Makefile")) else {
            return Ok(None);
        };
        let old = Makefile::parse(&text);
        let mut generated = HashMap::new();
        let names = old
            .targets()
            .filter(|t| !is_product(t) && !old.is_phony(t))
            .chain(["configdata.pm"]);
        for t in names {
            let p = build_dir.join(t);
            let Some(m) = mtime(&p) else { continue };
            let sha =
                hashing::file_sha256(&p).with_context(|| format!("hashing {}", p.display()))?;
            generated.insert(t.to_string(), (sha, m));
        }
        Ok(Some(Snapshot { old, generated }))
    }
}

/// The generated sources to make before [`keep_unchanged`] looks: the targets of the new
/// Makefile that a compiler or linker reads (headers, C and assembler sources, linker version
/// scripts) and that the build directory held before (so a build of this recipe needs them).
/// Made first, those that configure made out of date are compared with their old content; left
/// to the main make, they would be regenerated after the decision, and every object including
/// one would be compiled again.
pub fn generated_sources(snap: &Snapshot, new: &Makefile) -> Vec<String> {
    const READ_BY_COMPILERS: &[&str] = &[".h", ".c", ".s", ".S", ".inc", ".ld", ".map", ".def"];
    let mut v: Vec<String> = new
        .targets()
        .filter(|t| READ_BY_COMPILERS.iter().any(|x| t.ends_with(x)))
        .filter(|t| snap.generated.contains_key(*t))
        .map(String::from)
        .collect();
    v.sort();
    v
}

/// Removes every existing target whose rule differs between the old and the new Makefile (or
/// that the new one no longer has a rule for is left alone: make will not build it). Run right
/// after configure, before anything is made.
pub fn remove_changed(build_dir: &Path, snap: &Snapshot, new: &Makefile) -> Result<usize> {
    let mut removed = 0;
    for t in new.targets() {
        if CONFIGURE_OUTPUTS.contains(&t) || new.is_phony(t) || t.starts_with('.') {
            continue;
        }
        let p = build_dir.join(t);
        if mtime(&p).is_none() {
            continue;
        }
        if snap.old.expanded_rule(t) != new.expanded_rule(t) {
            fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[derive(Clone, Copy)]
enum State {
    /// Unchanged: make, seeing the old mtimes, would not rebuild it. `old` is that mtime (the
    /// one to compare its dependents with), `now` the one it has after this pass.
    Kept { old: SystemTime, now: SystemTime },
    /// make will (or may) build it: nothing depending on it is kept.
    Changed,
}

struct Pass<'a> {
    build_dir: &'a Path,
    snap: &'a Snapshot,
    new: &'a Makefile,
    touch_at: SystemTime,
    memo: HashMap<String, State>,
    kept: Kept,
}

/// Gives the current time to every unchanged target that make would otherwise rebuild (see the
/// module documentation). Run after configure, [`remove_changed`] and the making of
/// [`generated_sources`], before make builds anything else.
pub fn keep_unchanged(build_dir: &Path, snap: &Snapshot, new: &Makefile) -> Result<Kept> {
    // Not earlier than anything regenerated so far, so a kept target is not older than its
    // regenerated inputs.
    let newest = snap
        .generated
        .keys()
        .filter_map(|t| mtime(&build_dir.join(t)))
        .max()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let mut pass = Pass {
        build_dir,
        snap,
        new,
        touch_at: SystemTime::now().max(newest),
        memo: HashMap::new(),
        kept: Kept::default(),
    };
    let mut targets: Vec<&str> = new.targets().collect();
    targets.sort_unstable();
    for t in targets {
        pass.state(t, 0)?;
    }
    Ok(pass.kept)
}

impl Pass<'_> {
    fn state(&mut self, t: &str, depth: usize) -> Result<State> {
        if let Some(s) = self.memo.get(t) {
            return Ok(*s);
        }
        // A cycle or a chain deeper than any real Makefile has: not kept.
        self.memo.insert(t.to_string(), State::Changed);
        let s = if depth > 64 {
            State::Changed
        } else {
            self.evaluate(t, depth)?
        };
        self.memo.insert(t.to_string(), s);
        Ok(s)
    }

    fn evaluate(&mut self, t: &str, depth: usize) -> Result<State> {
        let path = self.build_dir.join(t);
        let Some(current) = mtime(&path) else {
            return Ok(State::Changed);
        };
        if self.new.is_phony(t) {
            return Ok(State::Changed);
        }
        if let Some(s) = self.regenerated(t, &path, current)? {
            return Ok(s);
        }
        let Some(rule) = self.new.expanded_rule(t) else {
            // A source file.
            return Ok(State::Kept {
                old: current,
                now: current,
            });
        };
        let Some(inputs) = self.inputs(t, &path, &rule)? else {
            self.kept.objects_to_build += 1;
            return Ok(State::Changed);
        };
        let mut needs_touch = false;
        let mut unchanged = self.snap.old.expanded_rule(t).as_ref() == Some(&rule);
        for p in &inputs {
            if !unchanged {
                break;
            }
            match self.state(p, depth + 1)? {
                State::Kept { old, now } => {
                    unchanged = old <= current;
                    needs_touch |= now > current;
                }
                State::Changed => unchanged = false,
            }
        }
        if !unchanged {
            if is_object(t) {
                self.kept.objects_to_build += 1;
            }
            return Ok(State::Changed);
        }
        let now = if needs_touch {
            self.touch(t, &path)?
        } else {
            current
        };
        Ok(State::Kept { old: current, now })
    }

    /// A generated file made again since the snapshot (by configure or the generation step):
    /// what counts is whether its content changed. `None` for any other target.
    fn regenerated(&self, t: &str, path: &Path, current: SystemTime) -> Result<Option<State>> {
        let Some((sha, old)) = self.snap.generated.get(t) else {
            return Ok(None);
        };
        if current == *old && !CONFIGURE_OUTPUTS.contains(&t) {
            return Ok(None);
        }
        let same = hashing::file_sha256(path)
            .with_context(|| format!("hashing {}", path.display()))?
            == *sha;
        Ok(Some(if same {
            State::Kept {
                old: *old,
                now: current,
            }
        } else {
            State::Changed
        }))
    }

    /// What `t` is made from: its rule's prerequisites and, for an object, the headers its
    /// compiler recorded reading. `None` when the compiler was to record them and did not:
    /// unknown inputs.
    fn inputs(&self, t: &str, path: &Path, rule: &Rule) -> Result<Option<Vec<String>>> {
        let mut inputs = rule.prerequisites.clone();
        if is_object(t) {
            match depfile_inputs(path)? {
                Some(headers) => inputs.extend(headers),
                None if rule
                    .recipe
                    .iter()
                    .any(|c| c.contains("-MMD") || c.contains("-MD ")) =>
                {
                    return Ok(None);
                }
                None => {}
            }
        }
        Ok(Some(inputs))
    }

    /// Gives `t` the pass's time, so make sees it as newer than its regenerated inputs; returns
    /// that time.
    fn touch(&mut self, t: &str, path: &Path) -> Result<SystemTime> {
        fs::File::options()
            .write(true)
            .open(path)
            .and_then(|f| f.set_modified(self.touch_at))
            .with_context(|| format!("setting the time of {}", path.display()))?;
        if is_object(t) {
            self.kept.objects += 1;
        } else {
            self.kept.others += 1;
        }
        Ok(self.touch_at)
    }
}

/// The files a compiler recorded reading for `object` in its `.d` file (`x.o` → `x.d`), or `None`
/// without one. Paths as the compiler wrote them: relative to the build directory.
fn depfile_inputs(object: &Path) -> Result<Option<Vec<String>>> {
    let d = object.with_extension("d");
    let text = match fs::read_to_string(&d) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", d.display())),
    };
    let Some((_, deps)) = text.split_once(": ") else {
        return Ok(None);
    };
    Ok(Some(
        deps.split_whitespace()
            .filter(|w| *w != "\\")
            .map(String::from)
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::process::Command;
    use std::time::Duration;

    const SRC_A: &str =
        "#include \"gen.h\"\n#ifndef X\n#define X 0\n#endif\nint a(void) { return GEN + X; }\n";
    const SRC_B: &str = "int b(void) { return 2; }\n";

    /// A Makefile shaped like OpenSSL's: a header generated from configdata.pm, objects
    /// compiled with `-MMD`, a shared library linked from them, and `depend` copying the `.d`
    /// files below the marker (util/add-depends.pl): that is how make learns which objects
    /// include the generated header.
    fn makefile(a_flags: &str) -> String {
        format!(
            "CC=cc\nCFLAGS=-O1 -fPIC\n.PHONY: all depend\nall: libx.so\n\
             depend:\n\tsed -i '/^# DO NOT DELETE/q' Makefile\n\tcat *.d >>Makefile\n\
             gen.h: configdata.pm\n\tcp configdata.pm $@\n\
             a.o: ../src/a.c\n\t$(CC) -I. {a_flags} $(CFLAGS) -MMD -MF a.d -c -o $@ ../src/a.c\n\
             b.o: ../src/b.c\n\t$(CC) -I. $(CFLAGS) -MMD -MF b.d -c -o $@ ../src/b.c\n\
             libx.so: a.o b.o\n\t$(CC) -shared -o $@ a.o b.o\n\
             # DO NOT DELETE THIS LINE -- make depend depends on it.\n"
        )
    }

    fn make(build: &Path, args: &[&str]) -> bool {
        Command::new("make")
            .args(args)
            .current_dir(build)
            .output()
            .expect("make runs")
            .status
            .success()
    }

    /// Every file of `dir` made `secs` older, in the same order: what is written next is newer
    /// than all of it, whatever the file system's time granularity.
    fn age(dir: &Path, secs: u64) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let m = fs::metadata(&p).unwrap().modified().unwrap();
            fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(m - Duration::from_secs(secs))
                .unwrap();
        }
    }

    /// A tree built with the old Makefile, then "configured again": the snapshot taken, then
    /// configdata.pm and the Makefile rewritten, as configure does.
    fn configured_again(new_configdata: &str, new_makefile: &str) -> (tempfile::TempDir, Snapshot) {
        let d = tempfile::tempdir().unwrap();
        let (src, build) = (d.path().join("src"), d.path().join("build"));
        fs::create_dir_all(&src).unwrap();
        fs::create_dir_all(&build).unwrap();
        fs::write(src.join("a.c"), SRC_A).unwrap();
        fs::write(src.join("b.c"), SRC_B).unwrap();
        fs::write(build.join("configdata.pm"), "#define GEN 1\n").unwrap();
        fs::write(build.join("Makefile"), makefile("")).unwrap();
        for step in ["gen.h", "libx.so", "depend"] {
            assert!(make(&build, &[step]), "the first build: make {step}");
        }
        age(&src, 1000);
        age(&build, 1000);
        assert!(make(&build, &["-q", "libx.so"]));
        let snap = Snapshot::take(&build).unwrap().unwrap();
        fs::write(build.join("configdata.pm"), new_configdata).unwrap();
        fs::write(build.join("Makefile"), new_makefile).unwrap();
        (d, snap)
    }

    /// What the builder does after configure, up to the main make.
    fn restat(build: &Path, snap: &Snapshot) -> (usize, Kept) {
        let new = Makefile::parse(&fs::read_to_string(build.join("Makefile")).unwrap());
        let removed = remove_changed(build, snap, &new).unwrap();
        let generate = generated_sources(snap, &new);
        assert_eq!(generate, ["gen.h"]);
        let mut args = vec!["-s"];
        args.extend(generate.iter().map(String::as_str));
        assert!(make(build, &args));
        let kept = keep_unchanged(build, snap, &new).unwrap();
        assert!(make(build, &["depend"]));
        (removed, kept)
    }

    fn bytes(p: PathBuf) -> Vec<u8> {
        fs::read(p).unwrap()
    }

    #[test]
    fn configuring_again_to_the_same_output_keeps_every_object() {
        let (d, snap) = configured_again("#define GEN 1\n", &makefile(""));
        let build = d.path().join("build");
        let lib = bytes(build.join("libx.so"));
        let (removed, kept) = restat(&build, &snap);
        assert_eq!(removed, 0);
        // a.o includes the regenerated (identical) header; b.o and the library would not have
        // been rebuilt anyway, but the library is given the new time with a.o.
        assert_eq!(
            kept,
            Kept {
                objects: 1,
                others: 1,
                objects_to_build: 0
            }
        );
        assert!(make(&build, &["-q", "libx.so"]), "make sees nothing to do");
        assert!(make(&build, &["libx.so"]));
        assert_eq!(bytes(build.join("libx.so")), lib);
    }

    #[test]
    fn without_keeping_make_would_compile_again() {
        // The control of the test above: the regenerated header alone makes a.o out of date.
        let (d, snap) = configured_again("#define GEN 1\n", &makefile(""));
        let build = d.path().join("build");
        for step in ["gen.h", "depend"] {
            assert!(make(&build, &["-s", step]));
        }
        assert_eq!(
            bytes(build.join("gen.h")),
            bytes(build.join("configdata.pm"))
        );
        assert!(!make(&build, &["-q", "libx.so"]));
        drop(snap);
    }

    #[test]
    fn a_changed_compile_command_is_compiled_again() {
        // A DEFINE added in a build.info: only the object's command line changes.
        let (d, snap) = configured_again("#define GEN 1\n", &makefile("-DX=5"));
        let build = d.path().join("build");
        let old_a = bytes(build.join("a.o"));
        let old_b = bytes(build.join("b.o"));
        let (removed, kept) = restat(&build, &snap);
        assert_eq!(removed, 1, "a.o, whose command changed");
        assert!(!build.join("a.o").exists());
        assert_eq!(kept.objects, 0);
        assert!(!make(&build, &["-q", "libx.so"]));
        assert!(make(&build, &["-s", "libx.so"]));
        assert_ne!(bytes(build.join("a.o")), old_a, "compiled with -DX=5");
        assert_eq!(bytes(build.join("b.o")), old_b);
    }

    #[test]
    fn a_regenerated_header_that_changed_rebuilds_what_includes_it() {
        let (d, snap) = configured_again("#define GEN 7\n", &makefile(""));
        let build = d.path().join("build");
        let b_time = fs::metadata(build.join("b.o")).unwrap().modified().unwrap();
        let (removed, kept) = restat(&build, &snap);
        assert_eq!(removed, 0);
        assert_eq!(kept.objects, 0);
        assert_eq!(kept.objects_to_build, 1, "a.o includes gen.h");
        assert!(!make(&build, &["-q", "libx.so"]));
        let old_a = bytes(build.join("a.o"));
        assert!(make(&build, &["-s", "libx.so"]));
        assert_ne!(bytes(build.join("a.o")), old_a);
        let b_after = fs::metadata(build.join("b.o")).unwrap().modified().unwrap();
        assert_eq!(b_after, b_time, "b.o does not include it");
    }

    #[test]
    fn an_object_without_its_depfile_is_not_kept() {
        // Its headers are unknown: it may include the regenerated header.
        let (d, snap) = configured_again("#define GEN 1\n", &makefile(""));
        let build = d.path().join("build");
        fs::remove_file(build.join("a.d")).unwrap();
        let a_time = fs::metadata(build.join("a.o")).unwrap().modified().unwrap();
        let (_, kept) = restat(&build, &snap);
        assert_eq!(kept.objects, 0);
        assert_eq!(kept.objects_to_build, 1);
        let a_after = fs::metadata(build.join("a.o")).unwrap().modified().unwrap();
        assert_eq!(a_after, a_time, "left for make to judge");
    }
}
