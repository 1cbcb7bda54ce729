//! A revision with patch files applied (`REV+FILE…`, issue 29): built in a work tree like any
//! revision, cached under the commit and the patches' hashes, named with both in results;
//! a patch that does not apply is an error that leaves nothing in the cache. Built with the
//! fake OpenSSL of tests/fake-openssl.

use crate::common;

use common::{assert_usage_error, fake_openssl_repo, perfbisect, published_builds, stderr, typed};
use perfbisect::analysis::stats::Verdict;
use perfbisect::build::builds::BuildMeta;
use perfbisect::report::compare::CompareReport;
use perfbisect::report::explain::ExplainReport;
use std::fs;
use std::path::Path;
use std::process::Output;

fn pb(cache: &Path, dir: &Path, args: &[&str]) -> Output {
    perfbisect(cache)
        .current_dir(dir)
        .arg("--kernels-dir")
        .arg(common::test_kernels())
        .args(args)
        .output()
        .unwrap()
}

fn json<T: serde::de::DeserializeOwned>(o: &Output) -> T {
    assert!(o.status.success(), "{:?}: {}", o.status, stderr(o));
    typed(o)
}

/// The cache's builds directory, staging directories included.
fn build_dirs(cache: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(cache.join("builds"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_patched_revision_is_built_cached_and_compared_with_its_revision() {
    let d = tempfile::tempdir().unwrap();
    let repo = d.path().join("repo");
    fake_openssl_repo(
        &repo,
        &[("base", &[("fake_cost.h", "#define FAKE_COST 200\n")])],
    );
    let slow = "--- a/fake_cost.h\n+++ b/fake_cost.h\n@@ -1 +1 @@\n-#define FAKE_COST 200\n+#define FAKE_COST 2000\n";
    fs::write(d.path().join("slow.patch"), slow).unwrap();
    fs::write(
        d.path().join("stale.patch"),
        slow.replace("200\n+", "300\n+"),
    )
    .unwrap();
    fs::write(d.path().join("notes.txt"), "not a patch\n").unwrap();
    let cache = d.path().join("cache");
    let r = repo.to_str().unwrap();
    // compare or verify with a quick, loose schedule: the patch makes fakework 10x slower.
    let measure = |command: &str, subjects: &[&str]| {
        let mut args = vec![
            command,
            "--repo",
            r,
            "--tool",
            "fakework",
            "--duration",
            "0.05",
            "--alpha",
            "0.05",
            "--min-effect",
            "50%",
            "--format",
            "json",
        ];
        args.extend(subjects);
        pb(&cache, d.path(), &args)
    };
    let compare = |b: &str| measure("compare", &["HEAD", b]);

    let o = compare("HEAD+slow.patch");
    let j: CompareReport = json(&o);
    assert_eq!(j.verdict, Verdict::Slower, "{j:?}");
    assert_eq!(j.b, "HEAD+slow.patch");
    assert_eq!(j.a_commit, j.b_commit);
    assert_eq!(j.b_patches[0].name, "slow.patch", "{j:?}");
    assert_eq!(j.b_patches[0].sha256.len(), 64);
    assert!(j.a_patches.is_empty(), "{j:?}");
    // The JSON contract: a side without patches has no `a_patches` key at all.
    let raw: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(raw.get("a_patches").is_none(), "{raw}");
    let entries = published_builds(&cache);
    assert_eq!(entries.len(), 2, "{entries:?}");
    let patched = entries
        .iter()
        .find(|e| e.file_name().unwrap().to_string_lossy().contains('+'))
        .expect("an entry keyed by the patches");
    let meta: BuildMeta =
        serde_json::from_slice(&fs::read(patched.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta.patches[0].name, "slow.patch", "{meta:?}");
    assert!(meta.ok);

    // The same patch again builds nothing.
    let before = build_dirs(&cache);
    let o = compare("HEAD+slow.patch");
    json::<CompareReport>(&o);
    assert!(!stderr(&o).contains("built "), "{}", stderr(&o));
    assert_eq!(build_dirs(&cache), before);

    // verify of a patched revision: against the revision without the patch.
    let o = measure("verify", &["HEAD+slow.patch"]);
    let j: CompareReport = json(&o);
    assert_eq!((j.a.as_str(), j.b.as_str()), ("HEAD", "HEAD+slow.patch"));
    assert_eq!(j.verdict, Verdict::Slower, "{j:?}");

    // explain of a patched revision: its instructions against the revision without it.
    let o = pb(
        &cache,
        d.path(),
        &[
            "explain",
            "--repo",
            r,
            "--tool",
            "fakework",
            "--duration",
            "0.2",
            "--format",
            "json",
            "HEAD+slow.patch",
        ],
    );
    let j: ExplainReport = json(&o);
    assert_eq!(
        (j.before.as_str(), j.after.as_str()),
        ("HEAD", "HEAD+slow.patch")
    );
    let work = (j.diff.functions.iter())
        .find(|f| f.function == "fake_work")
        .unwrap_or_else(|| panic!("{j:?}"));
    let ratio = work.self_after / work.self_before;
    assert!(
        (9.0..11.0).contains(&ratio),
        "FAKE_COST 200 -> 2000: {work:?}"
    );

    // A patch that does not apply: one line naming the file and the hunk; nothing cached.
    let o = compare("HEAD+stale.patch");
    assert_usage_error(&o, "stale.patch does not apply to HEAD (");
    assert!(
        stderr(&o).contains("patch failed: fake_cost.h:1"),
        "{}",
        stderr(&o)
    );
    assert_eq!(build_dirs(&cache), before);

    for (subject, why) in [
        (
            "HEAD+slow.patch+slow.patch",
            "patch slow.patch is given twice",
        ),
        ("HEAD+notes.txt", "is not a patch"),
    ] {
        assert_usage_error(&compare(subject), why);
    }
    // A search runs over commits: a patched end is refused, and says where patches go.
    let o = pb(
        &cache,
        d.path(),
        &[
            "bisect",
            "--repo",
            r,
            "--tool",
            "fakework",
            "HEAD..HEAD+slow.patch",
        ],
    );
    assert_usage_error(
        &o,
        "a revision with patches (REV+FILE) is measured by run, compare",
    );
    assert_eq!(build_dirs(&cache), before);
}
