//! `perfbisect report html`: one page from the JSON results of bisect,
//! compare, matrix and gate (tests/fixtures/report, kept equal to the
//! renderers' fixtures by a unit test), and its bad inputs.

use crate::common;
use common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/report")
        .join(name)
}

fn report_html(
    cache: &Path,
    files: &[PathBuf],
    out: &Path,
    extra: &[&str],
) -> std::process::Output {
    perfbisect(cache)
        .args(["report", "html"])
        .args(files)
        .arg("-o")
        .arg(out)
        .args(extra)
        .env_remove("PERFBISECT_COMMIT_URL")
        .output()
        .unwrap()
}

#[test]
fn one_page_from_every_kind_of_result() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("site");
    let files: Vec<PathBuf> = [
        "bisect.json",
        "bisect-sparse.json",
        "compare.json",
        "matrix.json",
        "gate.json",
        "scan.json",
    ]
    .iter()
    .map(|f| fixture(f))
    .collect();
    let o = report_html(
        d.path(),
        &files,
        &out,
        &[
            "--commit-url",
            "https://github.com/openssl/openssl/commit/{sha}",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    // Summary first, then tables, plots, and how to reproduce.
    let at = |s: &str| page.find(s).unwrap_or_else(|| panic!("no {s}"));
    assert!(at("<h2>Summary</h2>") < at("<h2>Tables</h2>"));
    assert!(at("<h2>Tables</h2>") < at("<h2>Plots</h2>"));
    assert!(at("<h2>Plots</h2>") < at("<h2>How to reproduce</h2>"));
    for heading in ["bisect: ", "compare: ", "matrix: ", "gate: ", "scan: "] {
        assert!(page.contains(&format!("<h3>{heading}")), "{heading}");
    }
    // Two bisect profiles, one matrix plot and the scan's profile, inline.
    assert_eq!(page.matches("<svg").count(), 4);
    assert!(
        page.contains("fitted level"),
        "the scan's step model is drawn"
    );
    // Self-contained: no script, no stylesheet or image fetched.
    for fetch in ["<script", "<link", "<img", "src=", "@import", "url("] {
        assert!(!page.contains(fetch), "{fetch}");
    }
    assert!(page.contains("<a href=\"https://github.com/openssl/openssl/commit/"));
    assert!(page.contains("look up &lt;every&gt; time &amp; &quot;cache&quot;"));
}

/// A bisect result written before results carried a "kind" (and the
/// cache's record of a bisect, as `perfbisect log` lists it) still renders.
#[test]
fn results_without_kind_are_recognised_by_shape() {
    let d = tempfile::tempdir().unwrap();
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("bisect.json")).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("kind");
    let old = d.path().join("old-bisect.json");
    std::fs::write(&old, v.to_string()).unwrap();
    let saved = d.path().join("saved.json");
    let record = serde_json::json!({
        "id": "0123456789abcdef", "state": "finished", "command": "perfbisect bisect …",
        "updated": 0, "result": v,
    });
    std::fs::write(&saved, record.to_string()).unwrap();
    let mut c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("compare.json")).unwrap()).unwrap();
    c.as_object_mut().unwrap().remove("kind");
    let old_compare = d.path().join("old-compare.json");
    std::fs::write(&old_compare, c.to_string()).unwrap();

    let out = d.path().join("site");
    let o = report_html(d.path(), &[old, saved, old_compare], &out, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert_eq!(
        page.matches("<h3>bisect: ").count(),
        2 * 4,
        "two bisects, each in summary, tables, plots and reproduce"
    );
    assert!(page.contains("<h3>compare: "));
    assert!(!page.contains("<a href"), "no --commit-url, no links");
}

#[test]
fn bad_inputs_exit_2_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("site");

    let o = report_html(d.path(), &[d.path().join("missing.json")], &out, &[]);
    assert_usage_error(&o, "cannot read");

    let text = d.path().join("notes.txt");
    std::fs::write(&text, "not json at all").unwrap();
    let o = report_html(d.path(), &[text], &out, &[]);
    assert_usage_error(
        &o,
        "is not a perfbisect bisect, scan, compare/verify, matrix or gate result",
    );

    // A real JSON result, but of `run`: not one a report page shows.
    let run = perfbisect(d.path())
        .args([
            "run",
            "--tool",
            "noop",
            "--samples",
            "1",
            "--duration",
            "0.05",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let run_json = d.path().join("run.json");
    std::fs::write(&run_json, &run.stdout).unwrap();
    let o = report_html(d.path(), &[fixture("gate.json"), run_json], &out, &[]);
    assert_usage_error(&o, "run.json is not a perfbisect bisect");

    let o = report_html(
        d.path(),
        &[fixture("gate.json")],
        &out,
        &["--commit-url", "https://example.org/commit/"],
    );
    assert_usage_error(&o, "{sha}");
    assert!(
        !out.join("index.html").exists(),
        "nothing written on an error"
    );
}

/// A result a newer perfbisect wrote (`schema` above this one's) is refused by every reader of
/// results, in one line naming the file and both versions; `log` skips such a record with a
/// warning and lists the rest.
#[test]
fn results_of_a_newer_schema_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let newer = |name: &str, to: &Path| {
        let text = std::fs::read_to_string(fixture(name)).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["schema"] = 999.into();
        std::fs::write(to, v.to_string()).unwrap();
        to.to_path_buf()
    };
    let refused = |o: &std::process::Output, file: &Path| {
        assert_usage_error(o, &format!("{} has result schema 999", file.display()));
        assert!(stderr(o).contains("newer than schema 1 "), "{}", stderr(o));
    };

    let bisect = newer("bisect.json", &d.path().join("bisect.json"));
    let o = report_html(
        d.path(),
        std::slice::from_ref(&bisect),
        &d.path().join("site"),
        &[],
    );
    refused(&o, &bisect);

    let gate = newer("gate.json", &d.path().join("gate.json"));
    let o = perfbisect(d.path())
        .args(["report", "merge"])
        .arg(fixture("gate.json"))
        .arg(&gate)
        .output()
        .unwrap();
    refused(&o, &gate);

    let compare = newer("compare.json", &d.path().join("compare.json"));
    let o = perfbisect(d.path())
        .args(["simulate", "--trials", "1", "--noise-from"])
        .arg(&compare)
        .output()
        .unwrap();
    refused(&o, &compare);

    let cache = d.path().join("cache");
    std::fs::create_dir_all(cache.join("bisects")).unwrap();
    let record = serde_json::json!({
        "schema": 999, "id": "b1", "state": "finished", "command": "perfbisect bisect", "updated": 1
    });
    let record_path = cache.join("bisects/b1.json");
    std::fs::write(&record_path, record.to_string()).unwrap();
    let o = perfbisect(&cache).args(["log"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("{} has result schema 999", record_path.display())),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("b1"), "{}", stdout(&o));
}

/// The page in a real browser engine (Debian's chromium, which .ci/run installs):
/// scripts/screenshot-report renders it to a PNG. Without chromium the test fails, unless the
/// run says to skip it (PERFBISECT_SKIP_BROWSER=1): a check that skips itself silently would
/// pass without checking.
#[test]
fn page_renders_in_chromium() {
    let missing = std::process::Command::new("sh")
        .args(["-c", "command -v chromium"])
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true);
    if missing && std::env::var_os("PERFBISECT_SKIP_BROWSER").is_some() {
        eprintln!("PERFBISECT_SKIP_BROWSER is set and chromium is not installed: no browser check");
        return;
    }
    assert!(
        !missing,
        "chromium is not installed (scripts/setup installs it), or set PERFBISECT_SKIP_BROWSER=1 to skip this check"
    );
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("site");
    let o = report_html(
        d.path(),
        &[fixture("bisect.json"), fixture("matrix.json")],
        &out,
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let png = d.path().join("page.png");
    let s = std::process::Command::new(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/screenshot-report"),
    )
    .arg(&out)
    .arg(&png)
    .output()
    .unwrap();
    assert!(s.status.success(), "{}", stderr(&s));
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "a PNG");
    assert!(
        bytes.len() > 20_000,
        "a page with content, not a blank: {} bytes",
        bytes.len()
    );
}
