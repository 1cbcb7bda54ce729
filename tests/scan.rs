//! `scan` end to end on a small fake OpenSSL (tests/fake-openssl, built in well under a second
//! per commit): a slowdown and its undo whose range ends agree, which a bisect cannot see.

use crate::common;

use common::{copy_tree, git, perfbisect, stderr, stdout, test_kernels, typed, FAST_SEARCH};
use perfbisect::report::bisect::BisectReport;
use perfbisect::report::scan::{ScanReport, SCAN_KIND};
use std::fs;
use std::path::Path;
use std::process::Output;

/// The fake OpenSSL with one commit per cost (fake_work() loops per call); returns the ids.
fn fake_repo(dir: &Path, costs: &[u32]) -> Vec<String> {
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake-openssl"),
        dir,
    );
    git(dir, &["init", "-q", "-b", "main"]);
    let mut ids = Vec::new();
    for (i, cost) in costs.iter().enumerate() {
        fs::write(
            dir.join("fake_cost.h"),
            format!("#define FAKE_COST {cost}\n"),
        )
        .unwrap();
        fs::write(dir.join("fake-label"), format!("commit {i}\n")).unwrap();
        fs::write(dir.join("fake-make-sleep"), "0\n").unwrap();
        fs::write(dir.join("fake-make-noise"), "0\n").unwrap();
        git(dir, &["add", "-A"]);
        let msg = format!("commit {i}: cost {cost}");
        git(dir, &["commit", "-q", "--allow-empty", "-m", &msg]);
        ids.push(git(dir, &["rev-parse", "HEAD"]).trim().to_string());
    }
    ids
}

/// A quick search (`common::FAST_SEARCH`) of `range` in `repo`.
fn args(cmd: &str, repo: &Path, range: &str) -> Vec<String> {
    let tail = ["--repo", repo.to_str().unwrap(), range];
    (std::iter::once(cmd)
        .chain(FAST_SEARCH.iter().copied())
        .chain(tail))
    .map(String::from)
    .collect()
}

fn run(cache: &Path, a: &[String], extra: &[&str]) -> Output {
    let mut c = perfbisect(cache);
    c.arg("--kernels-dir").arg(test_kernels());
    c.args(a).args(extra).output().unwrap()
}

fn json_of<T: serde::de::DeserializeOwned>(o: &Output) -> T {
    assert!(
        o.status.success(),
        "failed: {:?}\nstdout: {}\nstderr: {}",
        o.status,
        stdout(o),
        stderr(o)
    );
    typed(o)
}

#[test]
fn scan_finds_a_slowdown_and_its_undo_synthetic_repo() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, cache) = (tmp.path().join("repo"), tmp.path().join("cache"));
    // fast 0-3, slow 4-7, fast 8-12: the ends agree
    let costs = [
        200, 200, 200, 200, 2000, 2000, 2000, 2000, 200, 200, 200, 200, 200,
    ];
    let ids = fake_repo(&repo, &costs);
    let range = format!("{}..{}", ids[0], ids[12]);

    // A bisect sees equal ends and stops.
    let b: BisectReport = json_of(&run(
        &cache,
        &args("bisect", &repo, &range),
        &["--format", "json"],
    ));
    assert_eq!(b.outcome, "no_change", "{b:?}");

    // The scan: a grid of 5 (0, 3, 6, 9, 12), both changes found and paired.
    let o = run(
        &cache,
        &args("scan", &repo, &range),
        &["--grid", "5", "--format", "json"],
    );
    let err = stderr(&o);
    let j: ScanReport = json_of(&o);
    assert_eq!(j.kind, SCAN_KIND);
    assert!(
        err.contains("builds for the grid: 5 needed, 2 in the cache, 3 to build"),
        "{err}"
    );
    // Each change is told as soon as it is confirmed; the ends agree, so without a share.
    let told: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("change point confirmed:"))
        .collect();
    assert_eq!(told.len(), 2, "{err}");
    assert!(told[0].contains(&ids[4][..10]), "{told:?}");
    assert!(told[1].contains(&ids[8][..10]), "{told:?}");
    assert!(
        told.iter()
            .all(|l| l.contains("the range's ends did not move")),
        "{told:?}"
    );
    // Nothing was cached for the scan, so all it holds it took now: commits with byte-identical
    // libraries (most of these) share one pool, counted once.
    assert_eq!(j.samples, j.samples_taken_now);
    let grid: Vec<usize> = j.grid.iter().map(|g| g.index).collect();
    assert_eq!(grid, [0, 3, 6, 9, 12]);
    assert_eq!(j.segments.len(), 3, "{:?}", j.segments);
    let confirmed: Vec<(usize, &str)> = (j.changes.iter())
        .filter(|c| c.point.confirmed)
        .map(|c| (c.index, c.point.info.commit.as_str()))
        .collect();
    assert_eq!(
        confirmed,
        [(4, ids[4].as_str()), (8, ids[8].as_str())],
        "{:?}",
        j.intervals
    );
    // The undo pairs the two change points by their place in `changes`, which also lists any
    // located point that is no change point (a pair of byte-identical builds the noise sent the
    // search to, say): read through to the commits.
    let cancels = &j.cancels;
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    let at = |i: usize| j.changes[i].index;
    assert_eq!(
        (at(cancels[0].change), at(cancels[0].undone_by)),
        (4, 8),
        "{cancels:?}"
    );
    let entered = j.intervals.iter().filter(|i| i.entered).count();
    assert!((2..=4).contains(&entered), "{:?}", j.intervals);
    assert!(j.family_alpha <= 0.2 + 1e-9);

    // Text with -v, via bisect --scan: the grid is cached now (said on stderr); the undo is said
    // in words in the details.
    let o = run(
        &cache,
        &args("bisect", &repo, &range),
        &["--scan", "--grid", "5", "-v"],
    );
    let out = format!("{}{}", stdout(&o), stderr(&o));
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("builds for the grid: 5 needed, 5 in the cache, 0 to build"),
        "{out}"
    );
    assert!(
        out.contains("undone") && out.contains("cancelling:"),
        "{out}"
    );
    assert!(out.contains("not searched") || entered == 4, "{out}");

    // Bad input: one line, exit 2.
    let o = run(&cache, &args("scan", &repo, &range), &["--grid", "2"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run(
        &cache,
        &args("bisect", &repo, &range),
        &["--scan", "--format", "jsonl"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}
