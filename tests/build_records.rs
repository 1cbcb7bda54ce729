//! What a build records and how it publishes (issue 12): reproducible bytes
//! with one SOURCE_DATE_EPOCH, the hashes of what a kernel loads, and a
//! build tree that is published even when OpenSSL's install fails. Built
//! with the fake OpenSSL of tests/fake-openssl.

use crate::common;

use common::{assert_built, fake_openssl_repo, perfbisect, published_builds, stderr, stdout};
use perfbisect::build::builds::{BuildMeta, Incremental};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

fn build(cache: &Path, repo: &Path, revs: &[&str]) -> Output {
    perfbisect(cache)
        .args(["build", "--jobs", "1", "--repo"])
        .arg(repo)
        .args(revs)
        // The user's value must not reach the build.
        .env("SOURCE_DATE_EPOCH", "123")
        .output()
        .unwrap()
}

fn entry_of(cache: &Path, commit: &str) -> PathBuf {
    published_builds(cache)
        .into_iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&commit[..12])
        })
        .unwrap_or_else(|| panic!("no build of {commit} in {}", cache.display()))
}

/// The build's record (meta.json), as the build cache reads it.
fn meta(entry: &Path) -> BuildMeta {
    serde_json::from_slice(&fs::read(entry.join("meta.json")).unwrap()).unwrap()
}

/// How the build's incremental start went; panics on a clean build.
fn incremental(m: &BuildMeta) -> &Incremental {
    m.incremental
        .as_ref()
        .unwrap_or_else(|| panic!("not incremental: {m:?}"))
}

fn sha256(p: &Path) -> String {
    hex::encode(Sha256::digest(fs::read(p).unwrap()))
}

#[test]
fn builds_are_reproducible_and_record_the_hashes_of_what_kernels_load() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let ids = fake_openssl_repo(
        &repo,
        &[
            ("base", &[("apps.c", "int app_one;\n")]),
            // No library source changes: the same libraries, byte for byte.
            ("apps only", &[("apps.c", "int app_two;\n")]),
            (
                "library change",
                &[("fake_cost.h", "#define FAKE_COST 300\n")],
            ),
        ],
    );
    let cache = d.path().join("cache");
    // Clean builds: an incremental one would not even relink libcrypto for
    // the commit outside the libraries.
    assert_built(&build(
        &cache,
        &repo,
        &["--clean-build", &ids[0], &ids[1], &ids[2]],
    ));
    let metas: Vec<(PathBuf, BuildMeta)> = ids
        .iter()
        .map(|id| {
            let e = entry_of(&cache, id);
            let m = meta(&e);
            (e, m)
        })
        .collect();
    for (entry, m) in &metas {
        let bins = &m.binaries;
        let names: Vec<&String> = bins.keys().collect();
        assert_eq!(names, ["lib/libcrypto.so.3", "lib/libssl.so.3"], "{m:?}");
        for (name, sha) in bins {
            assert_eq!(*sha, sha256(&entry.join("prefix").join(name)), "{name}");
        }
        let log = fs::read_to_string(entry.join("build.log")).unwrap();
        assert!(
            log.contains("fake-config: SOURCE_DATE_EPOCH=[946684800]"),
            "{log}"
        );
    }
    let bins = |i: usize| metas[i].1.binaries.clone();
    assert_eq!(bins(0), bins(1), "a commit outside the libraries");
    assert_ne!(
        bins(1)["lib/libcrypto.so.3"],
        bins(2)["lib/libcrypto.so.3"],
        "a library change"
    );
    assert_eq!(bins(1)["lib/libssl.so.3"], bins(2)["lib/libssl.so.3"]);
}

/// OpenSSL's install can fail where its build did not (2022 master:
/// `cp: cannot stat 'ssl/record/libssl.a'`): the libraries are published from
/// the build tree, and the record says so.
#[test]
fn a_failed_install_publishes_from_the_build_tree() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let ids = fake_openssl_repo(
        &repo,
        &[
            ("installs", &[("fake-install-fails", "0\n")]),
            ("install fails", &[("fake-install-fails", "1\n")]),
            ("no libssl", &[("fake-install-fails", "nolibs\n")]),
        ],
    );
    let cache = d.path().join("cache");
    let o = build(&cache, &repo, &[&ids[0], &ids[1]]);
    assert_built(&o);
    let out = stdout(&o);
    assert!(
        out.contains("(install failed (exit status: 2): published from the build tree) -> "),
        "{out}"
    );
    let good = meta(&entry_of(&cache, &ids[0]));
    let entry = entry_of(&cache, &ids[1]);
    let fell_back = meta(&entry);
    assert!(good.install_fallback.is_none(), "{good:?}");
    assert!(fell_back.ok, "{fell_back:?}");
    assert_eq!(
        fell_back.install_fallback.as_deref(),
        Some("install failed (exit status: 2)"),
        "{fell_back:?}"
    );
    // The same libraries and headers as a working install.
    assert_eq!(good.binaries, fell_back.binaries);
    let prefix = entry.join("prefix");
    for f in ["include/openssl/opensslv.h", "include/openssl/crypto.h"] {
        assert!(prefix.join(f).is_file(), "{f}");
    }
    assert!(!prefix.join(".perfbisect-destdir").exists());
    let log = fs::read_to_string(entry.join("build.log")).unwrap();
    assert!(log.contains("cannot stat 'ssl/record/libssl.a'"), "{log}");
    assert!(
        log.contains(
            "### perfbisect: install failed (exit status: 2); taking the shared libraries"
        ),
        "{log}"
    );
    assert!(
        log.contains("### perfbisect: from the build tree: lib/libssl.so.3"),
        "{log}"
    );

    // Without the libraries there is nothing to publish: a failed build,
    // cached as such, with the reason.
    let o = build(&cache, &repo, &[&ids[2]]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let failed = meta(&entry_of(&cache, &ids[2]));
    assert!(!failed.ok, "{failed:?}");
    let err = failed.error.as_deref().unwrap();
    assert!(
        err.starts_with("install failed (exit status: 2), and the build tree has no usable libraries either (no libssl.so* in "),
        "{err}"
    );
}

fn commit_removal(repo: &Path, path: &str, msg: &str) -> String {
    fs::remove_file(repo.join(path)).unwrap();
    common::git(repo, &["add", "-A"]);
    common::git(repo, &["commit", "-q", "-m", msg]);
    common::git(repo, &["rev-parse", "HEAD"]).trim().to_string()
}

fn mtime(p: &Path) -> std::time::SystemTime {
    fs::symlink_metadata(p).unwrap().modified().unwrap()
}

/// A work tree going back to configure inputs it was configured with before (a bisect's tree
/// passing a build.info change and back) reuses configure's output instead of running it: the
/// fake config is not run, the log says so, and the build is byte-identical to a clean one.
#[test]
fn configure_output_is_reused_for_inputs_configured_before() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let template = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-openssl/Makefile.in"),
    )
    .unwrap();
    let changed = template.clone() + "# changed\n";
    let ids = fake_openssl_repo(
        &repo,
        &[
            ("base", &[("fake_cost.h", "#define FAKE_COST 100\n")]),
            ("makefile", &[("Makefile.in", &changed)]),
            (
                "back, and a cost",
                &[
                    ("Makefile.in", &template),
                    ("fake_cost.h", "#define FAKE_COST 300\n"),
                ],
            ),
        ],
    );
    let cache = d.path().join("cache");
    let log_of = |id: &str| fs::read_to_string(entry_of(&cache, id).join("build.log")).unwrap();
    let builds = ["--work-trees", "1"];
    for id in &ids {
        assert_built(&build(&cache, &repo, &[builds[0], builds[1], id]));
    }
    let log = log_of(&ids[1]);
    assert!(
        log.contains("configuring again: Makefile.in changed"),
        "{log}"
    );
    assert!(log.contains("fake-config-arg"), "configure ran: {log}");
    let log = log_of(&ids[2]);
    assert!(
        log.contains("configuring again: Makefile.in changed"),
        "{log}"
    );
    assert!(
        log.contains("configure not run: this tree was configured with the same inputs before"),
        "{log}"
    );
    assert!(!log.contains("fake-config-arg"), "configure ran: {log}");
    let m = meta(&entry_of(&cache, &ids[2]));
    assert!(incremental(&m).configured, "{m:?}");
    let reused = m.binaries.clone();
    assert_built(&build(
        &cache,
        &repo,
        &["--rebuild", "--clean-build", &ids[2]],
    ));
    let clean = meta(&entry_of(&cache, &ids[2]));
    assert!(clean.incremental.is_none(), "{clean:?}");
    assert!(
        log_of(&ids[2]).contains("fake-config-arg"),
        "a clean build configures"
    );
    assert_eq!(reused, clean.binaries);
}

/// Item 1 of issue 12 on the fake OpenSSL: the tree of the last build is
/// moved to the next commit (only differing files rewritten), configure runs
/// only when its inputs changed, a removed header is forgotten, and what cannot
/// be continued (a failing incremental make) is built clean.
#[test]
fn incremental_builds_move_the_last_tree_and_match_clean_builds() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let makefile = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-openssl/Makefile.in"),
    )
    .unwrap()
        + "# changed\n";
    let mut ids = fake_openssl_repo(
        &repo,
        &[
            ("base", &[("extra/extra.h", "/* x */\n")]),
            ("cost", &[("fake_cost.h", "#define FAKE_COST 300\n")]),
            ("makefile", &[("Makefile.in", &makefile)]),
        ],
    );
    // The whole directory goes with its only file.
    ids.push(commit_removal(&repo, "extra/extra.h", "drop a header"));
    ids.extend(common::synthetic_repo_commits(
        &repo,
        &[
            (
                "fails incrementally",
                &[
                    ("fake-fails-incremental", "1\n"),
                    ("fake_cost.h", "#define FAKE_COST 400\n"),
                ],
            ),
            ("broken", &[("fake_cost.h", "#error broken\n")]),
        ],
    ));
    let cache = d.path().join("cache");
    let work_src = cache.join("work/src");
    let log_of = |id: &str| fs::read_to_string(entry_of(&cache, id).join("build.log")).unwrap();

    assert_built(&build(&cache, &repo, &[&ids[0]]));
    assert!(meta(&entry_of(&cache, &ids[0])).incremental.is_none());
    let ssl_mtime = mtime(&work_src.join("ssl.c"));

    // One file changed: one file rewritten, no configure, the rest untouched.
    let o = build(&cache, &repo, &[&ids[1]]);
    assert_built(&o);
    assert!(
        stdout(&o).contains(&format!(
            "incrementally from {} (1 file(s) changed)",
            &ids[0][..10]
        )),
        "{}",
        stdout(&o)
    );
    let inc = meta(&entry_of(&cache, &ids[1]));
    assert_eq!(incremental(&inc).from, ids[0], "{inc:?}");
    assert_eq!(incremental(&inc).written, 1, "{inc:?}");
    assert!(!incremental(&inc).configured, "{inc:?}");
    let log = log_of(&ids[1]);
    assert!(log.contains("configure inputs unchanged"), "{log}");
    assert!(!log.contains("fake-config-arg"), "{log}");
    assert_eq!(ssl_mtime, mtime(&work_src.join("ssl.c")));
    // The same bytes as a clean build of the commit.
    assert_built(&build(
        &cache,
        &repo,
        &["--rebuild", "--clean-build", &ids[1]],
    ));
    let clean = meta(&entry_of(&cache, &ids[1]));
    assert!(clean.incremental.is_none(), "{clean:?}");
    assert_eq!(inc.binaries, clean.binaries);

    // A configure input changed: configure runs again.
    assert_built(&build(&cache, &repo, &[&ids[2]]));
    let m = meta(&entry_of(&cache, &ids[2]));
    assert!(incremental(&m).configured, "{m:?}");
    let log = log_of(&ids[2]);
    assert!(
        log.contains("configuring again: Makefile.in changed"),
        "{log}"
    );
    assert!(log.contains("fake-config-arg"), "{log}");
    // --rebuild of the commit the tree holds builds it again from scratch.
    assert_built(&build(&cache, &repo, &["--rebuild", &ids[2]]));
    assert!(meta(&entry_of(&cache, &ids[2])).incremental.is_none());

    // A removed header: still incremental (make's dependency records forget it; the unit
    // test of build::depends checks that on OpenSSL's record formats), the file gone.
    assert_built(&build(&cache, &repo, &[&ids[3]]));
    let m = meta(&entry_of(&cache, &ids[3]));
    assert_eq!(incremental(&m).removed, 1, "{m:?}");
    assert!(!work_src.join("extra").exists());

    // The incremental make fails, the clean one does not: the commit builds.
    assert_built(&build(&cache, &repo, &[&ids[4]]));
    let m = meta(&entry_of(&cache, &ids[4]));
    assert!(m.ok, "{m:?}");
    assert!(m.incremental.is_none(), "{m:?}");
    let log = log_of(&ids[4]);
    assert!(
        log.contains("refusing to build over an earlier build"),
        "{log}"
    );
    assert!(
        log.contains("the incremental build failed; building again from a clean tree"),
        "{log}"
    );

    // A failed build leaves no tree to continue: the next build is clean.
    let o = build(&cache, &repo, &[&ids[5]]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!cache.join("work/tree.json").exists());
    assert_built(&build(&cache, &repo, &["--rebuild", &ids[1]]));
    assert!(meta(&entry_of(&cache, &ids[1])).incremental.is_none());
}

/// A changed perlasm translator: the assembler generated from it goes, so
/// make generates it again (its rules do not all name the translator).
#[test]
fn a_changed_perlasm_translator_regenerates_the_assembler() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let ids = fake_openssl_repo(
        &repo,
        &[
            ("base", &[("crypto/perlasm/x86_64-xlate.pl", "# v1\n")]),
            ("xlate", &[("crypto/perlasm/x86_64-xlate.pl", "# v2\n")]),
        ],
    );
    let cache = d.path().join("cache");
    assert_built(&build(&cache, &repo, &[&ids[0]]));
    // What OpenSSL's build would have generated from perlasm scripts.
    let asm = cache.join("work/build/crypto/aes/aesni-x86_64.s");
    fs::create_dir_all(asm.parent().unwrap()).unwrap();
    fs::write(&asm, "# generated\n").unwrap();
    assert_built(&build(&cache, &repo, &[&ids[1]]));
    let m = meta(&entry_of(&cache, &ids[1]));
    assert!(!incremental(&m).configured, "{m:?}");
    assert!(!asm.exists());
    let log = fs::read_to_string(entry_of(&cache, &ids[1]).join("build.log")).unwrap();
    assert!(
        log.contains(
            "crypto/perlasm/x86_64-xlate.pl changed: removed 1 generated assembler file(s)"
        ),
        "{log}"
    );
}

/// Two work trees (the default): a build far from the one tree there is starts a second tree
/// instead of moving the first, and each later build continues the tree nearest to it.
#[test]
fn builds_continue_the_nearest_of_two_work_trees() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let mut ids = fake_openssl_repo(&repo, &[("base", &[("notes/0.txt", "0\n")])]);
    let names: Vec<String> = (1..=70).map(|i| format!("notes/{i}.txt")).collect();
    let commits: Vec<(&str, Vec<(&str, &str)>)> = names
        .iter()
        .map(|n| ("a note", vec![(n.as_str(), "note\n")]))
        .collect();
    let commits: Vec<(&str, &[(&str, &str)])> =
        commits.iter().map(|(m, f)| (*m, f.as_slice())).collect();
    ids.extend(common::synthetic_repo_commits(&repo, &commits));
    let cache = d.path().join("cache");
    let from = |id: &str| incremental(&meta(&entry_of(&cache, id))).from.clone();

    assert_built(&build(&cache, &repo, &[&ids[0]]));
    // 70 commits away: a tree of its own, built clean; the first tree stays where it was.
    assert_built(&build(&cache, &repo, &[&ids[70]]));
    assert!(meta(&entry_of(&cache, &ids[70])).incremental.is_none());
    assert!(cache.join("work/1/tree.json").is_file());
    // Each end's neighbour continues that end's tree.
    assert_built(&build(&cache, &repo, &[&ids[69]]));
    assert_eq!(from(&ids[69]), ids[70].as_str());
    assert_built(&build(&cache, &repo, &[&ids[1]]));
    assert_eq!(from(&ids[1]), ids[0].as_str());
}

#[test]
fn far_apart_commits_are_built_side_by_side_and_near_ones_in_turn() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    // Each make sleeps 2 s between configure and install, so two builds made side by side
    // both configure before either installs; one after the other, they alternate.
    let mut ids = fake_openssl_repo(
        &repo,
        &[(
            "base",
            &[("fake-make-sleep", "2\n"), ("fake-label", "old\n")],
        )],
    );
    let names: Vec<String> = (1..=70).map(|i| format!("notes/{i}.txt")).collect();
    let mut commits: Vec<(&str, Vec<(&str, &str)>)> = names
        .iter()
        .map(|n| ("a note", vec![(n.as_str(), "note\n")]))
        .collect();
    commits.last_mut().unwrap().1.push(("fake-label", "new\n"));
    let commits: Vec<(&str, &[(&str, &str)])> =
        commits.iter().map(|(m, f)| (*m, f.as_slice())).collect();
    ids.extend(common::synthetic_repo_commits(&repo, &commits));
    let cache = d.path().join("cache");
    let log = d.path().join("fake.log");
    let build_logged = |revs: &[&str]| {
        fs::write(&log, "").unwrap();
        let o = perfbisect(&cache)
            .args(["build", "--jobs", "1", "--repo"])
            .arg(&repo)
            .args(revs)
            .env("PB_FAKE_LOG", &log)
            .output()
            .unwrap();
        assert_built(&o);
        fs::read_to_string(&log).unwrap()
    };

    // 70 commits apart: two trees, two clean builds at once.
    let events = build_logged(&[&ids[0], &ids[70]]);
    let lines: Vec<&str> = events.lines().collect();
    assert_eq!(lines.len(), 4, "{events}");
    assert!(
        lines[..2].iter().all(|l| l.starts_with("configure "))
            && lines[2..].iter().all(|l| l.starts_with("installed ")),
        "not built side by side:\n{events}"
    );
    for id in [&ids[0], &ids[70]] {
        assert!(meta(&entry_of(&cache, id)).incremental.is_none());
    }
    assert!(cache.join("work/tree.json").is_file() && cache.join("work/1/tree.json").is_file());

    // Neighbours: the second continues the first one's tree, after it.
    build_logged(&[&ids[1], &ids[2]]);
    assert_eq!(incremental(&meta(&entry_of(&cache, &ids[1]))).from, ids[0]);
    assert_eq!(incremental(&meta(&entry_of(&cache, &ids[2]))).from, ids[1]);
}

fn exports(file: &Path, symbol: &str) -> bool {
    let bytes = fs::read(file).unwrap();
    let needle = format!("{symbol}\0");
    bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Issue 29: on 2022 master's TLS record-layer series the Makefile lists two libraries
/// installed as libssl.so.3, the real one and a stub of ssl/record/ with no symbols, and the
/// stub was published as the build's libssl (called good; every TLS kernel then failed on
/// "undefined symbol: TLS_server_method"). The top-level one is published now, by either
/// recipe; a build whose only libssl is a stub fails the load check and is cached as failed;
/// an entry published before builds were checked is checked when used, and rebuilt if wrong.
#[test]
fn a_stub_library_is_never_published_as_libssl() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let ids = fake_openssl_repo(
        &repo,
        &[
            (
                "two libraries installed as libssl.so.3",
                &[(
                    "fake-shlibs",
                    "libcrypto.so.3 libssl.so.3 ssl/record/libssl.so.3\n",
                )],
            ),
            (
                "only a stub libssl",
                &[
                    ("fake-shlibs", "libcrypto.so.3 libssl.so.3\n"),
                    ("fake-ssl-stub", "1\n"),
                ],
            ),
        ],
    );
    let cache = d.path().join("cache");
    assert_built(&build(&cache, &repo, &["--clean-build", &ids[0]]));
    let entry = entry_of(&cache, &ids[0]);
    let libssl = entry.join("prefix/lib/libssl.so.3");
    assert!(
        exports(&libssl, "TLS_server_method"),
        "the stub was published"
    );
    let log = fs::read_to_string(entry.join("build.log")).unwrap();
    assert!(
        log.contains("### perfbisect: 2 libraries are installed as libssl.so.3 (libssl.so.3, ssl/record/libssl.so.3): publishing libssl.so.3, the top-level one"),
        "{log}"
    );
    assert_eq!(
        log.matches("### perfbisect: from the build tree: lib/libssl.so.3\n")
            .count(),
        1,
        "{log}"
    );
    assert_eq!(meta(&entry).checked, 1);

    // make install_dev copies both, the stub last: the real one is put back over it.
    let full = d.path().join("cache-full");
    let o = perfbisect(&full)
        .args(["build", "--jobs", "1", "--recipe", "full", "--repo"])
        .arg(&repo)
        .arg(&ids[0])
        .output()
        .unwrap();
    assert_built(&o);
    let entry_full = entry_of(&full, &ids[0]);
    assert!(exports(
        &entry_full.join("prefix/lib/libssl.so.3"),
        "TLS_server_method"
    ));
    let log = fs::read_to_string(entry_full.join("build.log")).unwrap();
    assert!(
        log.contains("### perfbisect: published lib/libssl.so.3 from libssl.so.3 over what make install left there"),
        "{log}"
    );

    // A stub is all there is: a failed build, with the reason, cached as failed.
    let o = build(&cache, &repo, &["--clean-build", &ids[1]]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let failed = meta(&entry_of(&cache, &ids[1]));
    assert!(!failed.ok, "{failed:?}");
    let err = failed.error.as_deref().unwrap();
    assert!(
        err.starts_with("the published libraries fail the load check: lib/libssl.so.3 exports no SSL_CTX_new, SSL_new, SSL_free, TLS_server_method, TLS_client_method; log: "),
        "{err}"
    );
    assert!(!entry_of(&cache, &ids[1]).join("prefix").exists());
    assert!(
        stdout(&o).contains(": FAILED: the published libraries fail the load check: "),
        "{}",
        stdout(&o)
    );

    // An entry published by the old logic (the stub in its prefix, no record of a check):
    // checked when used, found wrong, and built again.
    let stub = fs::read(full.join("work/build/ssl/record/libssl.so.3")).unwrap();
    fs::write(&libssl, &stub).unwrap();
    // (0: published before builds were checked, so the record has no `checked`; its
    // `binaries` are the files it published, the stub among them.)
    let mut old = meta(&entry);
    old.checked = 0;
    old.binaries
        .insert("lib/libssl.so.3".into(), sha256(&libssl));
    fs::write(
        entry.join("meta.json"),
        serde_json::to_string(&old).unwrap(),
    )
    .unwrap();
    let o = build(&cache, &repo, &[&ids[0]]);
    assert_built(&o);
    let warning = "was published before builds were checked, and fails the check (lib/libssl.so.3 exports no SSL_CTX_new, SSL_new,";
    assert_eq!(stderr(&o).matches(warning).count(), 1, "{}", stderr(&o));
    let entry = entry_of(&cache, &ids[0]);
    assert!(exports(
        &entry.join("prefix/lib/libssl.so.3"),
        "TLS_server_method"
    ));
    assert_eq!(meta(&entry).checked, 1);

    // A good old entry passes, is recorded as checked, and is not built again.
    let mut old = meta(&entry);
    old.checked = 0;
    let written = serde_json::to_string(&old).unwrap();
    assert!(!written.contains("\"checked\""), "{written}");
    fs::write(entry.join("meta.json"), written).unwrap();
    let created = old.created;
    let o = build(&cache, &repo, &[&ids[0]]);
    assert_built(&o);
    assert!(!stderr(&o).contains("rebuilding"), "{}", stderr(&o));
    let now = meta(&entry);
    assert_eq!(now.checked, 1);
    assert_eq!(now.created, created);
}
