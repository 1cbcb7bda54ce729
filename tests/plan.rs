//! `perfbisect plan` on a cache of fixture build records: the figures are the medians of the
//! records of each class, every assumption names where it came from, and a missing figure is one
//! line naming the flag to give.

use crate::common;

use common::{perfbisect, stderr, stdout};
use perfbisect::build::builds::{BuildMeta, Incremental};
use std::path::Path;

/// A published entry's meta.json, as a build writes it.
fn record(cache: &Path, commit: &str, duration_s: f64, hit: Option<f64>, moved: Option<usize>) {
    let meta = BuildMeta {
        commit: commit.repeat(40)[..40].to_string(),
        summary: "fixture".into(),
        recipe: "default".into(),
        fingerprint: "0123456789abcdef".into(),
        version: "3.2.0-dev".parse().unwrap(),
        ok: true,
        error: None,
        created: 0,
        duration_s,
        ccache_hit_rate: hit,
        ccache_remote_hits: None,
        left_out: vec![],
        install_fallback: None,
        incremental: moved.map(|files| Incremental {
            from: "f".repeat(40),
            written: files,
            removed: 0,
            configured: false,
            kept: None,
        }),
        binaries: Default::default(),
        patches: vec![],
        checked: 1,
    };
    let dir = cache
        .join("builds")
        .join(format!("{}-default-0123456789abcdef", &meta.commit[..12]));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("meta.json"),
        serde_json::to_string_pretty(&meta).unwrap(),
    )
    .unwrap();
}

fn fixture_cache(cache: &Path) {
    // cold: 200, 250, 300 -> 250; warm: 40, 60 -> 50; near: 5, 7, 9 -> 7
    record(cache, "a", 200.0, Some(0.01), None);
    record(cache, "b", 250.0, None, None);
    record(cache, "c", 300.0, Some(0.0), None);
    record(cache, "d", 40.0, Some(0.98), None);
    record(cache, "e", 60.0, Some(1.0), None);
    record(cache, "1", 5.0, Some(0.5), Some(12));
    record(cache, "2", 7.0, Some(0.0), Some(30));
    record(cache, "3", 9.0, Some(1.0), Some(3));
    // left out: a partly warm ccache, a tree moved far
    record(cache, "4", 120.0, Some(0.3), None);
    record(cache, "5", 90.0, Some(0.1), Some(900));
}

fn plan(cache: &Path, args: &[&str]) -> std::process::Output {
    perfbisect(cache)
        .args(["plan", "--trials", "4"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_assumptions_name_the_records() {
    let d = tempfile::tempdir().unwrap();
    fixture_cache(d.path());
    let o = plan(d.path(), &["--nodes", "1,4"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let builds = d.path().canonicalize().unwrap().join("builds");
    let builds = builds.display();
    for line in [
        format!("cold build 250 s: median of 3 non-incremental builds with ccache hit rate < 10% in {builds} (from 200 s to 300 s)"),
        format!("warm-ccache build 50 s: median of 2 non-incremental builds with ccache hit rate >= 50% in {builds}"),
        format!("near build 7 s: median of 3 incremental builds that moved their tree by at most 200 files in {builds}"),
        "sample 0.265 s: --duration 0.25 s + 0.015 s per-sample process overhead, default (measured here".to_string(),
        "job overhead 1 s: default (Slurm submit to start".to_string(),
    ] {
        assert!(out.contains(&line), "missing {line:?} in:\n{out}");
    }
    // the table: 2 searches x 2 fleets x 2 ccache settings, then the goal
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("scan ") || l.starts_with("bisect "))
        .collect();
    assert_eq!(rows.len(), 8, "{out}");
    assert!(rows[0].contains(" 4000 ") && rows[0].contains(" shared "));
    assert!(out.contains("goal: a 4,000-commit scan"), "{out}");
}

#[test]
fn flags_win_over_records_and_json_says_so() {
    let d = tempfile::tempdir().unwrap();
    fixture_cache(d.path());
    let o = plan(
        d.path(),
        &[
            "--cold-build",
            "100",
            "--sample",
            "2",
            "--search",
            "bisect",
            "--format",
            "json",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let f = &v["figures"];
    assert_eq!(f["cold_build"]["seconds"], 100.0);
    assert_eq!(f["cold_build"]["source"]["flag"], "--cold-build");
    assert_eq!(f["warm_build"]["source"]["from"], "records");
    assert_eq!(f["warm_build"]["source"]["records"], 2);
    assert_eq!(f["sample"]["source"]["flag"], "--sample");
    let s = &v["searches"][0];
    assert_eq!(
        (s["search"]["kind"].as_str(), s["commits"].as_u64()),
        (Some("bisect"), Some(775))
    );
    assert_eq!(s["rows"].as_array().unwrap().len(), 6);
    // no scan of 4,000 commits was planned: the goal is not checked
    assert!(v["goal"]["met"].is_null());
}

#[test]
fn a_missing_figure_names_its_flag() {
    let d = tempfile::tempdir().unwrap();
    let o = plan(d.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.contains("no cold build recorded in") && e.contains("give --cold-build SECONDS"),
        "{e}"
    );
    // with --ccache shared no cold build is needed
    let o = plan(d.path(), &["--ccache", "shared", "--near-build", "8"]);
    assert!(
        stderr(&o).contains("give --warm-build SECONDS"),
        "{}",
        stderr(&o)
    );
    // bad input is one line and exit 2
    for bad in [
        &["--nodes", "4,4"][..],
        &["--search", "sort"],
        &["--search", "scan,scan"],
    ] {
        let o = plan(d.path(), bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert_eq!(stderr(&o).lines().count(), 1, "{bad:?}: {}", stderr(&o));
    }
}
