//! The paired test pairs samples of one round, never samples at one position (issue 28, item
//! 4): every sample records its run (session) and round, and a subject's samples cached by an
//! earlier run pair with nothing of this run's. Built with the fake OpenSSL of
//! tests/fake-openssl.

use crate::common;

use common::{fake_openssl_repo, perfbisect, stderr, typed};
use perfbisect::measure::runner::Sample;
use perfbisect::report::compare::CompareReport;
use std::fs;
use std::path::Path;

fn compare(cache: &Path, repo: &Path, a: &str, b: &str, samples: &str) -> CompareReport {
    let o = perfbisect(cache)
        .arg("--kernels-dir")
        .arg(common::test_kernels())
        .args(["compare", "--repo"])
        .arg(repo)
        .args(["--tool", "fakework", "--duration", "0.02"])
        .args(["--samples", samples, "--max-samples", samples])
        .args(["--format", "json", a, b])
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}: {}", o.status, stderr(&o));
    typed(&o)
}

/// Drops the last sample of the cached side whose first sample is `first_us` (as a run
/// interrupted before that sample would have left it), returning how many lines it kept.
fn drop_last_sample(cache: &Path, first_us: f64) -> usize {
    for e in fs::read_dir(cache.join("samples")).unwrap().flatten() {
        let text = fs::read_to_string(e.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let first: Sample = serde_json::from_str(lines[0]).unwrap();
        if first.us_per_op == first_us {
            let kept = &lines[..lines.len() - 1];
            fs::write(e.path(), kept.join("\n") + "\n").unwrap();
            return kept.len();
        }
    }
    panic!("no cached samples start with {first_us}");
}

#[test]
fn samples_pair_by_round_not_by_position() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    let ids = fake_openssl_repo(
        &repo,
        &[
            ("a", &[("fake_cost.h", "#define FAKE_COST 200\n")]),
            ("b", &[("fake_cost.h", "#define FAKE_COST 220\n")]),
        ],
    );
    let cache = d.path().join("cache");
    // One run: A and B side by side in the same 6 rounds.
    let j = compare(&cache, &repo, &ids[0], &ids[1], "6");
    assert_eq!(j.comparison.pairs, 6, "{j:?}");
    // As if that run had been stopped before B's sixth sample.
    assert_eq!(drop_last_sample(&cache, j.b_samples_us[0]), 5);
    // The next run takes A's 7th to 9th and B's 6th to 9th: both hold 9, but A's 7th was
    // taken beside B's 6th. The pairs are the 5 rounds of the first run and the 3 rounds of
    // this one in which both were sampled (by position, all 9 would be).
    let j = compare(&cache, &repo, &ids[0], &ids[1], "9");
    assert_eq!((j.a_n, j.b_n), (9, 9), "{j:?}");
    assert_eq!(j.comparison.pairs, 8, "{j:?}");
}
