//! Shared by the integration tests: the binary, scratch caches, and small
//! synthetic git repositories.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};
use std::process::Output;

pub fn perfbisect(cache: &Path) -> Command {
    let mut c = Command::cargo_bin("perfbisect").expect("binary built");
    c.arg("--cache").arg(cache).env_remove("PERFBISECT_CACHE");
    c
}

pub fn test_kernels() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A `perfbisect build` that succeeded, or its whole output.
pub fn assert_built(o: &Output) {
    assert!(
        o.status.success(),
        "build failed: {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

/// Exit code 2 with a single error line naming the problem, no panic.
pub fn assert_usage_error(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit code, stderr: {err}");
    assert!(!err.contains("panicked"), "panic: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected one line, got: {err}");
    assert!(lines[0].starts_with("perfbisect: error: "), "{err}");
    assert!(
        err.to_lowercase().contains(&needle.to_lowercase()),
        "expected '{needle}' in: {err}"
    );
}

pub fn git(dir: &Path, args: &[&str]) -> String {
    let o = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .expect("git runs");
    assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
    stdout(&o)
}

/// A git repository with one commit per (message, files) entry; returns
/// the commit ids.
pub fn synthetic_repo(dir: &Path, commits: &[(&str, &[(&str, &str)])]) -> Vec<String> {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    synthetic_repo_commits(dir, commits)
}

/// More commits on top of a repository made by [`synthetic_repo`].
pub fn synthetic_repo_commits(dir: &Path, commits: &[(&str, &[(&str, &str)])]) -> Vec<String> {
    let mut ids = Vec::new();
    for (msg, files) in commits {
        for (path, content) in *files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, content).unwrap();
            if path.ends_with("config") || path.ends_with("Configure") {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-q", "-m", msg]);
        ids.push(git(dir, &["rev-parse", "HEAD"]).trim().to_string());
    }
    ids
}

pub const VERSION_300: &str = "MAJOR=3\nMINOR=0\nPATCH=0\nPRE_RELEASE_TAG=\nBUILD_METADATA=\nRELEASE_DATE=\"7 Sep 2021\"\nSHLIB_VERSION=3\n";

/// A directory tree copied with modes kept (the fake OpenSSL's config stays executable).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            // fs::copy keeps the mode, so config stays executable.
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// The fake OpenSSL of tests/fake-openssl (builds in well under a second)
/// as a git repository: the template, then one commit per entry writing
/// its files over it; returns the commit ids.
pub fn fake_openssl_repo(dir: &Path, commits: &[(&str, &[(&str, &str)])]) -> Vec<String> {
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-openssl"),
        dir,
    );
    synthetic_repo(dir, commits)
}

/// Published build entries of a cache (staging and trash directories, which
/// start with a dot, excluded).
pub fn published_builds(cache: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(cache.join("builds")) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// A search of the fake OpenSSL that decides in few samples on a shared machine: the fake's
/// change is 10x, so a large minimum effect with a loose alpha is enough (60%, not 100%: an
/// undo is a speed-up of 90%, which a 100% minimum effect could never reach).
pub const FAST_SEARCH: &[&str] = &[
    "--tool",
    "fakework",
    "--samples",
    "4",
    "--max-samples",
    "16",
    "--duration",
    "0.05",
    "--alpha",
    "0.2",
    "--min-effect",
    "60%",
    "--jobs",
    "2",
];

/// A command's `--format json` result read into the library's own result type (its `schema`
/// key, the envelope's, is left to the tests of the JSON contract); panics with the command's
/// output when it does not parse.
pub fn typed<T: serde::de::DeserializeOwned>(o: &Output) -> T {
    typed_str(&stdout(o)).unwrap_or_else(|e| {
        panic!(
            "not a {} ({e}): status {:?}\nstdout: {}\nstderr: {}",
            std::any::type_name::<T>(),
            o.status,
            stdout(o),
            stderr(o)
        )
    })
}

/// The same from text (a result file, or the captured stdout of a spawned run).
pub fn typed_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(text)
}

/// `kernels --format json`: the library's `KernelList` borrows its kernels, so it is read
/// back through this owned twin of its two fields (the kernel itself is the library's type).
#[derive(serde::Deserialize)]
pub struct Kernels {
    pub kernels: Vec<ListedKernel>,
}

#[derive(serde::Deserialize)]
pub struct ListedKernel {
    #[serde(flatten)]
    pub kernel: perfbisect::measure::kernel::Kernel,
    pub perftools: String,
}

/// No half-written entry is visible: every build and kernel entry has a
/// meta.json that parses, and nothing is left in staging.
pub fn assert_cache_consistent(cache: &Path) {
    for sub in ["builds", "kernels"] {
        let Ok(rd) = std::fs::read_dir(cache.join(sub)) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(
                !name.starts_with(".tmp-"),
                "staging directory left behind: {sub}/{name}"
            );
            let meta = e.path().join("meta.json");
            let text = std::fs::read_to_string(&meta)
                .unwrap_or_else(|_| panic!("{sub}/{name} has no meta.json"));
            serde_json::from_str::<serde_json::Value>(&text)
                .unwrap_or_else(|e| panic!("{sub}/{name}/meta.json does not parse: {e}"));
        }
    }
}
