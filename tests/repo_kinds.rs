//! Any real repository (issue 12): partial clones, repositories with missing
//! objects, shallow clones, bare repositories and worktrees, each made here
//! from a small fake OpenSSL (tests/fake-openssl) and built for real.

use crate::common;

use common::{
    assert_built, assert_usage_error, fake_openssl_repo, git, perfbisect, published_builds, stderr,
    stdout, test_kernels,
};
use perfbisect::build::builds::BuildMeta;
use std::fs;
use std::path::Path;
use std::process::Output;

/// The fake's libssl source with a line of its own: a blob no other commit has, and still
/// a libssl that passes the load check.
fn ssl_c(line: &str) -> String {
    let fake = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-openssl/ssl.c"),
    )
    .unwrap();
    format!("{fake}{line}\n")
}

/// Two commits: the older one has its own ssl.c (compiled by the build), and
/// its own test data under test/recipes/ and CI workflow under .github/ (read
/// by no build).
fn source_repo(dir: &Path) -> Vec<String> {
    let ids = fake_openssl_repo(
        dir,
        &[
            (
                "one",
                &[
                    ("ssl.c", &ssl_c("int fake_ssl_one;")),
                    ("test/recipes/90-test_data/x.txt", "old test data\n"),
                    (".github/workflows/ci.yml", "on: push\n"),
                ],
            ),
            (
                "two",
                &[
                    ("ssl.c", &ssl_c("int fake_ssl_two;")),
                    ("test/recipes/90-test_data/x.txt", "new test data\n"),
                ],
            ),
        ],
    );
    git(dir, &["tag", "v0", &ids[0]]);
    git(dir, &["config", "uploadpack.allowFilter", "true"]);
    ids
}

fn build(cache: &Path, repo: &Path, rev: &str) -> Output {
    perfbisect(cache)
        .args(["build", "--jobs", "1", "--repo"])
        .arg(repo)
        .arg(rev)
        .output()
        .unwrap()
}

fn meta_of(cache: &Path, commit: &str) -> BuildMeta {
    let entry = published_builds(cache)
        .into_iter()
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&commit[..12])
        })
        .unwrap_or_else(|| panic!("no build of {commit} in {}", cache.display()));
    serde_json::from_slice(&fs::read(entry.join("meta.json")).unwrap()).unwrap()
}

/// Does the repository have the object, without fetching it?
fn has_object(repo: &Path, oid: &str) -> bool {
    std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["cat-file", "-e", oid])
        .env("GIT_NO_LAZY_FETCH", "1")
        .status()
        .unwrap()
        .success()
}

/// What the user sees of a repository: HEAD, refs, index, config, status,
/// worktrees. None of it may change.
fn user_view(repo: &Path) -> String {
    let gitdir = git(repo, &["rev-parse", "--absolute-git-dir"]);
    let gitdir = Path::new(gitdir.trim());
    let common = git(
        repo,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    );
    let common = Path::new(common.trim());
    let index = fs::read(gitdir.join("index")).unwrap_or_default();
    format!(
        "HEAD {}\nrefs {}\nconfig {}\nindex {} bytes {:x?}\nstatus {}\nworktrees {}\nshallow {}",
        git(repo, &["rev-parse", "HEAD"]),
        git(repo, &["for-each-ref"]),
        fs::read_to_string(common.join("config")).unwrap(),
        index.len(),
        &index[index.len().saturating_sub(20)..],
        git(repo, &["status", "--porcelain", "--untracked-files=all"]),
        git(repo, &["worktree", "list", "--porcelain"]),
        fs::read_to_string(common.join("shallow")).unwrap_or_default(),
    )
}

#[test]
fn partial_clones_fetch_what_builds_read_and_leave_out_test_data() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    let ids = source_repo(&src);
    let ssl_old = git(&src, &["rev-parse", &format!("{}:ssl.c", ids[0])]);
    let data_old = git(
        &src,
        &[
            "rev-parse",
            &format!("{}:test/recipes/90-test_data/x.txt", ids[0]),
        ],
    );
    let url = format!("file://{}", src.display());
    // blob:none, the usual partial clone; tree:0 lacks the trees as well;
    // older git also wrote extensions.partialClone.
    for (filter, extension) in [("blob:none", false), ("tree:0", false), ("blob:none", true)] {
        let name = format!("{}-{extension}", filter.replace(':', "-"));
        let clone = d.path().join(format!("clone-{name}"));
        let cache = d.path().join(format!("cache-{name}"));
        git(
            d.path(),
            &[
                "clone",
                "-q",
                &format!("--filter={filter}"),
                "--no-local",
                &url,
                clone.to_str().unwrap(),
            ],
        );
        if extension {
            git(&clone, &["config", "extensions.partialClone", "origin"]);
        }
        assert!(!has_object(&clone, ssl_old.trim()), "{filter}");
        let before = user_view(&clone);
        let o = build(&cache, &clone, "v0");
        assert_built(&o);
        let meta = meta_of(&cache, &ids[0]);
        assert!(meta.ok, "{meta:?}");
        // (.github/ is unchanged since v0, so the clone's checkout fetched its blob.)
        assert_eq!(
            meta.left_out,
            ["test/recipes/90-test_data/x.txt"],
            "{filter}: {meta:?}"
        );
        // The blob the build needed was fetched into the object store; the
        // test data no build reads was not.
        assert!(has_object(&clone, ssl_old.trim()), "{filter}");
        assert!(!has_object(&clone, data_old.trim()), "{filter}");
        assert_eq!(
            before,
            user_view(&clone),
            "{filter}: the user's view changed"
        );
        let log = fs::read_to_string(published_builds(&cache)[0].join("build.log")).unwrap();
        assert!(
            log.contains("left out test/recipes/90-test_data/x.txt"),
            "{log}"
        );
    }
}

#[test]
fn partial_clone_whose_remote_is_gone_names_the_object_and_the_fix() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    let ids = source_repo(&src);
    let ssl_old = git(&src, &["rev-parse", &format!("{}:ssl.c", ids[0])]);
    let clone = d.path().join("clone");
    git(
        d.path(),
        &[
            "clone",
            "-q",
            "--filter=blob:none",
            "--no-local",
            &format!("file://{}", src.display()),
            clone.to_str().unwrap(),
        ],
    );
    let gone = d.path().join("gone");
    git(
        &clone,
        &[
            "remote",
            "set-url",
            "origin",
            &format!("file://{}", gone.display()),
        ],
    );
    let cache = d.path().join("cache");
    let o = build(&cache, &clone, &ids[0]);
    eprintln!("{}", stderr(&o));
    assert_usage_error(&o, &format!("object {} (ssl.c in commit", ssl_old.trim()));
    let err = stderr(&o);
    assert!(err.contains("is missing from partial clone"), "{err}");
    assert!(
        err.contains("does not appear to be a git repository"),
        "{err}"
    );
    assert!(err.contains("fsck"), "{err}");
    assert!(published_builds(&cache).is_empty());
    // Once the remote is back, the same cache builds it.
    git(
        &clone,
        &[
            "remote",
            "set-url",
            "origin",
            &format!("file://{}", src.display()),
        ],
    );
    assert_built(&build(&cache, &clone, &ids[0]));
}

/// A repository that lost objects (a mirror with pruned objects, a damaged
/// disk), not a partial clone: nothing to fetch from.
#[test]
fn missing_blobs_are_left_out_when_unread_and_named_when_needed() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let ids = source_repo(&repo);
    let remove = |spec: &str| -> String {
        let oid = git(&repo, &["rev-parse", spec]).trim().to_string();
        fs::remove_file(repo.join(".git/objects").join(&oid[..2]).join(&oid[2..])).unwrap();
        oid
    };
    remove(&format!("{}:test/recipes/90-test_data/x.txt", ids[0]));
    remove(&format!("{}:.github/workflows/ci.yml", ids[0]));
    let cache = d.path().join("cache");
    assert_built(&build(&cache, &repo, &ids[0]));
    assert_eq!(
        meta_of(&cache, &ids[0]).left_out,
        [
            ".github/workflows/ci.yml",
            "test/recipes/90-test_data/x.txt"
        ]
    );

    let ssl = remove(&format!("{}:ssl.c", ids[0]));
    let cache = d.path().join("cache2");
    let o = build(&cache, &repo, &ids[0]);
    eprintln!("{}", stderr(&o));
    assert_usage_error(
        &o,
        &format!(
            "object {ssl} (ssl.c in commit {}) is missing from",
            &ids[0][..10]
        ),
    );
    let err = stderr(&o);
    assert!(err.contains("fetch") && err.contains("fsck"), "{err}");
    assert!(published_builds(&cache).is_empty());
}

#[test]
fn shallow_clone_crossing_its_boundary_says_unshallow() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    let ids = fake_openssl_repo(
        &src,
        &[
            ("one", &[("ssl.c", &ssl_c("int a;"))]),
            ("two", &[("ssl.c", &ssl_c("int b;"))]),
            ("three", &[("ssl.c", &ssl_c("int c;"))]),
            ("four", &[("ssl.c", &ssl_c("int d;"))]),
        ],
    );
    git(&src, &["tag", "v0", &ids[0]]);
    let clone = d.path().join("shallow");
    git(
        d.path(),
        &[
            "clone",
            "-q",
            "--depth",
            "2",
            &format!("file://{}", src.display()),
            clone.to_str().unwrap(),
        ],
    );
    let cache = d.path().join("cache");
    // Inside the shallow history: fine.
    assert_built(&build(&cache, &clone, "HEAD~1"));
    // Beyond it.
    let o = build(&cache, &clone, &ids[0]);
    eprintln!("{}", stderr(&o));
    assert_usage_error(&o, "git -C");
    assert!(stderr(&o).contains("a shallow clone") && stderr(&o).contains("fetch --unshallow"));

    // Both ends present, the history between them not.
    git(
        &clone,
        &["fetch", "-q", "--depth", "1", "origin", "tag", "v0"],
    );
    let o = perfbisect(&cache)
        .arg("--kernels-dir")
        .arg(test_kernels())
        .args(["bisect", "--tool", "fakework", "--repo"])
        .arg(&clone)
        .arg("v0..HEAD")
        .output()
        .unwrap();
    eprintln!("{}", stderr(&o));
    assert_usage_error(&o, "crosses its shallow boundary");
    assert!(stderr(&o).contains("fetch --unshallow"));
}

#[test]
fn bare_repositories_and_worktrees_build() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    let ids = source_repo(&src);
    let cache = d.path().join("cache");

    let bare = d.path().join("bare.git");
    git(
        d.path(),
        &[
            "clone",
            "-q",
            "--bare",
            src.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    let refs = git(&bare, &["for-each-ref"]);
    assert_built(&build(&cache, &bare, "HEAD~1"));
    meta_of(&cache, &ids[0]);
    assert_eq!(refs, git(&bare, &["for-each-ref"]));

    // A worktree's HEAD is its own (the older commit here), not the main one's.
    let wt = d.path().join("wt");
    git(
        &src,
        &["worktree", "add", "-q", wt.to_str().unwrap(), &ids[0]],
    );
    let before = (user_view(&src), user_view(&wt));
    let cache = d.path().join("cache-wt");
    assert_built(&build(&cache, &wt, "HEAD"));
    meta_of(&cache, &ids[0]);
    assert_eq!(before, (user_view(&src), user_view(&wt)));
}

/// Tested commits show the committer date (the order git bisect walks), and
/// the author date too when it is more than a day away.
#[test]
fn bisect_steps_show_committer_dates_and_distant_author_dates() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    // The template alone, uncommitted: the commits below carry dates.
    fake_openssl_repo(&repo, &[]);
    // (cost, author date, committer date)
    let commits = [
        ("fast", "2023-01-10T12:00:00Z", "2023-01-10T13:00:00Z"),
        ("slow", "2022-11-30T12:00:00Z", "2023-02-07T09:00:00Z"),
        ("slow too", "2023-02-07T10:00:00Z", "2023-02-08T09:00:00Z"),
    ];
    for (label, authored, committed) in commits {
        let cost = if label == "fast" { 200 } else { 2000 };
        fs::write(
            repo.join("fake_cost.h"),
            format!("#define FAKE_COST {cost}\n"),
        )
        .unwrap();
        git(&repo, &["add", "-A"]);
        let o = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["commit", "-q", "--allow-empty", "-m", label])
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
            .env("GIT_AUTHOR_DATE", authored)
            .env("GIT_COMMITTER_DATE", committed)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let cache = d.path().join("cache");
    let o = perfbisect(&cache)
        .arg("--kernels-dir")
        .arg(test_kernels())
        .args([
            "bisect",
            "--tool",
            "fakework",
            "--samples",
            "4",
            "--max-samples",
            "16",
            "--duration",
            "0.05",
            "--alpha",
            "0.5",
            "--min-effect",
            "100%",
            "--jobs",
            "1",
            "--repo",
        ])
        .arg(&repo)
        .arg("HEAD~2..HEAD")
        .arg("-v")
        .output()
        .unwrap();
    // The step lines (-v, on stderr).
    let out = stderr(&o);
    assert!(o.status.success(), "{out}\n{}", stdout(&o));
    eprintln!("{out}");
    let line = |subject: &str| -> String {
        out.lines()
            .find(|l| l.starts_with("  ") && l.trim_end().ends_with(&format!(" {subject}")))
            .unwrap_or_else(|| panic!("no step line for {subject}:\n{out}"))
            .to_string()
    };
    assert!(line("fast").contains(" 2023-01-10 "), "{out}");
    assert!(!line("fast").contains("authored"), "{out}");
    assert!(
        line("slow").contains(" 2023-02-07 (authored 2022-11-30) "),
        "{out}"
    );
    // Less than a day apart: the committer date alone.
    assert!(line("slow too").contains(" 2023-02-08 "), "{out}");
    assert!(!line("slow too").contains("authored"), "{out}");
}
