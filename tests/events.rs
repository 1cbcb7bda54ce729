//! A search's typed events as `--format jsonl` writes them, on the fake OpenSSL: one JSON
//! object per line as each happens — the builds, the decided steps, the confirmed change
//! point, each wave of samples, then the result — and a resumed run says what it took up from the cache.

use crate::common;

use common::{fake_openssl_repo, perfbisect, stderr, stdout, test_kernels, FAST_SEARCH};
use perfbisect::report::bisect::BisectReport;
use serde_json::Value;
use std::path::Path;

fn bisect(cache: &Path, repo: &Path, range: &str) -> std::process::Output {
    perfbisect(cache)
        .arg("--kernels-dir")
        .arg(test_kernels())
        .arg("bisect")
        .args(FAST_SEARCH)
        .args(["-v", "--format", "jsonl", "--repo"])
        .arg(repo)
        .arg(range)
        .output()
        .unwrap()
}

/// Each line's event name and data.
fn events(out: &str) -> Vec<(String, Value)> {
    out.lines()
        .map(|l| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"));
            let name = v.get("event").and_then(Value::as_str).unwrap_or_default();
            (
                name.to_string(),
                v.get("data").cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

/// Four commits of the fake OpenSSL under `dir`, the third ten times slower: the repository
/// and the commit ids, oldest first.
fn slower_third_commit(dir: &Path) -> (std::path::PathBuf, Vec<String>) {
    let repo = dir.join("repo");
    let slow: &[(&str, &str)] = &[("fake_cost.h", "#define FAKE_COST 2000\n")];
    let ids = fake_openssl_repo(
        &repo,
        &[
            ("base", &[("fake_cost.h", "#define FAKE_COST 200\n")]),
            ("one", &[("notes/1.txt", "1\n")]),
            ("slower", slow),
            ("three", &[("notes/3.txt", "3\n")]),
        ],
    );
    (repo, ids)
}

#[test]
fn a_bisect_tells_builds_steps_and_change_points_as_jsonl_events() {
    let d = tempfile::tempdir().unwrap();
    let (repo, ids) = slower_third_commit(d.path());
    let cache = d.path().join("cache");
    let range = format!("{}..{}", ids[0], ids[3]);
    let o = bisect(&cache, &repo, &range);
    assert!(o.status.success(), "{}", stderr(&o));
    let ev = events(&stdout(&o));
    let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
    // Every build this run made is an event of its own, before the steps that needed it.
    let built: Vec<&Value> = (ev.iter())
        .filter(|(n, d)| n == "build" && d["kind"] == "built")
        .map(|(_, d)| d)
        .collect();
    assert!(built.len() >= 3, "{names:?}");
    assert!(built.iter().all(|d| d["ok"] == true), "{built:?}");
    let first_step = names.iter().position(|n| *n == "step").expect("steps");
    assert!(names[..first_step].contains(&"build"), "{names:?}");
    // Each wave of samples is told once answered: what it took, and where.
    let waves: Vec<&Value> = (ev.iter())
        .filter(|(n, _)| n == "wave")
        .map(|(_, d)| d)
        .collect();
    assert!(!waves.is_empty(), "{names:?}");
    assert!(
        (waves.iter()).all(|w| w["samples"].as_u64() > Some(0) && w["hosts"].is_array()),
        "{waves:?}"
    );
    let confirmed: Vec<&Value> = (ev.iter())
        .filter(|(n, _)| n == "confirmed")
        .map(|(_, d)| d)
        .collect();
    assert_eq!(confirmed.len(), 1, "{names:?}");
    assert_eq!(confirmed[0]["commit"], ids[2].as_str());
    // The result comes last, as the library's own type.
    let (last, data) = ev.last().unwrap();
    assert_eq!(last, "done");
    let report: BisectReport = serde_json::from_value(data.clone()).unwrap();
    assert_eq!(report.changes.len(), 1);
    assert_eq!(report.changes[0].info.commit, ids[2]);

    // Run again: nothing is built, and the samples are taken up from the cache, said as such.
    let o = bisect(&cache, &repo, &range);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = events(&stdout(&o));
    assert!(
        !again
            .iter()
            .any(|(n, d)| n == "build" && d["kind"] == "built"),
        "{again:?}"
    );
    assert!(
        stderr(&o).contains("sample(s) of") && stderr(&o).contains("from the cache"),
        "{}",
        stderr(&o)
    );

    // Samples another host took (a cache shared over NFS, a Slurm node that is gone) are
    // never pooled with this host's: with every cached sample renamed to another host, the
    // run takes all of its samples again.
    for e in std::fs::read_dir(cache.join("samples")).unwrap().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap();
        let moved: Vec<String> = (text.lines())
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v["host"] = "another-node".into();
                v.to_string()
            })
            .collect();
        std::fs::write(e.path(), moved.join("\n") + "\n").unwrap();
    }
    let o = bisect(&cache, &repo, &range);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stderr(&o).contains("from the cache"), "{}", stderr(&o));
    let (_, data) = events(&stdout(&o)).pop().unwrap();
    let report: BisectReport = serde_json::from_value(data).unwrap();
    assert_eq!(report.samples_taken_now, report.samples);
    assert_eq!(report.changes[0].info.commit, ids[2]);
}

/// The text result opens with the answer: its first line the range's change, its second the
/// change point (commit, date, change, subject); progress goes to stderr, so `-q` prints the
/// result alone, and `-v` adds the steps (stderr) and the details after the answer (stdout).
#[test]
fn a_text_bisect_answers_first_and_quietly_with_q() {
    let d = tempfile::tempdir().unwrap();
    let (repo, ids) = slower_third_commit(d.path());
    let cache = d.path().join("cache");
    let range = format!("{}..{}", ids[0], ids[3]);
    let text = |level: &[&str]| {
        let o = perfbisect(&cache)
            .arg("--kernels-dir")
            .arg(test_kernels())
            .arg("bisect")
            .args(FAST_SEARCH)
            .args(level)
            .arg("--repo")
            .arg(&repo)
            .arg(&range)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        (stdout(&o), stderr(&o))
    };
    let (out, err) = text(&[]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains(": slower +"), "{out}");
    assert!(
        lines[1].starts_with(&format!("  {}  ", &ids[2][..10])) && lines[1].ends_with(" slower"),
        "{out}"
    );
    assert!(lines.len() <= 12, "{out}");
    assert!(lines.last().unwrap().starts_with("reproduce: "), "{out}");
    // Progress on stderr: what is searched and the change point as it is confirmed, no steps.
    assert!(err.starts_with("bisecting "), "{err}");
    assert!(err.contains("change point confirmed: "), "{err}");
    assert!(!err.contains(" n="), "{err}");

    // Run again, the search is read back from the cache: the same answer, its cost aside.
    let answer = lines[..2].join("\n");
    let (quiet, quiet_err) = text(&["-q"]);
    assert!(quiet.starts_with(&answer), "{quiet}\nagainst\n{out}");
    assert_eq!(quiet_err, "", "-q: nothing but the result");

    let (verbose, verbose_err) = text(&["-v"]);
    assert!(verbose.starts_with(&answer), "{verbose}");
    assert!(
        verbose.contains("\ndetails:\n") && verbose.contains("result 1: culprit "),
        "{verbose}"
    );
    assert!(verbose_err.contains(" n="), "the steps: {verbose_err}");
}
